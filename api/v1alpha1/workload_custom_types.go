package v1alpha1

// WorkloadCustom is the user's own workload: a schema given as DDL, a
// dataset generated per table and column, and operations written as SQL,
// Read API reads, mutations and multi-step transactions.
const WorkloadCustom WorkloadType = "Custom"

// Operations of a Custom workload. Each names its body in the operation's
// custom field; a Custom operation must be named.
const (
	// OpQuery runs a parameterized read-only SQL query.
	OpQuery OperationType = "Query"
	// OpDML runs a parameterized DML statement in a read-write transaction.
	OpDML OperationType = "DML"
	// OpReadRows reads through the Read API by key, key list, key range or
	// index.
	OpReadRows OperationType = "ReadRows"
	// OpMutation applies one insert, update, upsert or delete mutation.
	OpMutation OperationType = "Mutation"
	// OpTransaction runs several SQL steps in one read-write transaction;
	// later steps may use values read by earlier ones.
	OpTransaction OperationType = "Transaction"
)

// Size limits of a Custom workload, as the schema's markers set them.
const (
	// MaxDDLStatements bounds custom.ddl.
	MaxDDLStatements = 64
	// MaxDDLStatementLength bounds one DDL statement, in bytes.
	MaxDDLStatementLength = 16384
	// MaxStatementLength bounds one SQL query or DML statement, in bytes.
	MaxStatementLength = 16384
	// MaxCustomTables bounds custom.tables.
	MaxCustomTables = 32
	// MaxCustomColumns bounds a table's generated columns.
	MaxCustomColumns = 64
	// MaxParams bounds an operation's or a step's parameters.
	MaxParams = 32
	// MaxSteps bounds a transaction's steps.
	MaxTransactionSteps = 16
	// MaxChoices bounds a choice generator's values.
	MaxChoices = 64
	// MaxIdentifierLength is Spanner's limit on a table, column or index
	// name.
	MaxIdentifierLength = 128
)

// CustomWorkloadSpec is the schema and dataset of a Custom workload.
type CustomWorkloadSpec struct {
	// ddl holds the schema, one statement per item (CREATE TABLE, CREATE
	// INDEX), in the database's dialect (target.dialect: GoogleSQL or
	// PostgreSQL). Tables may be interleaved in a parent and indexes may be
	// secondary. It is parsed before anything starts.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=16384
	// +kubebuilder:validation:items:MinLength=1
	DDL []string `json:"ddl"`

	// tables is the dataset: how many rows each table of the DDL holds and
	// how the values of its columns are generated. A column without a
	// generator gets one from its type (keys: a sequence); a parent table
	// is listed before its interleaved children.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(t, self.exists_one(u, u.name == t.name))",message="custom.tables: each table is listed once"
	Tables []CustomTableSpec `json:"tables"`
}

// CustomTableSpec is one table's dataset.
// +kubebuilder:validation:XValidation:rule="has(self.rows) != has(self.rowsPerParent)",message="custom.tables: set exactly one of rows and rowsPerParent"
type CustomTableSpec struct {
	// name is the table, as the DDL creates it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Name string `json:"name"`

	// rows is the number of rows loaded into a table that is not
	// interleaved.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000000000
	Rows *int64 `json:"rows,omitempty"`

	// rowsPerParent is the number of rows loaded under each row of the
	// parent of an interleaved table.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100000
	RowsPerParent *int32 `json:"rowsPerParent,omitempty"`

	// columns sets the generator of some columns; the others get one from
	// their type.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self.all(c, self.exists_one(d, d.name == c.name))",message="custom.tables.columns: each column is listed once"
	Columns []CustomColumnSpec `json:"columns,omitempty"`
}

// CustomColumnSpec is a column's generator.
type CustomColumnSpec struct {
	// name is the column, as the DDL creates it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Name string `json:"name"`

	// generator produces the column's values.
	// +required
	Generator GeneratorSpec `json:"generator"`
}

// GeneratorType names a value generator.
// +kubebuilder:validation:Enum=Sequence;Uniform;Zipfian;String;Bytes;UUID;Timestamp;Choice;Reference
type GeneratorType string

const (
	// GenSequence counts 0, 1, 2, ... (per parent row for an interleaved
	// table's key), offset by min.
	GenSequence GeneratorType = "Sequence"
	// GenUniform draws integers from min to max, each equally likely.
	GenUniform GeneratorType = "Uniform"
	// GenZipfian draws integers from min to max with YCSB's scrambled
	// zipfian distribution.
	GenZipfian GeneratorType = "Zipfian"
	// GenString draws random letters and digits, minLength to maxLength of
	// them.
	GenString GeneratorType = "String"
	// GenBytes draws random bytes, minLength to maxLength of them.
	GenBytes GeneratorType = "Bytes"
	// GenUUID draws a random version 4 UUID, as a string.
	GenUUID GeneratorType = "UUID"
	// GenTimestamp is the current time, the commit timestamp, or a time
	// drawn between from and to.
	GenTimestamp GeneratorType = "Timestamp"
	// GenChoice draws one of choices, with probability weight / sum of
	// weights.
	GenChoice GeneratorType = "Choice"
	// GenReference draws an existing key of another table.
	GenReference GeneratorType = "Reference"
)

// TimestampMode is the kind of a Timestamp generator.
// +kubebuilder:validation:Enum=Now;Commit;Range;""
type TimestampMode string

const (
	// TimestampNow is the client's clock when the value is generated.
	TimestampNow TimestampMode = "Now"
	// TimestampCommit is PENDING_COMMIT_TIMESTAMP(); the column needs
	// allow_commit_timestamp.
	TimestampCommit TimestampMode = "Commit"
	// TimestampRange draws a time between from and to.
	TimestampRange TimestampMode = "Range"
)

// GeneratorSpec produces values of one column or parameter.
// +kubebuilder:validation:XValidation:rule="!(has(self.min) || has(self.max)) || self.type in ['Sequence','Uniform','Zipfian']",message="generator: min and max apply only to Sequence, Uniform and Zipfian"
// +kubebuilder:validation:XValidation:rule="!(self.type in ['Uniform','Zipfian']) || (has(self.min) && has(self.max) && self.min <= self.max)",message="generator: Uniform and Zipfian need min <= max"
// +kubebuilder:validation:XValidation:rule="!(has(self.minLength) || has(self.maxLength)) || self.type in ['String','Bytes']",message="generator: minLength and maxLength apply only to String and Bytes"
// +kubebuilder:validation:XValidation:rule="!(self.type in ['String','Bytes']) || (has(self.maxLength) && (has(self.minLength) ? self.minLength : 0) <= self.maxLength)",message="generator: String and Bytes need maxLength, and minLength <= maxLength"
// +kubebuilder:validation:XValidation:rule="has(self.timestamp) == (self.type == 'Timestamp')",message="generator.timestamp: set for Timestamp generators, and only for them"
// +kubebuilder:validation:XValidation:rule="has(self.choices) == (self.type == 'Choice')",message="generator.choices: set for Choice generators, and only for them"
// +kubebuilder:validation:XValidation:rule="has(self.reference) == (self.type == 'Reference')",message="generator.reference: set for Reference generators, and only for them"
type GeneratorSpec struct {
	// type is the kind of generator: Sequence, Uniform, Zipfian, String,
	// Bytes, UUID, Timestamp, Choice or Reference.
	// +required
	Type GeneratorType `json:"type"`

	// min is the smallest integer drawn (Uniform, Zipfian), or the first
	// value of a Sequence (default 0).
	// +optional
	Min *int64 `json:"min,omitempty"`

	// max is the largest integer drawn (Uniform, Zipfian).
	// +optional
	Max *int64 `json:"max,omitempty"`

	// minLength is the shortest String or Bytes value. Default 0.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1048576
	MinLength *int32 `json:"minLength,omitempty"`

	// maxLength is the longest String or Bytes value, in characters or
	// bytes; required by both.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1048576
	MaxLength *int32 `json:"maxLength,omitempty"`

	// timestamp says which time a Timestamp generator produces.
	// +optional
	Timestamp *TimestampGeneratorSpec `json:"timestamp,omitempty"` //nolint:kubeapilinter // notimestamp: named after the Spanner column type TIMESTAMP it produces, as the generator type Timestamp is.

	// choices are the values of a Choice generator, with their weights.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Choices []WeightedChoice `json:"choices,omitempty"`

	// reference names the key column of another table whose existing
	// values a Reference generator draws.
	// +optional
	Reference *ColumnRef `json:"reference,omitempty"` //nolint:kubeapilinter // noreferences: the settings of the generator type Reference (a draw of existing key values), not a reference to an object.

	// nullPercent is the share of NULL values, in percent, for a nullable
	// column or parameter. Default 0.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	NullPercent *int32 `json:"nullPercent,omitempty"`
}

// TimestampGeneratorSpec is a Timestamp generator's kind and range.
// +kubebuilder:validation:XValidation:rule="(self.mode == 'Range') == (has(self.from) && has(self.to))",message="generator.timestamp: from and to are required for mode Range, and apply only to it"
// +kubebuilder:validation:XValidation:rule="!has(self.from) || !has(self.to) || timestamp(self.from) <= timestamp(self.to)",message="generator.timestamp: from must not be after to"
type TimestampGeneratorSpec struct {
	// mode is Now, Commit or Range.
	// +required
	Mode TimestampMode `json:"mode"`

	// from is the earliest time of a Range, in RFC 3339.
	// +optional
	// +kubebuilder:validation:Format=date-time
	// +kubebuilder:validation:MaxLength=64
	From string `json:"from,omitempty"`

	// to is the latest time of a Range, in RFC 3339.
	// +optional
	// +kubebuilder:validation:Format=date-time
	// +kubebuilder:validation:MaxLength=64
	To string `json:"to,omitempty"`
}

// WeightedChoice is one value of a Choice generator.
type WeightedChoice struct {
	// value is the value, written as text and converted to the column's
	// type (an integer, a boolean, a string...).
	// +required
	// +kubebuilder:validation:MaxLength=1024
	Value string `json:"value"`

	// weight is the value's share of the draws. Must be at least 1.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000
	Weight int32 `json:"weight"`
}

// ColumnRef names a column of a table.
type ColumnRef struct {
	// table is the table, as the DDL creates it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Table string `json:"table"`

	// column is the column, as the DDL creates it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Column string `json:"column"`
}

// CustomOperationSpec is the body of a Custom workload's operation: what
// its type (Query, DML, ReadRows, Mutation, Transaction) runs.
// +kubebuilder:validation:XValidation:rule="[has(self.sql), has(self.read), has(self.mutation), has(self.steps)].filter(x, x).size() == 1",message="custom: set exactly one of sql (Query, DML), read (ReadRows), mutation (Mutation) and steps (Transaction)"
type CustomOperationSpec struct {
	// sql is the statement of a Query or DML operation, with @name
	// parameters (GoogleSQL) or $1..$n (PostgreSQL).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=16384
	SQL string `json:"sql,omitempty"`

	// params binds every parameter of sql: @name by its name, $n (in
	// PostgreSQL) as pn.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Params []ParamBinding `json:"params,omitempty"`

	// read is what a ReadRows operation reads.
	// +optional
	Read *CustomReadSpec `json:"read,omitempty"`

	// mutation is what a Mutation operation writes.
	// +optional
	Mutation *CustomMutationSpec `json:"mutation,omitempty"`

	// steps are a Transaction's statements, run in order in one read-write
	// transaction.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Steps []TransactionStep `json:"steps,omitempty"`
}

// ParamBinding gives one statement parameter its value.
// +kubebuilder:validation:XValidation:rule="[has(self.generator), has(self.key), has(self.from)].filter(x, x).size() == 1",message="params: set exactly one of generator, key and from"
type ParamBinding struct {
	// name is the parameter: its name without the @ in GoogleSQL; pn for
	// $n in PostgreSQL (p1 for $1), as Spanner's API names it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Name string `json:"name"`

	// generator draws a fresh value.
	// +optional
	Generator *GeneratorSpec `json:"generator,omitempty"`

	// key draws an existing value of a table's key column, with the
	// operation's key chooser (keys: Uniform, Zipfian or Latest).
	// +optional
	Key *ColumnRef `json:"key,omitempty"`

	// from uses a value an earlier step of the transaction read, as
	// step.column (the step's first row).
	// +optional
	// +kubebuilder:validation:MaxLength=257
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_-]*\.[A-Za-z_][A-Za-z0-9_]*$`
	From string `json:"from,omitempty"`
}

// ReadShape is how a ReadRows operation picks its rows.
// +kubebuilder:validation:Enum=Key;KeyList;Range
type ReadShape string

const (
	// ReadKey reads one row by key.
	ReadKey ReadShape = "Key"
	// ReadKeyList reads rows non-consecutive keys in one call.
	ReadKeyList ReadShape = "KeyList"
	// ReadRange reads rows consecutive keys from a chosen one.
	ReadRange ReadShape = "Range"
)

// CustomReadSpec is a Read API read.
type CustomReadSpec struct {
	// table is the table read, as the DDL creates it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Table string `json:"table"`

	// index reads through this secondary index of table instead of its
	// primary key; keys are then chosen from the index's first column.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Index string `json:"index,omitempty"`

	// columns are the columns returned.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=128
	Columns []string `json:"columns"`

	// shape is Key (one row), KeyList or Range (the operation's rows).
	// +required
	Shape ReadShape `json:"shape"`
}

// MutationKind is the kind of a Mutation operation.
// +kubebuilder:validation:Enum=Insert;Update;Upsert;Delete
type MutationKind string

const (
	// MutationInsert inserts a new row generated as the loader does.
	MutationInsert MutationKind = "Insert"
	// MutationUpdate regenerates the non-key columns of an existing row.
	MutationUpdate MutationKind = "Update"
	// MutationUpsert inserts or replaces a row with a chosen existing key.
	MutationUpsert MutationKind = "Upsert"
	// MutationDelete deletes an existing row.
	MutationDelete MutationKind = "Delete"
)

// CustomMutationSpec is one mutation.
type CustomMutationSpec struct {
	// kind is Insert, Update, Upsert or Delete.
	// +required
	Kind MutationKind `json:"kind"`

	// table is the table written, as the DDL creates it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Table string `json:"table"`
}

// TransactionStep is one statement of a Transaction.
type TransactionStep struct {
	// name identifies the step, for later steps' from.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_-]*$`
	Name string `json:"name"`

	// sql is a query or a DML statement with @name parameters (GoogleSQL)
	// or $1..$n (PostgreSQL).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=16384
	SQL string `json:"sql"`

	// params binds every parameter of sql: @name by its name, $n (in
	// PostgreSQL) as pn.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Params []ParamBinding `json:"params,omitempty"`
}
