package serverstats

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"cloud.google.com/go/spanner"
	"google.golang.org/api/iterator"
	"google.golang.org/grpc/codes"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// field is one value the reader scans from a statistics table, at a
// fixed position in the row.
type field struct {
	// column is the documented column that holds it.
	column string
	// typ is its documented type (the type of the NULL put in its place
	// when the column is absent).
	typ SQLType
	// figure names what is not captured without it; "" marks a column a
	// row means nothing without (the interval, the tag, the count, the
	// samples), without which the table is not read at all.
	figure string
}

// tableRead is how one statistics table is read: its documented schema
// and the fields scanned from it, in order.
type tableRead struct {
	schema TableSchema
	// tag is the tag column the run's tags are matched in ("" for the lock
	// table, whose tags are inside the samples).
	tag    string
	fields []field
	// lacks are fields of a shared layout the table does not have by its
	// documentation (READ_STATS has no latency): always NULL, never noted.
	lacks []string
}

// stmtFields are the fields of a query or read row (one layout, so one
// scanner reads both tables).
var stmtFields = []field{
	{"INTERVAL_END", Timestamp, ""}, {"REQUEST_TAG", String, ""}, {"EXECUTION_COUNT", Int64, ""},
	{"AVG_LATENCY_SECONDS", Float64, "the average latency"}, {"AVG_CPU_SECONDS", Float64, "CPU"},
	{"AVG_ROWS", Float64, "rows returned"}, {"AVG_ROWS_SCANNED", Float64, "rows scanned"},
	{"AVG_BYTES", Float64, "bytes returned"}, {"AVG_REMOTE_SERVER_CALLS", Float64, "remote server calls"},
	// The histogram is read from its JSON string column: Spanner documents
	// it for both dialects (the PostgreSQL dialect has no ARRAY<STRUCT>
	// LATENCY_DISTRIBUTION), and Go merges its buckets, which both sums
	// the intervals correctly and needs no SPANNER_SYS.DISTRIBUTION_PERCENTILE,
	// a function the emulator lacks.
	{"LATENCY_DISTRIBUTION_JSON_STRING", String, "latency percentiles"},
}

// The tables as the collector reads them.
var (
	queryRead = tableRead{schema: QueryStatsTop, tag: "REQUEST_TAG", fields: stmtFields}
	readRead  = tableRead{schema: ReadStatsTop, tag: "REQUEST_TAG", fields: stmtFields,
		lacks: []string{"AVG_LATENCY_SECONDS", "AVG_ROWS_SCANNED", "AVG_REMOTE_SERVER_CALLS", "LATENCY_DISTRIBUTION_JSON_STRING"}}
	txnRead = tableRead{schema: TxnStatsTop, tag: "TRANSACTION_TAG", fields: []field{
		{"INTERVAL_END", Timestamp, ""}, {"TRANSACTION_TAG", String, ""}, {"ATTEMPT_COUNT", Int64, ""},
		{"COMMIT_ATTEMPT_COUNT", Int64, "commit attempts"}, {"COMMIT_ABORT_COUNT", Int64, "aborts"},
		{"COMMIT_RETRY_COUNT", Int64, "retries"}, {"AVG_PARTICIPANTS", Float64, "participants"},
		{"AVG_TOTAL_LATENCY_SECONDS", Float64, "the total latency"},
		{"AVG_COMMIT_LATENCY_SECONDS", Float64, "the commit latency"}, {"AVG_BYTES", Float64, "bytes written"},
		{"TOTAL_LATENCY_DISTRIBUTION_JSON_STRING", String, "transaction latency percentiles"},
	}}
	lockRead = tableRead{schema: LockStatsTop, fields: []field{
		{"INTERVAL_END", Timestamp, ""}, {"ROW_RANGE_START_KEY", Bytes, "the contended keys"},
		{"LOCK_WAIT_SECONDS", Float64, "lock wait"},
		// The samples carry the tags: without them no row names an operation.
		{"SAMPLE_LOCK_REQUESTS_JSON_STRING", String, ""},
	}}
)

// plan is what one read of a table selects.
type plan struct {
	// cols are the select list, one per field: the column, or a NULL of
	// its type where the table lacks it.
	cols []string
	// absent are the documented columns the database's table lacks.
	absent []field
	// unreadable says a column the rows mean nothing without is absent.
	unreadable bool
}

// plan selects the fields of t from a table whose columns are present
// (upper-cased), in dialect d.
func (t tableRead) plan(d v1alpha1.Dialect, present map[string]bool) plan {
	var p plan
	for _, f := range t.fields {
		switch {
		case t.lacksField(f.column):
			p.cols = append(p.cols, nullOf(d, f.typ))
		case present[f.column]:
			p.cols = append(p.cols, f.column)
		default:
			p.cols = append(p.cols, nullOf(d, f.typ))
			p.absent = append(p.absent, f)
			p.unreadable = p.unreadable || f.figure == ""
		}
	}
	return p
}

func (t tableRead) lacksField(column string) bool { return slices.Contains(t.lacks, column) }

// nullOf is a NULL of type typ in dialect d.
func nullOf(d v1alpha1.Dialect, typ SQLType) string {
	if d == v1alpha1.DialectPostgreSQL {
		return "CAST(NULL AS " + typ.PostgreSQL() + ")"
	}
	return "CAST(NULL AS " + string(typ) + ")"
}

// noTableError says the database has no table of that name; it wraps
// the database's answer.
type noTableError struct {
	table string
	err   error
}

func (e *noTableError) Error() string { return e.table + " does not exist: " + e.err.Error() }
func (e *noTableError) Unwrap() error { return e.err }

// isNoTable tells the answer to a query of a table that does not exist:
// NotFound in the PostgreSQL dialect, InvalidArgument "Table not found"
// in GoogleSQL (as the emulator answers; the manager classifies the same
// two as StatisticsNotFound).
func isNoTable(err error) bool {
	c := spanner.ErrCode(err)
	return c == codes.NotFound || c == codes.InvalidArgument && strings.Contains(strings.ToLower(spanner.ErrDesc(err)), "not found")
}

// columns are the names (upper-cased) of the columns table has, read
// from the metadata of a query that returns no row: Spanner documents
// neither SPANNER_SYS nor spanner_sys in INFORMATION_SCHEMA.COLUMNS (its
// information schema page only shows SPANNER_SYS tables being filtered
// out of INFORMATION_SCHEMA.TABLES), whereas a query's result metadata
// names its columns in both dialects. A table the database does not have
// is errNoTable.
func (rd reader) columns(ctx context.Context, table string) (map[string]bool, error) {
	it := rd.client.Single().Query(ctx, spanner.Statement{SQL: "SELECT * FROM " + table + " LIMIT 0"})
	defer it.Stop()
	for {
		_, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			if isNoTable(err) {
				return nil, &noTableError{table: table, err: err}
			}
			return nil, err
		}
	}
	out := map[string]bool{}
	for _, f := range it.Metadata.GetRowType().GetFields() {
		out[strings.ToUpper(f.GetName())] = true
	}
	return out, nil
}

// absence is what one table of the database lacks.
type absence struct {
	// table is the table's name without its prefix (QUERY_STATS_TOP_MINUTE).
	table      string
	source     string
	missing    []field
	unreadable bool
	// noTable is the database's answer when the table does not exist.
	noTable *noTableError
}

// planRead probes table and plans its read; ok is false when it cannot be
// read (no such table, or a column its rows need is absent), which is
// reported, never an error: the other tables are read.
func (rd reader) planRead(ctx context.Context, t tableRead, table string) (plan, *absence, error) {
	short := t.schema.Kind + "_" + rd.granularity.Suffix
	present, err := rd.columns(ctx, table)
	if nt := (*noTableError)(nil); errors.As(err, &nt) {
		return plan{}, &absence{table: short, source: t.schema.Source, noTable: nt, unreadable: true}, nil
	}
	if err != nil {
		return plan{}, nil, fmt.Errorf("reading the columns of %s: %w", table, err)
	}
	p := t.plan(rd.dialect, present)
	if len(p.absent) == 0 {
		return p, nil, nil
	}
	return p, &absence{table: short, source: t.schema.Source, missing: p.absent, unreadable: p.unreadable}, nil
}

// note says what a's table lacks and what is not captured for it.
func (a absence) note() string {
	if a.noTable != nil {
		return fmt.Sprintf("%s does not exist (documented at %s): its figures were not captured", a.table, a.source)
	}
	names, figures := make([]string, 0, len(a.missing)), []string{}
	for _, f := range a.missing {
		names = append(names, f.column)
		if f.figure != "" {
			figures = append(figures, f.figure)
		}
	}
	if a.unreadable {
		return fmt.Sprintf("%s lacks %s (documented at %s), without which its rows name no operation: "+
			"it was not read, and its shapes read as not captured", a.table, strings.Join(names, ", "), a.source)
	}
	return fmt.Sprintf("%s lacks %s (documented at %s): %s not captured", a.table, strings.Join(names, ", "),
		a.source, strings.Join(figures, ", "))
}

// columnsOf are a's absent columns as TABLE.COLUMN, or TABLE when the
// table is absent.
func (a absence) columnsOf() []string {
	if a.noTable != nil {
		return []string{a.table}
	}
	out := make([]string, 0, len(a.missing))
	for _, f := range a.missing {
		out = append(out, a.table+"."+f.column)
	}
	return out
}
