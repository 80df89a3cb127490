package apivalidation

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// customPGRuns are bad Custom workloads in Spanner's PostgreSQL dialect
// (target.dialect: PostgreSQL), parsed with libpg_query by the BenchmarkRun
// webhook and `spanbench run` alike. Each names the field and, for a
// statement, the statement.
var customPGRuns = []badRun{
	{
		name: "custom-googlesql-ddl-on-postgresql",
		base: "custom.yaml",
		patch: `
spec:
  target:
    dialect: PostgreSQL`,
		want: []cause{
			{"spec.workload.custom.ddl[0]", "Invalid value: \"CREATE TABLE Singers (\\n  SingerId INT64 NOT NULL,\\n  Name STRING(100),\\n  Genre STRING(20),\\n  Updated TIMESTAMP OPTIONS (allow_commit_timestamp = true),\\n) PRIMARY KEY (SingerId)\\n\": does not parse: syntax error at or near \"=\""},
		},
	},
	{
		name: "custom-pg-ddl-does-not-parse",
		base: "custom-postgresql.yaml",
		patch: `
spec:
  workload:
    custom:
      ddl:
      - CREATE TABLE singers (singer_id bigint NOT NULL, name varchar(100), genre varchar(20), updated spanner.commit_timestamp, PRIMARY KEY (singer_id))
      - CREATE TABLE albums (singer_id bigint NOT NULL,, album_id bigint, PRIMARY KEY (singer_id)) INTERLEAVE IN PARENT singers
      - CREATE INDEX albums_by_title ON albums (title)`,
		want: []cause{
			{"spec.workload.custom.ddl[1]", "Invalid value: \"CREATE TABLE albums (singer_id bigint NOT NULL,, album_id bigint, PRIMARY KEY (singer_id)) INTERLEAVE IN PARENT singers\": does not parse: syntax error at or near \",\""},
		},
	},
	{
		name: "custom-pg-ddl-unsupported-type",
		base: "custom-postgresql.yaml",
		patch: `
spec:
  workload:
    custom:
      ddl:
      - CREATE TABLE singers (singer_id bigint NOT NULL, name varchar(100), genre money, updated spanner.commit_timestamp, PRIMARY KEY (singer_id))
      - CREATE TABLE albums (singer_id bigint NOT NULL, album_id bigint NOT NULL, title varchar, sales bigint, PRIMARY KEY (singer_id, album_id)) INTERLEAVE IN PARENT singers ON DELETE CASCADE
      - CREATE INDEX albums_by_title ON albums (title)`,
		want: []cause{
			{"spec.workload.custom.ddl[0]", "Invalid value: \"CREATE TABLE singers (singer_id bigint NOT NULL, name varchar(100), genre money, updated spanner.commit_timestamp, PRIMARY KEY (singer_id))\": column genre: type money is not supported"},
		},
	},
	{
		name: "custom-pg-ddl-parent-missing",
		base: "custom-postgresql.yaml",
		patch: `
spec:
  workload:
    custom:
      ddl:
      - CREATE TABLE albums (singer_id bigint NOT NULL, album_id bigint NOT NULL, title varchar, sales bigint, PRIMARY KEY (singer_id, album_id)) INTERLEAVE IN PARENT singers ON DELETE CASCADE
      - CREATE TABLE singers (singer_id bigint NOT NULL, name varchar(100), genre varchar(20), updated spanner.commit_timestamp, PRIMARY KEY (singer_id))
      - CREATE INDEX albums_by_title ON albums (title)`,
		want: []cause{
			{"spec.workload.custom.ddl[0]", "Invalid value: \"CREATE TABLE albums (singer_id bigint NOT NULL, album_id bigint NOT NULL, title varchar, sales bigint, PRIMARY KEY (singer_id, album_id)) INTERLEAVE IN PARENT singers ON DELETE CASCADE\": table albums: is interleaved in singers, which no earlier statement creates"},
		},
	},
	{
		name: "custom-pg-ddl-index-unknown-column",
		base: "custom-postgresql.yaml",
		patch: `
spec:
  workload:
    custom:
      ddl:
      - CREATE TABLE singers (singer_id bigint NOT NULL, name varchar(100), genre varchar(20), updated spanner.commit_timestamp, PRIMARY KEY (singer_id))
      - CREATE TABLE albums (singer_id bigint NOT NULL, album_id bigint NOT NULL, title varchar, sales bigint, PRIMARY KEY (singer_id, album_id)) INTERLEAVE IN PARENT singers ON DELETE CASCADE
      - CREATE INDEX albums_by_title ON albums (titel)`,
		want: []cause{
			{"spec.workload.custom.ddl[2]", "Invalid value: \"CREATE INDEX albums_by_title ON albums (titel)\": index albums_by_title: column titel is not a column of table albums"},
		},
	},
	{
		name: "custom-pg-ddl-not-create",
		base: "custom-postgresql.yaml",
		patch: `
spec:
  workload:
    custom:
      ddl:
      - CREATE TABLE singers (singer_id bigint NOT NULL, name varchar(100), genre varchar(20), updated spanner.commit_timestamp, PRIMARY KEY (singer_id))
      - CREATE TABLE albums (singer_id bigint NOT NULL, album_id bigint NOT NULL, title varchar, sales bigint, PRIMARY KEY (singer_id, album_id)) INTERLEAVE IN PARENT singers ON DELETE CASCADE
      - DROP INDEX albums_by_title`,
		want: []cause{
			{"spec.workload.custom.ddl[2]", "Invalid value: \"DROP INDEX albums_by_title\": only CREATE TABLE and CREATE INDEX are supported"},
		},
	},
	{
		name: "custom-pg-sql-does-not-parse",
		base: "custom-postgresql.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: get-singer
      type: Query
      weight: 1
      custom:
        sql: SELEC name FROM singers WHERE singer_id = $1
        params:
        - name: p1
          key:
            table: singers
            column: singer_id`,
		want: []cause{
			{"spec.workload.operations[0].custom.sql", "Invalid value: \"SELEC name FROM singers WHERE singer_id = $1\": does not parse: syntax error at or near \"SELEC\""},
		},
	},
	{
		name: "custom-pg-sql-unknown-column",
		base: "custom-postgresql.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: get-singer
      type: Query
      weight: 1
      custom:
        sql: SELECT nme FROM singers WHERE singer_id = $1
        params:
        - name: p1
          key:
            table: singers
            column: singer_id`,
		want: []cause{
			{"spec.workload.operations[0].custom.sql", "Invalid value: \"SELECT nme FROM singers WHERE singer_id = $1\": column nme is not a column of singers"},
		},
	},
	{
		name: "custom-pg-sql-unknown-table",
		base: "custom-postgresql.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: add-sales
      type: DML
      weight: 1
      custom:
        sql: UPDATE album SET sales = sales + 1 WHERE singer_id = $1
        params:
        - name: p1
          key:
            table: singers
            column: singer_id`,
		want: []cause{
			{"spec.workload.operations[0].custom.sql", "Invalid value: \"UPDATE album SET sales = sales + 1 WHERE singer_id = $1\": table album is not created by the DDL"},
		},
	},
	{
		name: "custom-pg-param-unbound",
		base: "custom-postgresql.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: add-sales
      type: DML
      weight: 1
      custom:
        sql: UPDATE albums SET sales = sales + $1 WHERE singer_id = $2
        params:
        - name: p1
          generator:
            type: Uniform
            min: 1
            max: 10`,
		want: []cause{
			{"spec.workload.operations[0].custom.params", "Required value: parameter $2 of the statement is not bound to a generator, a key or an earlier step: UPDATE albums SET sales = sales + $1 WHERE singer_id = $2"},
		},
	},
	{
		name: "custom-pg-param-named-as-in-googlesql",
		base: "custom-postgresql.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: get-singer
      type: Query
      weight: 1
      custom:
        sql: SELECT name FROM singers WHERE singer_id = $1
        params:
        - name: id
          key:
            table: singers
            column: singer_id`,
		want: []cause{
			{"spec.workload.operations[0].custom.params", "Required value: parameter $1 of the statement is not bound to a generator, a key or an earlier step: SELECT name FROM singers WHERE singer_id = $1"},
			{"spec.workload.operations[0].custom.params[0].name", "Invalid value: \"id\": in PostgreSQL a statement's parameters are $1..$n, bound as p1..pn: SELECT name FROM singers WHERE singer_id = $1"},
		},
	},
	{
		name: "custom-pg-googlesql-parameter",
		base: "custom-postgresql.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: get-singer
      type: Query
      weight: 1
      custom:
        sql: SELECT name FROM singers WHERE singer_id = @id`,
		want: []cause{
			{"spec.workload.operations[0].custom.sql", "Invalid value: \"SELECT name FROM singers WHERE singer_id = @id\": @id is a GoogleSQL parameter; PostgreSQL's are $1..$n"},
		},
	},
	{
		name: "custom-pg-param-type-mismatch",
		base: "custom-postgresql.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: rename
      type: DML
      weight: 1
      custom:
        sql: UPDATE singers SET name = $1 WHERE singer_id = $2
        params:
        - name: p1
          generator:
            type: Uniform
            min: 1
            max: 10
        - name: p2
          key:
            table: singers
            column: singer_id`,
		want: []cause{
			{"spec.workload.operations[0].custom.params[0].generator.type", "Invalid value: \"Uniform\": a Uniform generator produces INT64 or FLOAT64 or NUMERIC values; column name is of type STRING"},
		},
	},
	{
		name: "custom-pg-dml-is-a-query",
		base: "custom-postgresql.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: add-sales
      type: DML
      weight: 1
      custom:
        sql: SELECT sales FROM albums`,
		want: []cause{
			{"spec.workload.operations[0].custom.sql", "Invalid value: \"SELECT sales FROM albums\": DML needs an INSERT, UPDATE or DELETE statement; use a Query operation for a query"},
		},
	},
	{
		name: "custom-pg-commit-timestamp-on-plain-column",
		base: "custom-postgresql.yaml",
		patch: `
spec:
  workload:
    custom:
      ddl:
      - CREATE TABLE singers (singer_id bigint NOT NULL, name varchar(100), genre varchar(20), updated timestamptz, PRIMARY KEY (singer_id))
      - CREATE TABLE albums (singer_id bigint NOT NULL, album_id bigint NOT NULL, title varchar, sales bigint, PRIMARY KEY (singer_id, album_id)) INTERLEAVE IN PARENT singers ON DELETE CASCADE
      - CREATE INDEX albums_by_title ON albums (title)`,
		want: []cause{
			{"spec.workload.custom.tables[0].columns[2].generator.type", "Invalid value: \"Timestamp\": a commit timestamp needs column updated to be of type spanner.commit_timestamp"},
		},
	},
	{
		name: "custom-pg-read-unknown-column",
		base: "custom-postgresql.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: albums-by-title
      type: ReadRows
      weight: 1
      custom:
        read:
          table: albums
          index: albums_by_title
          columns: [singer_id, titel]
          shape: Key`,
		want: []cause{
			{"spec.workload.operations[0].custom.read.columns[1]", "Invalid value: \"titel\": is not a column of albums"},
		},
	},
	// PostgreSQL folds an unquoted name to lower case and then matches
	// names exactly; Spanner refuses names that differ only in case.
	{
		name: "custom-pg-unquoted-reference-to-quoted-table",
		base: "custom-postgresql-quoted.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: get-singer
      type: Query
      weight: 1
      custom:
        sql: SELECT "Name" FROM Singers WHERE "SingerId" = $1
        params:
        - name: p1
          key:
            table: Singers
            column: SingerId`,
		want: []cause{
			{"spec.workload.operations[0].custom.sql", `Invalid value: "SELECT \"Name\" FROM Singers WHERE \"SingerId\" = $1": table singers is not created by the DDL (PostgreSQL folds unquoted names to lower case and matches names with case: the table is "Singers")`},
		},
	},
	{
		name: "custom-pg-column-case-mismatch",
		base: "custom-postgresql-quoted.yaml",
		patch: `
spec:
  workload:
    operations:
    - name: add-sales
      type: DML
      weight: 1
      custom:
        sql: UPDATE "Albums" SET sales = 1 WHERE "SingerId" = $1
        params:
        - name: p1
          key:
            table: Singers
            column: SingerId`,
		want: []cause{
			{"spec.workload.operations[0].custom.sql", `Invalid value: "UPDATE \"Albums\" SET sales = 1 WHERE \"SingerId\" = $1": column sales is not a column of Albums (PostgreSQL folds unquoted names to lower case and matches names with case: the column is "Sales")`},
		},
	},
	{
		name: "custom-pg-ddl-index-column-case-mismatch",
		base: "custom-postgresql-quoted.yaml",
		patch: `
spec:
  workload:
    custom:
      ddl:
      - CREATE TABLE "Singers" ("SingerId" bigint NOT NULL, "Name" varchar(100), "Genre" varchar(20), PRIMARY KEY ("SingerId"))
      - CREATE TABLE "Albums" ("SingerId" bigint NOT NULL, "AlbumId" bigint NOT NULL, "Title" varchar, "Sales" bigint, PRIMARY KEY ("SingerId", "AlbumId")) INTERLEAVE IN PARENT "Singers" ON DELETE CASCADE
      - CREATE INDEX "AlbumsByTitle" ON "Albums" (Title)`,
		want: []cause{
			{"spec.workload.custom.ddl[2]", `Invalid value: "CREATE INDEX \"AlbumsByTitle\" ON \"Albums\" (Title)": index AlbumsByTitle: column title is not a column of table Albums (PostgreSQL folds unquoted names to lower case and matches names with case: the column is "Title")`},
		},
	},
	{
		name: "custom-pg-names-differ-only-in-case",
		base: "custom-postgresql-quoted.yaml",
		patch: `
spec:
  workload:
    custom:
      ddl:
      - CREATE TABLE "Singers" ("SingerId" bigint NOT NULL, "Name" varchar(100), "Genre" varchar(20), PRIMARY KEY ("SingerId"))
      - CREATE TABLE singers (singer_id bigint NOT NULL, PRIMARY KEY (singer_id))`,
		want: []cause{
			{"spec.workload.custom.ddl[1]", `Invalid value: "CREATE TABLE singers (singer_id bigint NOT NULL, PRIMARY KEY (singer_id))": table singers: table Singers has this name (Spanner's names must differ in more than case)`},
		},
	},
}

// TestPostgreSQLCustomRunsAreRefusedIdenticallyByTheCLI: `spanbench run`'s
// validation refuses each bad PostgreSQL Custom run with exactly the causes
// the API server (through the webhook) gives, field and message alike.
func TestPostgreSQLCustomRunsAreRefusedIdenticallyByTheCLI(t *testing.T) {
	for _, tc := range customPGRuns {
		t.Run(tc.name, func(t *testing.T) {
			errs, decodeErr := goValidate(manifest(t, tc.base, tc.patch))
			if decodeErr != nil {
				t.Fatalf("the CLI cannot decode the manifest: %v", decodeErr)
			}
			got := make([]cause, 0, len(errs))
			for _, e := range errs {
				got = append(got, cause{Field: e.Field, Message: e.ErrorBody()})
			}
			sort.Slice(got, func(i, j int) bool { return got[i].String() < got[j].String() })
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("the CLI's causes differ from the API server's (-server +CLI):\n%s", diff)
			}
		})
	}
}
