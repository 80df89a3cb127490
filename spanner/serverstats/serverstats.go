// Package serverstats reads Spanner's own statistics of a run's operations
// from the SPANNER_SYS tables (QUERY_STATS_TOP_*, READ_STATS_TOP_*,
// TXN_STATS_TOP_*, LOCK_STATS_TOP_*: the minute tables, or the 10-minute
// or hour ones once the minute tables dropped the run), joins them to the
// client's exact operation counts by request and transaction tag, and
// reports server figures per logical operation: CPU with the per-split
// correction, the executions-per-operation factor, latency (average, and
// p50/p99 from the merged latency histograms), rows, bytes, aborts and
// commit latency for transactions, and lock wait from the sampled lock
// requests. docs/server-stats.md explains each figure, its delay and its
// accuracy.
//
// It is Spanner access, used by the manager (which holds the identity that
// may read SPANNER_SYS); it imports neither Kubernetes nor the load engine.
package serverstats

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/spanner"
	"k8s.io/utils/clock"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// SysPrefix is the table prefix of Spanner's statistics tables. Tests give
// the prefix of stand-in tables instead: the emulator has no SPANNER_SYS.
const SysPrefix = "SPANNER_SYS."

// DefaultSettle is how long after a minute closes its statistics are read.
// Spanner publishes a minute's statistics shortly after it ends, once it
// has gathered them from every server; a minute before that would read as
// missing, which would be reported as "not captured".
const DefaultSettle = 2 * time.Minute

// Collector reads the statistics tables of one database.
type Collector struct {
	// Prefix is put before each table name: SysPrefix in production.
	Prefix string
	// Settle is the wait after the last included minute closes before its
	// statistics are read; 0 is DefaultSettle.
	Settle time.Duration
	// Clock tells whether the window has settled.
	Clock clock.PassiveClock
	// MaxRows bounds the rows one table may return for a run; 0 is
	// DefaultMaxRows.
	MaxRows int
	// Dialect is the database's SQL dialect ("" is GoogleSQL): the
	// PostgreSQL dialect names the tables spanner_sys.* and takes
	// positional parameters.
	Dialect v1alpha1.Dialect
	// Granularity is the tables read; the zero value is the finest that
	// still holds the window at the time of reading (ChooseGranularity).
	// A caller that counts the client's operations per interval first
	// chooses it and sets it here, so both use the same intervals.
	Granularity Granularity
}

// DefaultMaxRows bounds the rows read from one table: the minute tables
// keep 6 hours (360 minutes) and a run has at most 256 operations: 92,160
// rows a table at most, unless the tables are not what they seem.
const DefaultMaxRows = 100_000

// Operation is one operation of a run as the client counted it.
type Operation struct {
	// Name is the operation's name in the run.
	Name string
	// RequestTag is the tag of its reads and queries ("" for none).
	RequestTag string
	// TransactionTag is the tag of its read-write transactions ("" for none).
	TransactionTag string
	// Ops is the client's exact count of logical operations (successful or
	// not, each counted once whatever its retries) per whole statistics
	// interval of the window (minutes for the minute tables), keyed by the
	// interval's end (Window.IntervalEnds).
	Ops map[time.Time]int64
}

// Result is what the statistics tables say about a run's operations.
type Result struct {
	// Window is the run's window as given.
	Window Window
	// Granularity is the tables read: the minute tables unless the run
	// was collected after they dropped its window.
	Granularity Granularity
	// Minutes are the ends of the whole intervals read (minutes for the
	// minute tables): the intervals that both began and closed inside the
	// window.
	Minutes []time.Time
	// Operations are the figures per operation, in the order given.
	Operations []OperationStats
	// LockRanges are the row ranges with the most lock wait among those
	// whose sampled lock requests name one of the run's transaction tags,
	// at most MaxLockRanges, the most waited on first.
	LockRanges []LockRange
	// Absent are the documented tables (QUERY_STATS_TOP_MINUTE) and
	// columns (QUERY_STATS_TOP_MINUTE.AVG_REMOTE_SERVER_CALLS) the
	// database does not have: the figures they hold are not captured, and
	// a table lacking a column its rows need (the interval, the tag, the
	// count, the lock samples) is not read. Notes say which figures.
	Absent []string
	// Notes say what limits the figures: no whole minute in the window,
	// minutes past the tables' retention, absent tables and columns.
	Notes []string
}

// NotSettledError says the window's statistics may not be published yet.
type NotSettledError struct {
	// ReadyAt is when they will be read.
	ReadyAt time.Time
}

func (e *NotSettledError) Error() string {
	return fmt.Sprintf("the statistics of the run's last minute are read from %s on", e.ReadyAt.UTC().Format(time.RFC3339))
}

// ReadyAt is when the statistics of w's last whole minute are read.
func (c Collector) ReadyAt(w Window) time.Time {
	settle := c.Settle
	if settle <= 0 {
		settle = DefaultSettle
	}
	return w.Aligned().End.Add(settle)
}

// Collect reads the statistics of ops over window w from the database of
// client. It returns a *NotSettledError before ReadyAt(w).
func (c Collector) Collect(ctx context.Context, client *spanner.Client, w Window, ops []Operation) (*Result, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	g := c.Granularity
	if g.Length <= 0 {
		g = ChooseGranularity(w, c.Clock.Now())
	}
	t, err := tablesFor(c.Prefix, g)
	if err != nil {
		return nil, err
	}
	if now := c.Clock.Now(); now.Before(c.ReadyAt(w)) {
		return nil, &NotSettledError{ReadyAt: c.ReadyAt(w)}
	}
	ends := w.IntervalEnds(g.Length)
	res := &Result{Window: w, Granularity: g, Minutes: ends, Notes: notes(g, ends, c.Clock.Now())}
	var rows statRows
	if len(res.Minutes) > 0 {
		maxRows := c.MaxRows
		if maxRows <= 0 {
			maxRows = DefaultMaxRows
		}
		rd := reader{client: client, w: w.AlignedTo(g.Length), granularity: g, maxRows: maxRows, dialect: c.Dialect.OrDefault()}
		if rows, err = t.readAll(ctx, rd, ops); err != nil {
			return nil, err
		}
	}
	for _, op := range ops {
		res.Operations = append(res.Operations, aggregate(op, g, res.Minutes, rows))
	}
	res.LockRanges = lockRanges(ops, rows.locks)
	for _, a := range rows.absent {
		res.Absent = append(res.Absent, a.columnsOf()...)
		res.Notes = append(res.Notes, a.note())
	}
	if bad := unreadable(rows); bad > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d rows' latency histograms or lock samples could not be read "+
			"and were left out of the percentiles and lock waits", bad))
	}
	return res, nil
}

// notes are the caveats of reading the intervals ending at ends of the
// g tables at now.
func notes(g Granularity, ends []time.Time, now time.Time) []string {
	var out []string
	if g != Minute {
		out = append(out, fmt.Sprintf("read from the %s tables: the minute tables keep only %s", g.Suffix, Minute.Retention))
	}
	if len(ends) == 0 {
		if g == Minute {
			return append(out, "the window holds no whole statistics minute: nothing was read")
		}
		return append(out, fmt.Sprintf("the window holds no whole %s interval of the %s tables: nothing was read", g.Length, g.Suffix))
	}
	expired := 0
	for _, m := range ends {
		if !m.After(now.Add(-g.Retention)) {
			expired++
		}
	}
	if expired == 0 {
		return out
	}
	unit := "intervals"
	if g == Minute {
		unit = "minutes"
	}
	return append(out, fmt.Sprintf("%d of %d %s are older than the %s Spanner keeps %s statistics; "+
		"their shapes read as not captured", expired, len(ends), unit, g.Retention, g.Suffix))
}
