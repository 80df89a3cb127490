// Package statstest holds stand-ins for Spanner's statistics tables
// (SPANNER_SYS.*_STATS_TOP_*), which the emulator does not have, and row
// builders, so tests run the statistics collector's SQL for real on the
// emulator. The stand-ins are built from the collector's own table of the
// documented columns (serverstats.DocumentedTables), never from a second
// list. It is linked into tests only.
package statstest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/spanner"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/serverstats"
)

// Prefix names the stand-in tables: the emulator has no SPANNER_SYS.
const Prefix = "STANDIN_"

// Schema creates, for each documented statistics table and each of its
// MINUTE, 10MINUTE and HOUR variants, a table of its documented columns
// and types, less the ARRAY<STRUCT> columns no DDL can declare
// (LATENCY_DISTRIBUTION, SAMPLE_LOCK_REQUESTS, ...): their documented
// JSON string forms, which the collector reads, are STRING columns as in
// Spanner. In the PostgreSQL dialect the columns are the same in lower
// case (unquoted names fold to it) with that dialect's types. The
// interval's end and the shape's fingerprint (the row range's key for
// locks) are the key: a shape has one row per interval.
type Schema struct {
	dialect v1alpha1.Dialect
	// without are columns (TABLE_KIND.COLUMN) and tables (TABLE_KIND) left
	// out, to stand in for a database that lacks them.
	without []string
}

// NewSchema is the stand-in schema in dialect d.
func NewSchema(d v1alpha1.Dialect) Schema { return Schema{dialect: d} }

// Without is the schema less the columns named kind.COLUMN
// ("QUERY_STATS_TOP.AVG_REMOTE_SERVER_CALLS") and the tables named by
// their kind ("LOCK_STATS_TOP"): a database whose tables lack a
// documented column, or that lacks a table.
func (s Schema) Without(columns ...string) Schema {
	s.without = append(slices.Clone(s.without), columns...)
	return s
}

// Dialect implements workload.Schema.
func (s Schema) Dialect() v1alpha1.Dialect { return s.dialect }

// Table implements workload.Schema.
func (Schema) Table() string { return Prefix + "QUERY_STATS_TOP_MINUTE" }

// Rows implements workload.Schema: the stand-ins hold no dataset.
func (Schema) Rows(int64) []*spanner.Mutation { return nil }

// Granularities are the tables' interval variants.
var Granularities = []serverstats.Granularity{serverstats.Minute, serverstats.TenMinute, serverstats.Hour}

// keys are the stand-ins' primary keys.
var keys = map[string][]string{
	serverstats.QueryStatsTop.Kind: {"INTERVAL_END", "TEXT_FINGERPRINT"},
	serverstats.ReadStatsTop.Kind:  {"INTERVAL_END", "FPRINT"},
	serverstats.TxnStatsTop.Kind:   {"INTERVAL_END", "FPRINT"},
	serverstats.LockStatsTop.Kind:  {"INTERVAL_END", "ROW_RANGE_START_KEY"},
}

// googleSQLTypes are the DDL types of the documented types.
var googleSQLTypes = map[serverstats.SQLType]string{serverstats.Timestamp: "TIMESTAMP", serverstats.String: "STRING(MAX)",
	serverstats.Int64: "INT64", serverstats.Float64: "FLOAT64", serverstats.Bool: "BOOL", serverstats.Bytes: "BYTES(MAX)",
	serverstats.StringArray: "ARRAY<STRING(MAX)>"}

// Columns are the stand-in columns of t: its documented columns that a
// DDL can declare, less those left out.
func (s Schema) Columns(t serverstats.TableSchema) []serverstats.Column {
	var out []serverstats.Column
	for _, c := range t.Columns {
		if c.Type == serverstats.StructArray || slices.Contains(s.without, t.Kind+"."+c.Name) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// DDL implements workload.Schema.
func (s Schema) DDL() []string {
	var ddl []string
	for _, g := range Granularities {
		for _, t := range serverstats.DocumentedTables() {
			if !slices.Contains(s.without, t.Kind) {
				ddl = append(ddl, s.createTable(t, g))
			}
		}
	}
	return ddl
}

func (s Schema) createTable(t serverstats.TableSchema, g serverstats.Granularity) string {
	pg := s.dialect == v1alpha1.DialectPostgreSQL
	var cols []string
	for _, c := range s.Columns(t) {
		typ := googleSQLTypes[c.Type]
		if pg {
			typ = c.Type.PostgreSQL()
		}
		cols = append(cols, c.Name+" "+typ)
	}
	key := strings.Join(keys[t.Kind], ", ")
	if pg {
		return fmt.Sprintf("CREATE TABLE %s (\n  %s,\n  PRIMARY KEY (%s)\n)", t.Table(Prefix, g), strings.Join(cols, ",\n  "), key)
	}
	return fmt.Sprintf("CREATE TABLE %s (\n  %s\n) PRIMARY KEY (%s)", t.Table(Prefix, g), strings.Join(cols, ",\n  "), key)
}

// Row is a row of a stand-in table.
type Row interface {
	// Mutation inserts the row into the full stand-in table.
	Mutation() *spanner.Mutation
	// values are its table's kind, its suffix ("" is MINUTE) and its
	// columns' values.
	values() (t serverstats.TableSchema, suffix string, cols map[string]any)
}

// insert inserts r into the stand-in table of s, leaving out the columns
// s lacks.
func (s Schema) insert(r Row) *spanner.Mutation {
	t, suffix, cols := r.values()
	if suffix == "" {
		suffix = serverstats.Minute.Suffix
	}
	for c := range cols {
		if slices.Contains(s.without, t.Kind+"."+c) {
			delete(cols, c)
		}
	}
	return spanner.InsertMap(Prefix+t.Kind+"_"+suffix, cols)
}

// Mutations insert rows into the stand-in tables of s.
func (s Schema) Mutations(rows ...Row) []*spanner.Mutation {
	out := make([]*spanner.Mutation, 0, len(rows))
	for _, r := range rows {
		out = append(out, s.insert(r))
	}
	return out
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
func (r LockRow) Mutation() *spanner.Mutation { return Schema{}.insert(r) }

func (r LockRow) values() (serverstats.TableSchema, string, map[string]any) {
	samples := make([]map[string]string, 0, len(r.Samples))
	for _, s := range r.Samples {
		samples = append(samples, map[string]string{"column": s.Column, "lock_mode": s.Mode, "transaction_tag": s.Tag})
	}
	b, err := json.Marshal(samples)
	if err != nil {
		panic(err)
	}
	return serverstats.LockStatsTop, r.Suffix, map[string]any{"INTERVAL_END": r.End, "ROW_RANGE_START_KEY": []byte(r.Key),
		"LOCK_WAIT_SECONDS": r.Wait, "SAMPLE_LOCK_REQUESTS_JSON_STRING": string(b)}
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
func (r QueryRow) Mutation() *spanner.Mutation { return Schema{}.insert(r) }

func (r QueryRow) values() (serverstats.TableSchema, string, map[string]any) {
	return serverstats.QueryStatsTop, r.Suffix, map[string]any{"INTERVAL_END": r.End, "REQUEST_TAG": r.Tag,
		"QUERY_TYPE": "QUERY", "TEXT": "SELECT * FROM usertable WHERE id IN UNNEST(@ids)", "TEXT_FINGERPRINT": r.Fprint,
		"EXECUTION_COUNT": r.Executions, "AVG_LATENCY_SECONDS": r.Latency, "AVG_CPU_SECONDS": r.CPU, "AVG_ROWS": r.Rows,
		"AVG_ROWS_SCANNED": r.Scanned, "AVG_BYTES": r.Bytes, "AVG_REMOTE_SERVER_CALLS": r.Remote,
		"LATENCY_DISTRIBUTION_JSON_STRING": r.Dist.json()}
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
func (r ReadRow) Mutation() *spanner.Mutation { return Schema{}.insert(r) }

func (r ReadRow) values() (serverstats.TableSchema, string, map[string]any) {
	return serverstats.ReadStatsTop, r.Suffix, map[string]any{"INTERVAL_END": r.End, "REQUEST_TAG": r.Tag,
		"READ_TYPE": "READ", "READ_COLUMNS": []string{"usertable._exists", "usertable.field0"}, "FPRINT": r.Fprint,
		"EXECUTION_COUNT": r.Executions, "AVG_CPU_SECONDS": r.CPU, "AVG_ROWS": r.Rows, "AVG_BYTES": r.Bytes}
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
func (r TxnRow) Mutation() *spanner.Mutation { return Schema{}.insert(r) }

func (r TxnRow) values() (serverstats.TableSchema, string, map[string]any) {
	return serverstats.TxnStatsTop, r.Suffix, map[string]any{"INTERVAL_END": r.End, "TRANSACTION_TAG": r.Tag,
		"FPRINT": r.Fprint, "ATTEMPT_COUNT": r.Attempts, "COMMIT_ATTEMPT_COUNT": r.Commits, "COMMIT_ABORT_COUNT": r.Aborts,
		"COMMIT_RETRY_COUNT": r.Retries, "AVG_COMMIT_LATENCY_SECONDS": r.CommitLatency,
		"AVG_TOTAL_LATENCY_SECONDS": r.TotalLatency, "AVG_PARTICIPANTS": r.Participants, "AVG_BYTES": 120.0,
		"TOTAL_LATENCY_DISTRIBUTION_JSON_STRING": r.Dist.json()}
}

// json is the column's value: NULL without a distribution.
func (d *Distribution) json() spanner.NullString {
	if d == nil {
		return spanner.NullString{}
	}
	return spanner.NullString{StringVal: d.JSON(), Valid: true}
}
