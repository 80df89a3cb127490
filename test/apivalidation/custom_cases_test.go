package apivalidation

// mutationWithoutKind is a Mutation operation of custom.yaml's schema
// without a kind.
const mutationWithoutKind = `
spec:
  workload:
    operations:
    - name: add-singer
      type: Mutation
      weight: 1
      custom:
        mutation:
          table: Singers`

// customRuns are bad Custom workloads: most need the DDL and SQL parsed,
// which only the BenchmarkRun webhook (customcheck.Run, as
// `spanbench run`) can do; the rest are CEL rules. Each names the field
// and, for a statement, the statement.
var customRuns = []badRun{
	// Three rules the API server held and `spanbench run` did not, found
	// by TestMutatedManifestsGetOneVerdict's seeds 1 and 3.
	{
		name: "custom-step-name-not-an-identifier",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: copy-genre
      type: Transaction
      weight: 1
      custom:
        steps:
        - name: "0"
          sql: SELECT Genre FROM Singers WHERE SingerId = @id
          params:
          - name: id
            key:
              table: Singers
              column: SingerId`,
		want: []cause{
			{"spec.workload.operations[0].custom.steps[0].name", "Invalid value: \"0\": spec.workload.operations[0].custom.steps[0].name in body should match '^[A-Za-z_][A-Za-z0-9_-]*$'"},
		},
	},
	{
		name: "custom-read-without-shape",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: albums
      type: ReadRows
      weight: 1
      rows: 5
      custom:
        read:
          table: Albums
          columns: [SingerId]`,
		want: []cause{
			{"<nil>", "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"},
			{"spec.workload.operations[0].custom.read.shape", "Required value"},
		},
	},
	// Found by TestMutatedManifestsGetOneVerdict's seed 6 (2,000 inputs):
	// a mutation's kind, left out or empty.
	{
		name:  "custom-mutation-without-kind",
		base:  "custom.yaml",
		patch: mutationWithoutKind,
		want: []cause{
			{"<nil>", "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"},
			{"spec.workload.operations[0].custom.mutation.kind", "Required value"},
		},
	},
	{
		name: "custom-mutation-kind-empty",
		base: "custom.yaml",
		patch: mutationWithoutKind + `
          kind: ""`,
		want: []cause{
			{"<nil>", "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"},
			{"spec.workload.operations[0].custom.mutation.kind", "Unsupported value: \"\": supported values: \"Insert\", \"Update\", \"Upsert\", \"Delete\""},
		},
	},
	{
		name: "operation-named-empty-beside-its-types-name",
		patch: `
spec:
  workload:
    operations:
    - name: read
      type: Read
      weight: 1
    - name: ""
      type: Read
      weight: 1`,
		want: []cause{
			{"spec.workload.operations", "Invalid value: \"array\": operations: names must be unique; name operations of the same type explicitly (an unnamed operation is named after its type, e.g. read-keys)"},
		},
	},
	{
		name: "custom-ddl-does-not-parse",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    custom:
      ddl:
      - CREATE TABLE Singers (SingerId INT64 NOT NULL, Name STRING(100), Genre STRING(20), Updated TIMESTAMP OPTIONS (allow_commit_timestamp = true)) PRIMARY KEY (SingerId)
      - CREATE TABLE Albums (SingerId INT64 NOT NULL,, AlbumId INT64) PRIMARY KEY (SingerId)
      - CREATE INDEX AlbumsByTitle ON Albums(Title)`,
		want: []cause{
			{"spec.workload.custom.ddl[1]", "Invalid value: \"CREATE TABLE Albums (SingerId INT64 NOT NULL,, AlbumId INT64) PRIMARY KEY (SingerId)\": does not parse: syntax error: statement:1:46: expected token: <ident>, but: ,"},
		},
	},
	{
		name: "custom-ddl-not-create",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    custom:
      ddl:
      - CREATE TABLE Singers (SingerId INT64 NOT NULL, Name STRING(100), Genre STRING(20), Updated TIMESTAMP OPTIONS (allow_commit_timestamp = true)) PRIMARY KEY (SingerId)
      - CREATE TABLE Albums (SingerId INT64 NOT NULL, AlbumId INT64 NOT NULL, Title STRING(MAX), Sales INT64) PRIMARY KEY (SingerId, AlbumId), INTERLEAVE IN PARENT Singers ON DELETE CASCADE
      - DROP INDEX AlbumsByTitle`,
		want: []cause{
			{"spec.workload.custom.ddl[2]", "Invalid value: \"DROP INDEX AlbumsByTitle\": only CREATE TABLE and CREATE INDEX are supported"},
		},
	},
	{
		name: "custom-ddl-parent-missing",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    custom:
      ddl:
      - CREATE TABLE Albums (SingerId INT64 NOT NULL, AlbumId INT64 NOT NULL, Title STRING(MAX), Sales INT64) PRIMARY KEY (SingerId, AlbumId), INTERLEAVE IN PARENT Singers ON DELETE CASCADE
      - CREATE TABLE Singers (SingerId INT64 NOT NULL, Name STRING(100), Genre STRING(20), Updated TIMESTAMP OPTIONS (allow_commit_timestamp = true)) PRIMARY KEY (SingerId)
      - CREATE INDEX AlbumsByTitle ON Albums(Title)`,
		want: []cause{
			{"spec.workload.custom.ddl[0]", "Invalid value: \"CREATE TABLE Albums (SingerId INT64 NOT NULL, AlbumId INT64 NOT NULL, Title STRING(MAX), Sales INT64) PRIMARY KEY (SingerId, AlbumId), INTERLEAVE IN PARENT Singers ON DELETE CASCADE\": table Albums: is interleaved in Singers, which no earlier statement creates"},
		},
	},
	{
		name: "custom-ddl-index-unknown-column",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    custom:
      ddl:
      - CREATE TABLE Singers (SingerId INT64 NOT NULL, Name STRING(100), Genre STRING(20), Updated TIMESTAMP OPTIONS (allow_commit_timestamp = true)) PRIMARY KEY (SingerId)
      - CREATE TABLE Albums (SingerId INT64 NOT NULL, AlbumId INT64 NOT NULL, Title STRING(MAX), Sales INT64) PRIMARY KEY (SingerId, AlbumId), INTERLEAVE IN PARENT Singers ON DELETE CASCADE
      - CREATE INDEX AlbumsByTitle ON Albums(Titel)`,
		want: []cause{
			{"spec.workload.custom.ddl[2]", "Invalid value: \"CREATE INDEX AlbumsByTitle ON Albums(Titel)\": index AlbumsByTitle: column Titel is not a column of table Albums"},
		},
	},
	{
		name: "custom-ddl-statement-too-long",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    custom:
      ddl:
      - CREATE TABLE Singers (SingerId INT64 NOT NULL, Name STRING(100), Genre STRING(20), Updated TIMESTAMP OPTIONS (allow_commit_timestamp = true)) PRIMARY KEY (SingerId)
      - CREATE TABLE Albums (SingerId INT64 NOT NULL, AlbumId INT64 NOT NULL, Title STRING(MAX), Sales INT64) PRIMARY KEY (SingerId, AlbumId), INTERLEAVE IN PARENT Singers ON DELETE CASCADE
      - CREATE INDEX AlbumsByTitle ON Albums(Title) --------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------`,
		want: []cause{
			{"<nil>", "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"},
			{"spec.workload.custom.ddl[2]", "Too long: may not be more than 16384 bytes"},
		},
	},
	{
		name: "custom-table-not-in-ddl",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    custom:
      tables:
      - name: Artists
        rows: 10
      - name: Albums
        rowsPerParent: 3`,
		want: []cause{
			{"spec.workload.custom.tables[0].name", "Not found: \"Artists\""},
			{"spec.workload.custom.tables[1].name", "Invalid value: \"Albums\": its parent Singers must be listed before it"},
		},
	},
	{
		name: "custom-table-without-dataset",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    custom:
      tables:
      - name: Singers
        rows: 10`,
		want: []cause{
			{"spec.workload.custom.tables", "Required value: table Albums of the DDL has no dataset: list it with rows or rowsPerParent"},
		},
	},
	{
		name: "custom-rows-on-interleaved-table",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    custom:
      tables:
      - name: Singers
        rows: 10
      - name: Albums
        rows: 30`,
		want: []cause{
			{"spec.workload.custom.tables[1].rows", "Forbidden: table Albums is interleaved in Singers; give its rowsPerParent"},
		},
	},
	{
		name: "custom-child-before-parent",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    custom:
      tables:
      - name: Albums
        rowsPerParent: 3
      - name: Singers
        rows: 10`,
		want: []cause{
			{"spec.workload.custom.tables[0].name", "Invalid value: \"Albums\": its parent Singers must be listed before it"},
		},
	},
	{
		name: "custom-generator-unknown-column",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    custom:
      tables:
      - name: Singers
        rows: 10
        columns:
        - name: Nick
          generator:
            type: UUID
      - name: Albums
        rowsPerParent: 3`,
		want: []cause{
			{"spec.workload.custom.tables[0].columns[0].name", "Not found: \"Nick\""},
		},
	},
	{
		name: "custom-generator-type-mismatch",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    custom:
      tables:
      - name: Singers
        rows: 10
        columns:
        - name: Name
          generator:
            type: Uniform
            min: 1
            max: 9
      - name: Albums
        rowsPerParent: 3`,
		want: []cause{
			{"spec.workload.custom.tables[0].columns[0].generator.type", "Invalid value: \"Uniform\": a Uniform generator produces INT64 or FLOAT64 or NUMERIC values; column Name is of type STRING"},
		},
	},
	{
		name: "custom-choice-not-of-column-type",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    custom:
      tables:
      - name: Singers
        rows: 10
      - name: Albums
        rowsPerParent: 3
        columns:
        - name: Sales
          generator:
            type: Choice
            choices:
            - value: lots
              weight: 1`,
		want: []cause{
			{"spec.workload.custom.tables[1].columns[0].generator.type", "Invalid value: \"Choice\": choice \"lots\" is not a value of type INT64, the type of column Sales"},
		},
	},
	{
		name: "custom-null-in-not-null-column",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    custom:
      tables:
      - name: Singers
        rows: 10
        columns:
        - name: SingerId
          generator:
            type: Sequence
            nullPercent: 5
      - name: Albums
        rowsPerParent: 3`,
		want: []cause{
			{"spec.workload.custom.tables[0].columns[0].generator.nullPercent", "Invalid value: 5: column SingerId is NOT NULL"},
		},
	},
	{
		name: "custom-commit-timestamp-without-option",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    custom:
      ddl:
      - CREATE TABLE Singers (SingerId INT64 NOT NULL, Name STRING(100), Genre STRING(20), Updated TIMESTAMP) PRIMARY KEY (SingerId)
      - CREATE TABLE Albums (SingerId INT64 NOT NULL, AlbumId INT64 NOT NULL, Title STRING(MAX), Sales INT64) PRIMARY KEY (SingerId, AlbumId), INTERLEAVE IN PARENT Singers ON DELETE CASCADE
      - CREATE INDEX AlbumsByTitle ON Albums(Title)`,
		want: []cause{
			{"spec.workload.custom.tables[0].columns[2].generator.type", "Invalid value: \"Timestamp\": a commit timestamp needs OPTIONS (allow_commit_timestamp = true) on column Updated"},
		},
	},
	{
		name: "custom-reference-not-a-key",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    custom:
      tables:
      - name: Singers
        rows: 10
        columns:
        - name: Genre
          generator:
            type: Reference
            reference:
              table: Albums
              column: Title
      - name: Albums
        rowsPerParent: 3`,
		want: []cause{
			{"spec.workload.custom.tables[0].columns[0].generator.reference.column", "Invalid value: \"Title\": must be a primary key column of Albums (SingerId, AlbumId): only keys are chosen"},
		},
	},
	{
		name: "custom-query-unknown-column",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: op
      type: Query
      weight: 1
      custom:
        sql: "SELECT Nick FROM Singers WHERE SingerId = @id"
        params:
        - name: id
          key:
            table: Singers
            column: SingerId`,
		want: []cause{
			{"spec.workload.operations[0].custom.sql", "Invalid value: \"SELECT Nick FROM Singers WHERE SingerId = @id\": column Nick is not a column of Singers"},
		},
	},
	{
		name: "custom-query-unknown-table",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: op
      type: Query
      weight: 1
      custom:
        sql: "SELECT Name FROM Artists WHERE SingerId = @id"
        params:
        - name: id
          key:
            table: Singers
            column: SingerId`,
		want: []cause{
			{"spec.workload.operations[0].custom.sql", "Invalid value: \"SELECT Name FROM Artists WHERE SingerId = @id\": table Artists is not created by the DDL"},
		},
	},
	{
		name: "custom-query-does-not-parse",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: op
      type: Query
      weight: 1
      custom:
        sql: "SELEC Name FROM Singers WHERE SingerId = @id"
        params:
        - name: id
          key:
            table: Singers
            column: SingerId`,
		want: []cause{
			{"spec.workload.operations[0].custom.sql", "Invalid value: \"SELEC Name FROM Singers WHERE SingerId = @id\": does not parse: syntax error: statement:1:1: unexpected token: <ident>"},
		},
	},
	{
		name: "custom-unbound-parameter",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: op
      type: Query
      weight: 1
      custom:
        sql: "SELECT Name FROM Singers WHERE SingerId = @id AND Genre = @genre"
        params:
        - name: id
          key:
            table: Singers
            column: SingerId`,
		want: []cause{
			{"spec.workload.operations[0].custom.params", "Required value: parameter @genre of the statement is not bound to a generator, a key or an earlier step: SELECT Name FROM Singers WHERE SingerId = @id AND Genre = @genre"},
		},
	},
	{
		name: "custom-binding-without-parameter",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: op
      type: Query
      weight: 1
      custom:
        sql: "SELECT Name FROM Singers WHERE SingerId = 1"
        params:
        - name: id
          key:
            table: Singers
            column: SingerId`,
		want: []cause{
			{"spec.workload.operations[0].custom.params[0].name", "Invalid value: \"id\": the statement has no parameter @id: SELECT Name FROM Singers WHERE SingerId = 1"},
		},
	},
	{
		name: "custom-query-with-dml",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: op
      type: Query
      weight: 1
      custom:
        sql: "DELETE FROM Singers WHERE SingerId = @id"
        params:
        - name: id
          key:
            table: Singers
            column: SingerId`,
		want: []cause{
			{"spec.workload.operations[0].custom.sql", "Invalid value: \"DELETE FROM Singers WHERE SingerId = @id\": a Query operation needs a query; use a DML operation for INSERT, UPDATE or DELETE"},
		},
	},
	{
		name: "custom-dml-with-query",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: op
      type: DML
      weight: 1
      custom:
        sql: "SELECT Name FROM Singers WHERE SingerId = @id"
        params:
        - name: id
          key:
            table: Singers
            column: SingerId`,
		want: []cause{
			{"spec.workload.operations[0].custom.sql", "Invalid value: \"SELECT Name FROM Singers WHERE SingerId = @id\": DML needs an INSERT, UPDATE or DELETE statement; use a Query operation for a query"},
		},
	},
	{
		name: "custom-dml-unknown-column",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: op
      type: DML
      weight: 1
      custom:
        sql: "UPDATE Singers SET Nick = 'x' WHERE SingerId = @id"
        params:
        - name: id
          key:
            table: Singers
            column: SingerId`,
		want: []cause{
			{"spec.workload.operations[0].custom.sql", "Invalid value: \"UPDATE Singers SET Nick = 'x' WHERE SingerId = @id\": column Nick is not a column of Singers"},
		},
	},
	{
		name: "custom-param-generator-type-mismatch",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: op
      type: DML
      weight: 1
      custom:
        sql: "UPDATE Albums SET Sales = @delta WHERE SingerId = @id"
        params:
        - name: id
          key:
            table: Singers
            column: SingerId
        - name: delta
          generator:
            type: String
            maxLength: 8`,
		want: []cause{
			{"spec.workload.operations[0].custom.params[1].generator.type", "Invalid value: \"String\": a String generator produces STRING or JSON values; column Sales is of type INT64"},
		},
	},
	{
		name: "custom-param-key-type-mismatch",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: op
      type: Query
      weight: 1
      custom:
        sql: "SELECT SingerId FROM Singers WHERE Name = @id"
        params:
        - name: id
          key:
            table: Singers
            column: SingerId`,
		want: []cause{
			{"spec.workload.operations[0].custom.params[0].key", "Invalid value: \"Singers.SingerId\": is of type INT64; the parameter is compared with or written to Name, of type STRING"},
		},
	},
	{
		name: "custom-from-outside-transaction",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: op
      type: Query
      weight: 1
      custom:
        sql: "SELECT Name FROM Singers WHERE SingerId = @id"
        params:
        - name: id
          from: src.SingerId`,
		want: []cause{
			{"spec.workload.operations[0].custom.params[0].from", "Forbidden: only a Transaction's steps can use values of earlier steps"},
		},
	},
	{
		name: "custom-read-unknown-index",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: op
      type: ReadRows
      weight: 1
      custom:
        read:
          table: Albums
          index: AlbumsBySales
          columns: [Title]
          shape: Key`,
		want: []cause{
			{"spec.workload.operations[0].custom.read.index", "Invalid value: \"AlbumsBySales\": is not an index of Albums in the DDL"},
		},
	},
	{
		name: "custom-read-unknown-column",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: op
      type: ReadRows
      weight: 1
      custom:
        read:
          table: Albums
          columns: [Title, Year]
          shape: KeyList`,
		want: []cause{
			{"spec.workload.operations[0].custom.read.columns[1]", "Invalid value: \"Year\": is not a column of Albums"},
		},
	},
	{
		name: "custom-mutation-unknown-table",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: op
      type: Mutation
      weight: 1
      custom:
        mutation:
          kind: Upsert
          table: Artists`,
		want: []cause{
			{"spec.workload.operations[0].custom.mutation.table", "Not found: \"Artists\""},
		},
	},
	{
		name: "custom-step-uses-later-step",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: op
      type: Transaction
      weight: 1
      custom:
        steps:
        - name: src
          sql: SELECT Genre FROM Singers WHERE SingerId = @id
          params:
          - name: id
            from: dst.SingerId
        - name: dst
          sql: SELECT SingerId FROM Singers WHERE Genre = 'rock'`,
		want: []cause{
			{"spec.workload.operations[0].custom.steps[0].params[0].from", "Invalid value: \"dst.SingerId\": dst is not an earlier step of the transaction"},
		},
	},
	{
		name: "custom-step-unknown-column",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: op
      type: Transaction
      weight: 1
      custom:
        steps:
        - name: src
          sql: SELECT Genre FROM Singers WHERE SingerId = 1
        - name: dst
          sql: UPDATE Singers SET Genr = @g WHERE SingerId = 2
          params:
          - name: g
            from: src.Genre`,
		want: []cause{
			{"spec.workload.operations[0].custom.steps[1].sql", "Invalid value: \"UPDATE Singers SET Genr = @g WHERE SingerId = 2\": column Genr is not a column of Singers"},
		},
	},
	{
		name: "custom-type-without-custom",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    custom: null`,
		want: []cause{
			{"spec.workload.custom", "Invalid value: \"object\": custom: required for type Custom, and only for it"},
		},
	},
	{
		name: "custom-fields-on-ycsb",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    type: YCSB
    operations:
    - type: Read
      weight: 1`,
		want: []cause{
			{"spec.workload.custom", "Invalid value: \"object\": custom: required for type Custom, and only for it"},
		},
	},
	{
		name: "custom-operation-unnamed",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    operations:
    - type: Mutation
      weight: 1
      custom:
        mutation:
          kind: Delete
          table: Singers`,
		want: []cause{
			{"spec.workload.operations[0].name", "Invalid value: \"object\": name: required for the operations of a Custom workload"},
		},
	},
	{
		name: "custom-operation-body-of-another-type",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: op
      type: ReadRows
      weight: 1
      custom:
        sql: SELECT 1`,
		want: []cause{
			{"spec.workload.operations[0].custom", "Invalid value: \"object\": custom: Query and DML need sql, ReadRows read, Mutation mutation, Transaction steps"},
		},
	},
	{
		name: "custom-staleness-on-transaction",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: op
      type: DML
      weight: 1
      staleness:
        max: 10s
      custom:
        sql: DELETE FROM Singers WHERE TRUE`,
		want: []cause{
			{"spec.workload.operations[0].staleness", "Invalid value: \"object\": staleness: only reads can be stale; writes, ReadModifyWrite, NewOrder, Payment, Delivery, DML, Mutation and Transaction run in read-write transactions"},
		},
	},
	{
		name: "custom-uniform-without-range",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    custom:
      tables:
      - name: Singers
        rows: 10
        columns:
        - name: SingerId
          generator:
            type: Uniform
            min: 5
      - name: Albums
        rowsPerParent: 3`,
		want: []cause{
			{"spec.workload.custom.tables[0].columns[0].generator", "Invalid value: \"object\": generator: Uniform and Zipfian need min <= max"},
		},
	},
	{
		name: "custom-dataset-rows",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    dataset:
      rows: 5`,
		want: []cause{
			{"spec.workload.dataset.rows", "Forbidden: a Custom workload's rows are given per table, in custom.tables"},
		},
	},
	{
		name: "custom-batch-over-commit-limit",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    dataset:
      batchRows: 5000
    custom:
      tables:
      - name: Singers
        rows: 100
      - name: Albums
        rowsPerParent: 10`,
		want: []cause{
			{"spec.workload.dataset.batchRows", "Invalid value: 5000: one batch is one commit: 5000 units of this Custom dataset are 270000 mutations, more than the 80000 Cloud Spanner takes; use at most 1481"},
		},
	},
	{
		name: "custom-reference-on-key-column",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    custom:
      tables:
      - name: Singers
        rows: 10
        columns:
        - name: SingerId
          generator:
            type: Reference
            reference:
              table: Singers
              column: SingerId
      - name: Albums
        rowsPerParent: 3`,
		want: []cause{
			{"spec.workload.custom.tables[0].columns[0].generator.type", "Invalid value: \"Reference\": column SingerId is part of the primary key of Singers; a key column cannot be a Reference (interleave the table instead)"},
		},
	},
}
