// Package statstest holds stand-ins for Spanner's statistics tables
// (SPANNER_SYS.*_STATS_TOP_MINUTE), which the emulator does not have: the
// same column names and types, under a table prefix, and row builders, so
// tests run the statistics collector's SQL for real on the emulator. It is
// linked into tests only.
package statstest

import (
	"strings"
	"time"

	"cloud.google.com/go/spanner"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// Prefix names the stand-in tables: the emulator has no SPANNER_SYS.
const Prefix = "STANDIN_"

// Schema creates tables with the column names and types of
// SPANNER_SYS.QUERY_STATS_TOP_MINUTE, READ_STATS_TOP_MINUTE and
// TXN_STATS_TOP_MINUTE as Spanner documents them (query, read and
// transaction statistics pages), less the STRUCT-typed distribution and
// per-table columns no DDL can declare. INTERVAL_END and the fingerprint
// are the key, as the documentation says they are unique together.
type Schema struct{ dialect v1alpha1.Dialect }

// NewSchema is the stand-in schema in dialect d.
func NewSchema(d v1alpha1.Dialect) Schema { return Schema{dialect: d} }

// Dialect implements workload.Schema.
func (s Schema) Dialect() v1alpha1.Dialect { return s.dialect }

// Table implements workload.Schema.
func (Schema) Table() string { return Prefix + "QUERY_STATS_TOP_MINUTE" }

// Rows implements workload.Schema: the stand-ins hold no dataset.
func (Schema) Rows(int64) []*spanner.Mutation { return nil }

// pgTypes turn the GoogleSQL DDL into the PostgreSQL dialect's, whose
// spanner_sys tables have the same columns in lower case (unquoted names
// fold to it).
var pgTypes = strings.NewReplacer("ARRAY<STRING(MAX)>", "varchar[]", "STRING(MAX)", "varchar", "TIMESTAMP", "timestamptz",
	"INT64", "bigint", "FLOAT64", "float8", "BOOL", "boolean", "\n) PRIMARY KEY", ",\n PRIMARY KEY")

// DDL implements workload.Schema.
func (s Schema) DDL() []string {
	ddl := s.googleSQL()
	if s.dialect == v1alpha1.DialectPostgreSQL {
		for i := range ddl {
			ddl[i] = pgTypes.Replace(ddl[i]) + ")"
		}
	}
	return ddl
}

func (Schema) googleSQL() []string {
	return []string{
		`CREATE TABLE ` + Prefix + `QUERY_STATS_TOP_MINUTE (
  INTERVAL_END TIMESTAMP, REQUEST_TAG STRING(MAX), QUERY_TYPE STRING(MAX), TEXT STRING(MAX), TEXT_TRUNCATED BOOL,
  TEXT_FINGERPRINT INT64, EXECUTION_COUNT INT64, AVG_LATENCY_SECONDS FLOAT64, AVG_ROWS FLOAT64, AVG_BYTES FLOAT64,
  AVG_ROWS_SCANNED FLOAT64, AVG_CPU_SECONDS FLOAT64, ALL_FAILED_EXECUTION_COUNT INT64,
  ALL_FAILED_AVG_LATENCY_SECONDS FLOAT64, CANCELLED_OR_DISCONNECTED_EXECUTION_COUNT INT64,
  TIMED_OUT_EXECUTION_COUNT INT64, AVG_BYTES_WRITTEN FLOAT64, AVG_ROWS_WRITTEN FLOAT64, STATEMENT_COUNT INT64,
  RUN_IN_RW_TRANSACTION_EXECUTION_COUNT INT64, AVG_MEMORY_PEAK_USAGE_BYTES FLOAT64,
  AVG_MEMORY_USAGE_PERCENTAGE FLOAT64, AVG_QUERY_PLAN_CREATION_TIME_SECS FLOAT64, AVG_FILESYSTEM_DELAY_SECS FLOAT64,
  AVG_REMOTE_SERVER_CALLS FLOAT64, AVG_ROWS_SPOOLED FLOAT64, AVG_DISK_IO_COST FLOAT64,
  LATENCY_DISTRIBUTION_JSON_STRING STRING(MAX)
) PRIMARY KEY (INTERVAL_END, TEXT_FINGERPRINT)`,
		`CREATE TABLE ` + Prefix + `READ_STATS_TOP_MINUTE (
  INTERVAL_END TIMESTAMP, REQUEST_TAG STRING(MAX), READ_TYPE STRING(MAX), READ_COLUMNS ARRAY<STRING(MAX)>,
  FPRINT INT64, EXECUTION_COUNT INT64, AVG_ROWS FLOAT64, AVG_BYTES FLOAT64, AVG_CPU_SECONDS FLOAT64,
  AVG_LOCKING_DELAY_SECONDS FLOAT64, AVG_CLIENT_WAIT_SECONDS FLOAT64, AVG_LEADER_REFRESH_DELAY_SECONDS FLOAT64,
  RUN_IN_RW_TRANSACTION_EXECUTION_COUNT INT64, AVG_DISK_IO_COST FLOAT64
) PRIMARY KEY (INTERVAL_END, FPRINT)`,
		`CREATE TABLE ` + Prefix + `TXN_STATS_TOP_MINUTE (
  INTERVAL_END TIMESTAMP, TRANSACTION_TAG STRING(MAX), FPRINT INT64, READ_COLUMNS ARRAY<STRING(MAX)>,
  WRITE_CONSTRUCTIVE_COLUMNS ARRAY<STRING(MAX)>, WRITE_DELETE_TABLES ARRAY<STRING(MAX)>, ATTEMPT_COUNT INT64,
  COMMIT_ATTEMPT_COUNT INT64, COMMIT_ABORT_COUNT INT64, COMMIT_RETRY_COUNT INT64,
  COMMIT_FAILED_PRECONDITION_COUNT INT64, AVG_PARTICIPANTS FLOAT64, AVG_TOTAL_LATENCY_SECONDS FLOAT64,
  AVG_COMMIT_LATENCY_SECONDS FLOAT64, AVG_BYTES FLOAT64, TOTAL_LATENCY_DISTRIBUTION_JSON_STRING STRING(MAX),
  OPERATIONS_BY_TABLE_JSON_STRING STRING(MAX)
) PRIMARY KEY (INTERVAL_END, FPRINT)`,
	}
}

// QueryRow is a QUERY_STATS_TOP_MINUTE row.
type QueryRow struct {
	End                                        time.Time
	Tag                                        string
	Fprint, Executions                         int64
	Latency, CPU, Rows, Scanned, Bytes, Remote float64
}

// Mutation inserts the row into the stand-in table.
func (r QueryRow) Mutation() *spanner.Mutation {
	return spanner.Insert(Prefix+"QUERY_STATS_TOP_MINUTE",
		[]string{"INTERVAL_END", "REQUEST_TAG", "QUERY_TYPE", "TEXT", "TEXT_FINGERPRINT", "EXECUTION_COUNT",
			"AVG_LATENCY_SECONDS", "AVG_CPU_SECONDS", "AVG_ROWS", "AVG_ROWS_SCANNED", "AVG_BYTES", "AVG_REMOTE_SERVER_CALLS"},
		[]any{r.End, r.Tag, "QUERY", "SELECT * FROM usertable WHERE id IN UNNEST(@ids)", r.Fprint, r.Executions,
			r.Latency, r.CPU, r.Rows, r.Scanned, r.Bytes, r.Remote})
}

// ReadRow is a READ_STATS_TOP_MINUTE row.
type ReadRow struct {
	End                time.Time
	Tag                string
	Fprint, Executions int64
	CPU, Rows, Bytes   float64
}

// Mutation inserts the row into the stand-in table.
func (r ReadRow) Mutation() *spanner.Mutation {
	return spanner.Insert(Prefix+"READ_STATS_TOP_MINUTE",
		[]string{"INTERVAL_END", "REQUEST_TAG", "READ_TYPE", "READ_COLUMNS", "FPRINT", "EXECUTION_COUNT",
			"AVG_CPU_SECONDS", "AVG_ROWS", "AVG_BYTES"},
		[]any{r.End, r.Tag, "READ", []string{"usertable._exists", "usertable.field0"}, r.Fprint, r.Executions,
			r.CPU, r.Rows, r.Bytes})
}

// TxnRow is a TXN_STATS_TOP_MINUTE row.
type TxnRow struct {
	End                                        time.Time
	Tag                                        string
	Fprint, Attempts, Commits, Aborts, Retries int64
	CommitLatency, TotalLatency, Participants  float64
}

// Mutation inserts the row into the stand-in table.
func (r TxnRow) Mutation() *spanner.Mutation {
	return spanner.Insert(Prefix+"TXN_STATS_TOP_MINUTE",
		[]string{"INTERVAL_END", "TRANSACTION_TAG", "FPRINT", "ATTEMPT_COUNT", "COMMIT_ATTEMPT_COUNT",
			"COMMIT_ABORT_COUNT", "COMMIT_RETRY_COUNT", "AVG_COMMIT_LATENCY_SECONDS", "AVG_TOTAL_LATENCY_SECONDS",
			"AVG_PARTICIPANTS", "AVG_BYTES"},
		[]any{r.End, r.Tag, r.Fprint, r.Attempts, r.Commits, r.Aborts, r.Retries, r.CommitLatency, r.TotalLatency,
			r.Participants, 120.0})
}
