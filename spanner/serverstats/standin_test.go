package serverstats_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/spanner"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/emulatortest"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/session"
)

// standinPrefix names the stand-in tables: the emulator has no SPANNER_SYS.
const standinPrefix = "STANDIN_"

// standinSchema creates tables with the column names and types of
// SPANNER_SYS.QUERY_STATS_TOP_MINUTE, READ_STATS_TOP_MINUTE and
// TXN_STATS_TOP_MINUTE as Spanner documents them (query, read and
// transaction statistics pages), less the STRUCT-typed distribution and
// per-table columns no DDL can declare. INTERVAL_END and the fingerprint
// are the key, as the documentation says they are unique together.
type standinSchema struct{ dialect v1alpha1.Dialect }

func (s standinSchema) Dialect() v1alpha1.Dialect    { return s.dialect }
func (standinSchema) Table() string                  { return standinPrefix + "QUERY_STATS_TOP_MINUTE" }
func (standinSchema) Rows(int64) []*spanner.Mutation { return nil }

// pgTypes turn the GoogleSQL DDL into the PostgreSQL dialect's, whose
// spanner_sys tables have the same columns in lower case (unquoted names
// fold to it).
var pgTypes = strings.NewReplacer("ARRAY<STRING(MAX)>", "varchar[]", "STRING(MAX)", "varchar", "TIMESTAMP", "timestamptz",
	"INT64", "bigint", "FLOAT64", "float8", "BOOL", "boolean", "\n) PRIMARY KEY", ",\n PRIMARY KEY")

func (s standinSchema) DDL() []string {
	ddl := s.googleSQL()
	if s.dialect == v1alpha1.DialectPostgreSQL {
		for i := range ddl {
			ddl[i] = pgTypes.Replace(ddl[i]) + ")"
		}
	}
	return ddl
}

func (standinSchema) googleSQL() []string {
	return []string{
		`CREATE TABLE ` + standinPrefix + `QUERY_STATS_TOP_MINUTE (
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
		`CREATE TABLE ` + standinPrefix + `READ_STATS_TOP_MINUTE (
  INTERVAL_END TIMESTAMP, REQUEST_TAG STRING(MAX), READ_TYPE STRING(MAX), READ_COLUMNS ARRAY<STRING(MAX)>,
  FPRINT INT64, EXECUTION_COUNT INT64, AVG_ROWS FLOAT64, AVG_BYTES FLOAT64, AVG_CPU_SECONDS FLOAT64,
  AVG_LOCKING_DELAY_SECONDS FLOAT64, AVG_CLIENT_WAIT_SECONDS FLOAT64, AVG_LEADER_REFRESH_DELAY_SECONDS FLOAT64,
  RUN_IN_RW_TRANSACTION_EXECUTION_COUNT INT64, AVG_DISK_IO_COST FLOAT64
) PRIMARY KEY (INTERVAL_END, FPRINT)`,
		`CREATE TABLE ` + standinPrefix + `TXN_STATS_TOP_MINUTE (
  INTERVAL_END TIMESTAMP, TRANSACTION_TAG STRING(MAX), FPRINT INT64, READ_COLUMNS ARRAY<STRING(MAX)>,
  WRITE_CONSTRUCTIVE_COLUMNS ARRAY<STRING(MAX)>, WRITE_DELETE_TABLES ARRAY<STRING(MAX)>, ATTEMPT_COUNT INT64,
  COMMIT_ATTEMPT_COUNT INT64, COMMIT_ABORT_COUNT INT64, COMMIT_RETRY_COUNT INT64,
  COMMIT_FAILED_PRECONDITION_COUNT INT64, AVG_PARTICIPANTS FLOAT64, AVG_TOTAL_LATENCY_SECONDS FLOAT64,
  AVG_COMMIT_LATENCY_SECONDS FLOAT64, AVG_BYTES FLOAT64, TOTAL_LATENCY_DISTRIBUTION_JSON_STRING STRING(MAX),
  OPERATIONS_BY_TABLE_JSON_STRING STRING(MAX)
) PRIMARY KEY (INTERVAL_END, FPRINT)`,
	}
}

// startStandin starts a fresh emulator with the stand-in tables and
// returns a data client of their database.
func startStandin(t *testing.T, d v1alpha1.Dialect) *spanner.Client {
	t.Helper()
	emu := emulatortest.Start(t)
	emulatortest.NoMetadataServer(t)
	ep := endpoint.Emulator(emu.Host())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nodes := int32(1)
	tgt := v1alpha1.TargetSpec{Project: "spanbench-test", Database: "stats", EmulatorHost: emu.Host(), Dialect: d,
		Instance: v1alpha1.InstanceSpec{Name: "test", Config: "regional-asia-northeast1", Nodes: &nodes}}
	if err := session.EnsureDatabase(ctx, ep, tgt, standinSchema{dialect: d}, true); err != nil {
		t.Fatalf("creating the stand-in statistics tables: %v", err)
	}
	s, err := session.Open(ctx, ep, tgt)
	if err != nil {
		t.Fatalf("opening the stand-in database: %v", err)
	}
	t.Cleanup(s.Close)
	return s.Client
}

// queryRow is a QUERY_STATS_TOP_MINUTE row.
type queryRow struct {
	end                                        time.Time
	tag                                        string
	fprint, executions                         int64
	latency, cpu, rows, scanned, bytes, remote float64
}

func (r queryRow) mutation() *spanner.Mutation {
	return spanner.Insert(standinPrefix+"QUERY_STATS_TOP_MINUTE",
		[]string{"INTERVAL_END", "REQUEST_TAG", "QUERY_TYPE", "TEXT", "TEXT_FINGERPRINT", "EXECUTION_COUNT",
			"AVG_LATENCY_SECONDS", "AVG_CPU_SECONDS", "AVG_ROWS", "AVG_ROWS_SCANNED", "AVG_BYTES", "AVG_REMOTE_SERVER_CALLS"},
		[]any{r.end, r.tag, "QUERY", "SELECT * FROM usertable WHERE id IN UNNEST(@ids)", r.fprint, r.executions,
			r.latency, r.cpu, r.rows, r.scanned, r.bytes, r.remote})
}

// readRow is a READ_STATS_TOP_MINUTE row.
type readRow struct {
	end                time.Time
	tag                string
	fprint, executions int64
	cpu, rows, bytes   float64
}

func (r readRow) mutation() *spanner.Mutation {
	return spanner.Insert(standinPrefix+"READ_STATS_TOP_MINUTE",
		[]string{"INTERVAL_END", "REQUEST_TAG", "READ_TYPE", "READ_COLUMNS", "FPRINT", "EXECUTION_COUNT",
			"AVG_CPU_SECONDS", "AVG_ROWS", "AVG_BYTES"},
		[]any{r.end, r.tag, "READ", []string{"usertable._exists", "usertable.field0"}, r.fprint, r.executions,
			r.cpu, r.rows, r.bytes})
}

// txnRow is a TXN_STATS_TOP_MINUTE row.
type txnRow struct {
	end                                        time.Time
	tag                                        string
	fprint, attempts, commits, aborts, retries int64
	commitLatency, totalLatency, participants  float64
}

func (r txnRow) mutation() *spanner.Mutation {
	return spanner.Insert(standinPrefix+"TXN_STATS_TOP_MINUTE",
		[]string{"INTERVAL_END", "TRANSACTION_TAG", "FPRINT", "ATTEMPT_COUNT", "COMMIT_ATTEMPT_COUNT",
			"COMMIT_ABORT_COUNT", "COMMIT_RETRY_COUNT", "AVG_COMMIT_LATENCY_SECONDS", "AVG_TOTAL_LATENCY_SECONDS",
			"AVG_PARTICIPANTS", "AVG_BYTES"},
		[]any{r.end, r.tag, r.fprint, r.attempts, r.commits, r.aborts, r.retries, r.commitLatency, r.totalLatency,
			r.participants, 120.0})
}
