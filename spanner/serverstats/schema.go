package serverstats

import (
	"slices"
	"strings"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// SQLType is a column type as Spanner's statistics pages write it, in
// GoogleSQL spelling.
type SQLType string

// The types the statistics tables' columns have.
const (
	Timestamp SQLType = "TIMESTAMP"
	String    SQLType = "STRING"
	Int64     SQLType = "INT64"
	Float64   SQLType = "FLOAT64"
	Bool      SQLType = "BOOL"
	Bytes     SQLType = "BYTES"
	// StringArray is ARRAY<STRING>.
	StringArray SQLType = "ARRAY<STRING>"
	// StructArray is ARRAY<STRUCT<...>>: the histograms and samples. The
	// PostgreSQL dialect has no such column (its pages say to read the
	// _JSON_STRING column instead), and no DDL can declare one.
	StructArray SQLType = "ARRAY<STRUCT>"
)

// PostgreSQL is the type's name in a PostgreSQL-dialect database, by the
// mapping of PostgreSQLTypesSource; "" for StructArray, which that
// dialect does not have.
func (t SQLType) PostgreSQL() string {
	return map[SQLType]string{Timestamp: "timestamptz", String: "varchar", Int64: "bigint", Float64: "float8",
		Bool: "boolean", Bytes: "bytea", StringArray: "varchar[]"}[t]
}

// PostgreSQLTypesSource is Google's page mapping GoogleSQL types to the
// PostgreSQL dialect's.
const PostgreSQLTypesSource = "https://cloud.google.com/spanner/docs/reference/postgresql/data-types"

// Column is one column of a statistics table as Google documents it.
type Column struct {
	// Name is the column's name in GoogleSQL spelling (upper case); the
	// PostgreSQL dialect's spanner_sys tables have it in lower case.
	Name string
	// Type is its documented type.
	Type SQLType
}

// InDialect reports whether a database of dialect d has the column: the
// PostgreSQL dialect has no ARRAY<STRUCT> columns.
func (c Column) InDialect(d v1alpha1.Dialect) bool {
	return d.OrDefault() != v1alpha1.DialectPostgreSQL || c.Type != StructArray
}

// TableSchema is one family of statistics tables (its _MINUTE, _10MINUTE
// and _HOUR variants have the same columns) as Google's page documents
// it. Spanner's pages say every column is nullable.
type TableSchema struct {
	// Kind names the tables without their interval: QUERY_STATS_TOP is
	// QUERY_STATS_TOP_MINUTE, _10MINUTE and _HOUR.
	Kind string
	// Source is the page the columns were taken from.
	Source string
	// Columns are the documented columns, in the page's order.
	Columns []Column
}

// Table is the name of the table of granularity g under prefix.
func (t TableSchema) Table(prefix string, g Granularity) string {
	return prefix + t.Kind + "_" + g.Suffix
}

// Column is the documented column named name (either case).
func (t TableSchema) Column(name string) (Column, bool) {
	i := slices.IndexFunc(t.Columns, func(c Column) bool { return strings.EqualFold(c.Name, name) })
	if i < 0 {
		return Column{}, false
	}
	return t.Columns[i], true
}

// The four statistics tables the collector reads, as Google's Spanner
// documentation lists their columns (names and types, GoogleSQL spelling;
// read in May 2026). A PostgreSQL-dialect database has the same tables
// as spanner_sys.* with lower-case column names, less the ARRAY<STRUCT>
// columns, whose JSON string forms it has instead (each page's
// "PostgreSQL interface note"). The stand-in tables the tests run the
// collector against are built from these lists (internal/statstest).
var (
	// QueryStatsTop is SPANNER_SYS.QUERY_STATS_TOP_*.
	QueryStatsTop = TableSchema{Kind: "QUERY_STATS_TOP",
		Source: "https://cloud.google.com/spanner/docs/introspection/query-statistics",
		Columns: []Column{
			{"INTERVAL_END", Timestamp}, {"REQUEST_TAG", String}, {"QUERY_TYPE", String}, {"TEXT", String},
			{"TEXT_TRUNCATED", Bool}, {"TEXT_FINGERPRINT", Int64}, {"EXECUTION_COUNT", Int64},
			{"AVG_LATENCY_SECONDS", Float64}, {"AVG_ROWS", Float64}, {"AVG_BYTES", Float64},
			{"AVG_ROWS_SCANNED", Float64}, {"AVG_CPU_SECONDS", Float64}, {"ALL_FAILED_EXECUTION_COUNT", Int64},
			{"ALL_FAILED_AVG_LATENCY_SECONDS", Float64}, {"CANCELLED_OR_DISCONNECTED_EXECUTION_COUNT", Int64},
			{"TIMED_OUT_EXECUTION_COUNT", Int64}, {"AVG_BYTES_WRITTEN", Float64}, {"AVG_ROWS_WRITTEN", Float64},
			{"STATEMENT_COUNT", Int64}, {"RUN_IN_RW_TRANSACTION_EXECUTION_COUNT", Int64},
			{"LATENCY_DISTRIBUTION", StructArray}, {"AVG_MEMORY_PEAK_USAGE_BYTES", Float64},
			{"AVG_MEMORY_USAGE_PERCENTAGE", Float64}, {"AVG_QUERY_PLAN_CREATION_TIME_SECS", Float64},
			{"AVG_FILESYSTEM_DELAY_SECS", Float64}, {"AVG_REMOTE_SERVER_CALLS", Float64},
			{"AVG_ROWS_SPOOLED", Float64}, {"AVG_DISK_IO_COST", Float64},
			{"LATENCY_DISTRIBUTION_JSON_STRING", String},
		}}
	// ReadStatsTop is SPANNER_SYS.READ_STATS_TOP_*.
	ReadStatsTop = TableSchema{Kind: "READ_STATS_TOP",
		Source: "https://cloud.google.com/spanner/docs/introspection/read-statistics",
		Columns: []Column{
			{"INTERVAL_END", Timestamp}, {"REQUEST_TAG", String}, {"READ_TYPE", String},
			{"READ_COLUMNS", StringArray}, {"FPRINT", Int64}, {"EXECUTION_COUNT", Int64}, {"AVG_ROWS", Float64},
			{"AVG_BYTES", Float64}, {"AVG_CPU_SECONDS", Float64}, {"AVG_LOCKING_DELAY_SECONDS", Float64},
			{"AVG_CLIENT_WAIT_SECONDS", Float64}, {"AVG_LEADER_REFRESH_DELAY_SECONDS", Float64},
			{"RUN_IN_RW_TRANSACTION_EXECUTION_COUNT", Int64}, {"AVG_DISK_IO_COST", Float64},
		}}
	// TxnStatsTop is SPANNER_SYS.TXN_STATS_TOP_*.
	TxnStatsTop = TableSchema{Kind: "TXN_STATS_TOP",
		Source: "https://cloud.google.com/spanner/docs/introspection/transaction-statistics",
		Columns: []Column{
			{"INTERVAL_END", Timestamp}, {"TRANSACTION_TAG", String}, {"FPRINT", Int64},
			{"READ_COLUMNS", StringArray}, {"WRITE_CONSTRUCTIVE_COLUMNS", StringArray},
			{"WRITE_DELETE_TABLES", StringArray}, {"ATTEMPT_COUNT", Int64}, {"COMMIT_ATTEMPT_COUNT", Int64},
			{"COMMIT_ABORT_COUNT", Int64}, {"COMMIT_RETRY_COUNT", Int64}, {"COMMIT_FAILED_PRECONDITION_COUNT", Int64},
			{"SERIALIZABLE_PESSIMISTIC_TXN_COUNT", Int64}, {"SERIALIZABLE_OPTIMISTIC_TXN_COUNT", Int64},
			{"REPEATABLE_READ_OPTIMISTIC_TXN_COUNT", Int64}, {"AVG_PARTICIPANTS", Float64},
			{"AVG_TOTAL_LATENCY_SECONDS", Float64}, {"AVG_COMMIT_LATENCY_SECONDS", Float64}, {"AVG_BYTES", Float64},
			{"TOTAL_LATENCY_DISTRIBUTION", StructArray}, {"OPERATIONS_BY_TABLE", StructArray},
			{"TOTAL_LATENCY_DISTRIBUTION_JSON_STRING", String}, {"OPERATIONS_BY_TABLE_JSON_STRING", String},
		}}
	// LockStatsTop is SPANNER_SYS.LOCK_STATS_TOP_*.
	LockStatsTop = TableSchema{Kind: "LOCK_STATS_TOP",
		Source: "https://cloud.google.com/spanner/docs/introspection/lock-statistics",
		Columns: []Column{
			{"INTERVAL_END", Timestamp}, {"ROW_RANGE_START_KEY", Bytes}, {"LOCK_WAIT_SECONDS", Float64},
			{"SAMPLE_LOCK_REQUESTS", StructArray}, {"SAMPLE_LOCK_REQUESTS_JSON_STRING", String},
		}}
)

// DocumentedTables are the statistics tables the collector reads.
func DocumentedTables() []TableSchema {
	return []TableSchema{QueryStatsTop, ReadStatsTop, TxnStatsTop, LockStatsTop}
}
