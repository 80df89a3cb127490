package serverstats

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"cloud.google.com/go/spanner"
	"google.golang.org/genproto/googleapis/api/distribution"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// prefixPattern is a schema name and a dot ("SPANNER_SYS.") or a table
// name prefix ("STANDIN_"): the one piece of SQL not passed as a parameter,
// since table names cannot be.
var prefixPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,127}[._]$`)

// tables are the full names of the statistics tables read.
type tables struct {
	query, read, txn, lock string
}

func tablesFor(prefix string, g Granularity) (tables, error) {
	if !prefixPattern.MatchString(prefix) {
		return tables{}, fmt.Errorf("table prefix %q is not a schema name and dot or a name prefix ending in _", prefix)
	}
	return tables{query: QueryStatsTop.Table(prefix, g), read: ReadStatsTop.Table(prefix, g),
		txn: TxnStatsTop.Table(prefix, g), lock: LockStatsTop.Table(prefix, g)}, nil
}

// selectSQL selects cols of table for the run's tags in dialect d; tag
// is the tag column. The statements select the intervals that closed in
// the aligned window (INTERVAL_END in (start, end]) and the run's tags.
// Unquoted names fold to the PostgreSQL dialect's lower-case spanner_sys
// names, so only the parameters differ by dialect.
func selectSQL(d v1alpha1.Dialect, table, tag string, cols []string) string {
	where := "INTERVAL_END > @start AND INTERVAL_END <= @end AND %s IN UNNEST(@tags) LIMIT @limit"
	if d == v1alpha1.DialectPostgreSQL {
		where = "INTERVAL_END > $1 AND INTERVAL_END <= $2 AND %s = ANY($3) LIMIT $4"
	}
	return "SELECT " + strings.Join(cols, ", ") + " FROM " + table + " WHERE " + fmt.Sprintf(where, tag)
}

// lockSQL selects the lock rows of the window: the run's transaction
// tags are inside the samples, so they are matched once the samples are
// read (tags is nil in its parameters).
func lockSQL(d v1alpha1.Dialect, table string, cols []string) string {
	where := "INTERVAL_END > @start AND INTERVAL_END <= @end LIMIT @limit"
	if d == v1alpha1.DialectPostgreSQL {
		where = "INTERVAL_END > $1 AND INTERVAL_END <= $2 LIMIT $3"
	}
	return "SELECT " + strings.Join(cols, ", ") + " FROM " + table + " WHERE " + where
}

// params are the statement's parameters in dialect d; nil tags are none
// (the lock statement's).
func params(d v1alpha1.Dialect, w Window, tags []string, limit int64) map[string]any {
	if d == v1alpha1.DialectPostgreSQL {
		if tags == nil {
			return map[string]any{"p1": w.Start, "p2": w.End, "p3": limit}
		}
		return map[string]any{"p1": w.Start, "p2": w.End, "p3": tags, "p4": limit}
	}
	if tags == nil {
		return map[string]any{"start": w.Start, "end": w.End, "limit": limit}
	}
	return map[string]any{"start": w.Start, "end": w.End, "tags": tags, "limit": limit}
}

// stmtRow is one minute of one statement shape (a query or a read).
type stmtRow struct {
	source     string
	end        time.Time
	tag        string
	executions int64
	latency    spanner.NullFloat64
	cpu        spanner.NullFloat64
	rows       spanner.NullFloat64
	scanned    spanner.NullFloat64
	bytes      spanner.NullFloat64
	remote     spanner.NullFloat64
	// dist is the LATENCY_DISTRIBUTION histogram (queries only); badDist
	// says the row had one that could not be read.
	dist    *distribution.Distribution
	badDist bool
}

// txnRow is one minute of one transaction shape.
type txnRow struct {
	end            time.Time
	tag            string
	attempts       int64
	commitAttempts int64
	aborts         int64
	retries        int64
	participants   spanner.NullFloat64
	totalLatency   spanner.NullFloat64
	commitLatency  spanner.NullFloat64
	bytes          spanner.NullFloat64
	// dist is the TOTAL_LATENCY_DISTRIBUTION histogram.
	dist    *distribution.Distribution
	badDist bool
}

// lockRow is one interval of one contended row range.
type lockRow struct {
	end     time.Time
	key     []byte
	wait    spanner.NullFloat64
	samples []lockSample
	bad     bool
}

// statRows are the rows of the four tables for a run's tags.
type statRows struct {
	stmts []stmtRow
	txns  []txnRow
	locks []lockRow
	// absent are the tables, and the documented columns of tables, the
	// database does not have.
	absent []absence
}

// reader runs the statements over one window.
type reader struct {
	client *spanner.Client
	w      Window
	// granularity is the tables' interval.
	granularity Granularity
	// maxRows bounds what one table may return: its rows are input.
	maxRows int
	dialect v1alpha1.Dialect
}

func (t tables) readAll(ctx context.Context, rd reader, ops []Operation) (statRows, error) {
	reqTags, txnTags := tagsOf(ops)
	pl := &planner{ctx: ctx, rd: rd}
	for _, s := range []struct {
		read  tableRead
		table string
	}{{queryRead, t.query}, {readRead, t.read}} {
		p, ok, err := pl.plan(s.read, s.table)
		if err != nil {
			return statRows{}, err
		}
		if !ok {
			continue
		}
		rows, err := rd.stmts(ctx, s.table, selectSQL(rd.dialect, s.table, s.read.tag, p.cols), reqTags)
		if err != nil {
			return statRows{}, fmt.Errorf("reading %s: %w", s.table, err)
		}
		pl.out.stmts = append(pl.out.stmts, rows...)
	}
	p, ok, err := pl.plan(txnRead, t.txn)
	if err != nil {
		return statRows{}, err
	}
	if ok {
		if pl.out.txns, err = rd.txns(ctx, selectSQL(rd.dialect, t.txn, txnRead.tag, p.cols), txnTags); err != nil {
			return statRows{}, fmt.Errorf("reading %s: %w", t.txn, err)
		}
	}
	if pl.missing == pl.probed {
		// No statistics table at all: the database (or the prefix) is not
		// what it seems, which is the collection's failure, not a note.
		return statRows{}, fmt.Errorf("reading the statistics tables: %w", pl.out.absent[0].noTable)
	}
	if len(txnTags) == 0 {
		return pl.out, nil
	}
	if p, ok, err = pl.plan(lockRead, t.lock); err != nil || !ok {
		return pl.out, err
	}
	if pl.out.locks, err = rd.locks(ctx, lockSQL(rd.dialect, t.lock, p.cols)); err != nil {
		return statRows{}, fmt.Errorf("reading %s: %w", t.lock, err)
	}
	return pl.out, nil
}

// tagsOf returns the operations' request and transaction tags, never nil:
// nil is the lock statement's "no tags".
func tagsOf(ops []Operation) (reqTags, txnTags []string) {
	reqTags, txnTags = []string{}, []string{}
	for _, op := range ops {
		if op.RequestTag != "" {
			reqTags = append(reqTags, op.RequestTag)
		}
		if op.TransactionTag != "" {
			txnTags = append(txnTags, op.TransactionTag)
		}
	}
	return reqTags, txnTags
}

// planner probes the tables' columns and plans their reads, recording
// what is absent in out and counting the tables probed and missing.
type planner struct {
	ctx             context.Context
	rd              reader
	out             statRows
	probed, missing int
}

// plan probes a table's columns and plans its read; ok is false when it
// cannot be read, which is recorded, not an error.
func (pl *planner) plan(tr tableRead, table string) (plan, bool, error) {
	p, a, err := pl.rd.planRead(pl.ctx, tr, table)
	if err != nil {
		return p, false, err
	}
	if pl.probed++; a != nil && a.noTable != nil {
		pl.missing++
	}
	if a != nil {
		pl.out.absent = append(pl.out.absent, *a)
		return p, !a.unreadable, nil
	}
	return p, true, nil
}

// query runs sql for tags as a single-use strong read (the way Spanner's
// documentation queries SPANNER_SYS; past minutes do not change, so the
// three tables need no common timestamp) and calls row for each row, up
// to maxRows.
func (rd reader) query(ctx context.Context, sql string, tags []string, row func(*spanner.Row) error) error {
	stmt := spanner.Statement{SQL: sql, Params: params(rd.dialect, rd.w, tags, int64(rd.maxRows)+1)}
	n := 0
	return rd.client.Single().Query(ctx, stmt).Do(func(r *spanner.Row) error {
		if n++; n > rd.maxRows {
			return fmt.Errorf("more than %d rows for the run's tags: refusing to read further", rd.maxRows)
		}
		return row(r)
	})
}

func (rd reader) stmts(ctx context.Context, table, sql string, tags []string) ([]stmtRow, error) {
	var out []stmtRow
	err := rd.query(ctx, sql, tags, func(r *spanner.Row) error {
		var end spanner.NullTime
		var tag spanner.NullString
		var n spanner.NullInt64
		s := stmtRow{source: table}
		var dist spanner.NullString
		if err := r.Columns(&end, &tag, &n, &s.latency, &s.cpu, &s.rows, &s.scanned, &s.bytes, &s.remote, &dist); err != nil {
			return err
		}
		s.dist, s.badDist = readDistribution(dist)
		if !end.Valid || !n.Valid || n.Int64 <= 0 {
			return nil // a row without a minute or executions says nothing
		}
		s.end, s.tag, s.executions = end.Time.UTC(), tag.StringVal, n.Int64
		out = append(out, s)
		return nil
	})
	return out, err
}

func (rd reader) txns(ctx context.Context, sql string, tags []string) ([]txnRow, error) {
	var out []txnRow
	err := rd.query(ctx, sql, tags, func(r *spanner.Row) error {
		var end spanner.NullTime
		var tag spanner.NullString
		var attempts, commits, aborts, retries spanner.NullInt64
		var t txnRow
		var dist spanner.NullString
		if err := r.Columns(&end, &tag, &attempts, &commits, &aborts, &retries,
			&t.participants, &t.totalLatency, &t.commitLatency, &t.bytes, &dist); err != nil {
			return err
		}
		t.dist, t.badDist = readDistribution(dist)
		if !end.Valid || !attempts.Valid || attempts.Int64 <= 0 {
			return nil
		}
		t.end, t.tag = end.Time.UTC(), tag.StringVal
		t.attempts, t.commitAttempts, t.aborts, t.retries = attempts.Int64, commits.Int64, aborts.Int64, retries.Int64
		out = append(out, t)
		return nil
	})
	return out, err
}

func (rd reader) locks(ctx context.Context, sql string) ([]lockRow, error) {
	var out []lockRow
	err := rd.query(ctx, sql, nil, func(r *spanner.Row) error {
		var end spanner.NullTime
		var samples spanner.NullString
		var l lockRow
		if err := r.Columns(&end, &l.key, &l.wait, &samples); err != nil {
			return err
		}
		if !end.Valid || !samples.Valid {
			return nil // an interval without samples names no operation
		}
		l.end = end.Time.UTC()
		var err error
		if l.samples, err = parseLockSamples(samples.StringVal); err != nil {
			l.bad, l.samples = true, nil
		}
		out = append(out, l)
		return nil
	})
	return out, err
}

// readDistribution parses a histogram column: nil for NULL, bad when it
// cannot be read (the row's other figures stand).
func readDistribution(v spanner.NullString) (d *distribution.Distribution, bad bool) {
	if !v.Valid {
		return nil, false
	}
	d, err := parseDistribution(v.StringVal)
	return d, err != nil
}
