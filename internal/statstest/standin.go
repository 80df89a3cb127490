// Package statstest holds stand-ins for Spanner's statistics tables
// (SPANNER_SYS.*_STATS_TOP_MINUTE), which the emulator does not have: the
// same column names and types, under a table prefix, and row builders, so
// tests run the statistics collector's SQL for real on the emulator. It is
// linked into tests only.
package statstest

import (
	"encoding/json"
	"strings"
	"time"

	"cloud.google.com/go/spanner"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// Prefix names the stand-in tables: the emulator has no SPANNER_SYS.
const Prefix = "STANDIN_"

// Schema creates tables with the column names and types of
// SPANNER_SYS.QUERY_STATS_TOP_*, READ_STATS_TOP_*, TXN_STATS_TOP_* and
// LOCK_STATS_TOP_* (MINUTE, 10MINUTE and HOUR) as Spanner documents them
// (query, read, transaction and lock statistics pages), less the
// STRUCT-typed columns no DDL can declare (LATENCY_DISTRIBUTION,
// SAMPLE_LOCK_REQUESTS, ...): their documented JSON string forms
// (LATENCY_DISTRIBUTION_JSON_STRING, SAMPLE_LOCK_REQUESTS_JSON_STRING),
// which the collector reads, are STRING columns as in Spanner. INTERVAL_END
// and the fingerprint (the row range's key for locks) are the key, as the
// documentation says they are unique together.
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
	"INT64", "bigint", "FLOAT64", "float8", "BOOL", "boolean", "BYTES(MAX)", "bytea", "\n) PRIMARY KEY", ",\n PRIMARY KEY")

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

// Suffixes are the tables' interval variants.
var Suffixes = []string{"MINUTE", "10MINUTE", "HOUR"}

func (Schema) googleSQL() []string {
	var ddl []string
	for _, suffix := range Suffixes {
		for _, t := range tablesDDL() {
			ddl = append(ddl, strings.ReplaceAll(t, "_TOP_MINUTE", "_TOP_"+suffix))
		}
	}
	return ddl
}

func tablesDDL() []string {
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
		`CREATE TABLE ` + Prefix + `LOCK_STATS_TOP_MINUTE (
  INTERVAL_END TIMESTAMP, ROW_RANGE_START_KEY BYTES(MAX), LOCK_WAIT_SECONDS FLOAT64,
  SAMPLE_LOCK_REQUESTS_JSON_STRING STRING(MAX)
) PRIMARY KEY (INTERVAL_END, ROW_RANGE_START_KEY)`,
	}
}

// table is the stand-in table name of kind (QUERY_STATS, ...) and suffix
// ("" is MINUTE).
func table(kind, suffix string) string {
	if suffix == "" {
		suffix = "MINUTE"
	}
	return Prefix + kind + "_TOP_" + suffix
}

// Distribution is a latency histogram as LATENCY_DISTRIBUTION holds it: a
// Cloud Monitoring distribution with exponential buckets, in seconds.
// Counts[0] is the underflow (below Scale), Counts[i] counts
// [Scale·Growth^(i-1), Scale·Growth^i).
type Distribution struct {
	Finite        int64
	Growth, Scale float64
	Mean          float64
	Counts        []int64
}

// JSON is the distribution as LATENCY_DISTRIBUTION_JSON_STRING holds it:
// an object with the struct's field names.
func (d Distribution) JSON() string {
	var n int64
	for _, c := range d.Counts {
		n += c
	}
	b, err := json.Marshal(map[string]any{"COUNT": n, "MEAN": d.Mean, "SUM_OF_SQUARED_DEVIATION": 0.0,
		"NUM_FINITE_BUCKETS": d.Finite, "GROWTH_FACTOR": d.Growth, "SCALE": d.Scale, "BUCKET_COUNTS": d.Counts})
	if err != nil {
		panic(err) // a map of numbers always marshals
	}
	return string(b)
}

// LockSample is one entry of SAMPLE_LOCK_REQUESTS.
type LockSample struct {
	Column, Mode, Tag string
}

// LockRow is a LOCK_STATS_TOP_* row.
type LockRow struct {
	Suffix  string
	End     time.Time
	Key     string
	Wait    float64
	Samples []LockSample
}

// Mutation inserts the row into the stand-in table.
func (r LockRow) Mutation() *spanner.Mutation {
	samples := make([]map[string]string, 0, len(r.Samples))
	for _, s := range r.Samples {
		samples = append(samples, map[string]string{"column": s.Column, "lock_mode": s.Mode, "transaction_tag": s.Tag})
	}
	b, err := json.Marshal(samples)
	if err != nil {
		panic(err)
	}
	return spanner.Insert(table("LOCK_STATS", r.Suffix),
		[]string{"INTERVAL_END", "ROW_RANGE_START_KEY", "LOCK_WAIT_SECONDS", "SAMPLE_LOCK_REQUESTS_JSON_STRING"},
		[]any{r.End, []byte(r.Key), r.Wait, string(b)})
}

// QueryRow is a QUERY_STATS_TOP_* row (Suffix "" is MINUTE).
type QueryRow struct {
	Suffix                                     string
	Dist                                       *Distribution
	End                                        time.Time
	Tag                                        string
	Fprint, Executions                         int64
	Latency, CPU, Rows, Scanned, Bytes, Remote float64
}

// Mutation inserts the row into the stand-in table.
func (r QueryRow) Mutation() *spanner.Mutation {
	return spanner.Insert(table("QUERY_STATS", r.Suffix),
		[]string{"INTERVAL_END", "REQUEST_TAG", "QUERY_TYPE", "TEXT", "TEXT_FINGERPRINT", "EXECUTION_COUNT",
			"AVG_LATENCY_SECONDS", "AVG_CPU_SECONDS", "AVG_ROWS", "AVG_ROWS_SCANNED", "AVG_BYTES", "AVG_REMOTE_SERVER_CALLS",
			"LATENCY_DISTRIBUTION_JSON_STRING"},
		[]any{r.End, r.Tag, "QUERY", "SELECT * FROM usertable WHERE id IN UNNEST(@ids)", r.Fprint, r.Executions,
			r.Latency, r.CPU, r.Rows, r.Scanned, r.Bytes, r.Remote, r.Dist.json()})
}

// ReadRow is a READ_STATS_TOP_* row (Suffix "" is MINUTE).
type ReadRow struct {
	Suffix             string
	End                time.Time
	Tag                string
	Fprint, Executions int64
	CPU, Rows, Bytes   float64
}

// Mutation inserts the row into the stand-in table.
func (r ReadRow) Mutation() *spanner.Mutation {
	return spanner.Insert(table("READ_STATS", r.Suffix),
		[]string{"INTERVAL_END", "REQUEST_TAG", "READ_TYPE", "READ_COLUMNS", "FPRINT", "EXECUTION_COUNT",
			"AVG_CPU_SECONDS", "AVG_ROWS", "AVG_BYTES"},
		[]any{r.End, r.Tag, "READ", []string{"usertable._exists", "usertable.field0"}, r.Fprint, r.Executions,
			r.CPU, r.Rows, r.Bytes})
}

// TxnRow is a TXN_STATS_TOP_* row (Suffix "" is MINUTE).
type TxnRow struct {
	Suffix                                     string
	Dist                                       *Distribution
	End                                        time.Time
	Tag                                        string
	Fprint, Attempts, Commits, Aborts, Retries int64
	CommitLatency, TotalLatency, Participants  float64
}

// Mutation inserts the row into the stand-in table.
func (r TxnRow) Mutation() *spanner.Mutation {
	return spanner.Insert(table("TXN_STATS", r.Suffix),
		[]string{"INTERVAL_END", "TRANSACTION_TAG", "FPRINT", "ATTEMPT_COUNT", "COMMIT_ATTEMPT_COUNT",
			"COMMIT_ABORT_COUNT", "COMMIT_RETRY_COUNT", "AVG_COMMIT_LATENCY_SECONDS", "AVG_TOTAL_LATENCY_SECONDS",
			"AVG_PARTICIPANTS", "AVG_BYTES", "TOTAL_LATENCY_DISTRIBUTION_JSON_STRING"},
		[]any{r.End, r.Tag, r.Fprint, r.Attempts, r.Commits, r.Aborts, r.Retries, r.CommitLatency, r.TotalLatency,
			r.Participants, 120.0, r.Dist.json()})
}

// json is the column's value: NULL without a distribution.
func (d *Distribution) json() spanner.NullString {
	if d == nil {
		return spanner.NullString{}
	}
	return spanner.NullString{StringVal: d.JSON(), Valid: true}
}
