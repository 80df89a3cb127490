package serverstats_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/spanner"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/statstest"
	"github.com/spanbench/spanbench/spanner/serverstats"
)

// The READ-vs-SQL seed's 10-key list over 4 splits, scaled to one minute:
// 111,474 logical reads a minute, which READ_STATS counts as 445,896
// executions (one per split) of AVG_ROWS 2.5 and AVG_CPU_SECONDS 0.000141;
// the same list through SQL is one execution each of 0.001532 s CPU, 10
// rows and 4 remote server calls.
const (
	readOpsPerMinute = 111474
	splits           = 4
	readCPU          = 0.000141
	sqlOpsPerMinute  = 108785
	sqlCPU           = 0.001532
	sqlSlow          = 4000
)

var (
	windowStart = time.Date(2026, 11, 24, 11, 59, 30, 0, time.UTC)
	windowEnd   = time.Date(2026, 11, 24, 12, 3, 10, 0, time.UTC)
	// The whole minutes of the window close at 12:01, 12:02 and 12:03.
	m1, m2, m3 = minute(1), minute(2), minute(3)
)

func minute(n int) time.Time { return time.Date(2026, 11, 24, 12, n, 0, 0, time.UTC) }

func perMinute(n int64, minutes ...time.Time) map[time.Time]int64 {
	ops := map[time.Time]int64{}
	for _, m := range minutes {
		ops[m] = n
	}
	return ops
}

func seedRows() []*spanner.Mutation {
	readTag, sqlTag, txnTag := v1alpha1.RequestTag("seed", "readkeys-read"), v1alpha1.RequestTag("seed", "readkeys-sql"),
		v1alpha1.RequestTag("seed", "update")
	var ms []*spanner.Mutation
	for _, m := range []time.Time{m1, m2, m3} {
		ms = append(ms, statstest.ReadRow{End: m, Tag: readTag, Fprint: -7565956582432637727, Executions: splits * readOpsPerMinute,
			CPU: readCPU, Rows: 2.5, Bytes: 2607.25}.Mutation())
	}
	// The minutes around the window hold other traffic (a warm-up before,
	// the next run after): including them would change every figure.
	for _, m := range []time.Time{minute(0), minute(4)} {
		ms = append(ms, statstest.ReadRow{End: m, Tag: readTag, Fprint: -7565956582432637727, Executions: 1000, CPU: 0.5, Rows: 1, Bytes: 1}.Mutation())
	}
	// Another run's traffic in the same minute.
	ms = append(ms, statstest.ReadRow{End: m2, Tag: v1alpha1.RequestTag("other", "readkeys-read"), Fprint: 42, Executions: 999999,
		CPU: 0.9, Rows: 1, Bytes: 1}.Mutation())
	// The SQL shape fell out of the TOP table in the third minute. Its
	// latency histograms: every execution of the first minute took 2-4 ms,
	// the second minute had sqlSlow executions of 32-64 ms.
	for i, m := range []time.Time{m1, m2} {
		counts := []int64{0, 0, sqlOpsPerMinute}
		if i == 1 {
			counts = []int64{0, 0, sqlOpsPerMinute - sqlSlow, 0, 0, 0, sqlSlow}
		}
		ms = append(ms, statstest.QueryRow{End: m, Tag: sqlTag, Fprint: 9143951130769197872, Executions: sqlOpsPerMinute,
			Latency: 0.002391, CPU: sqlCPU, Rows: 10, Scanned: 10, Bytes: 10391, Remote: 4,
			Dist: &statstest.Distribution{Finite: 10, Growth: 2, Scale: 0.001, Mean: 0.002391, Counts: counts}}.Mutation())
	}
	ms = append(ms,
		statstest.TxnRow{End: m1, Tag: txnTag, Fprint: 7, Attempts: 1010, Commits: 1010, Aborts: 10, Retries: 10,
			CommitLatency: 0.010, TotalLatency: 0.012, Participants: 1,
			Dist: &statstest.Distribution{Finite: 10, Growth: 2, Scale: 0.001, Mean: 0.012, Counts: []int64{0, 0, 0, 0, 1010}}}.Mutation(),
		statstest.TxnRow{End: m2, Tag: txnTag, Fprint: 7, Attempts: 1000, Commits: 1000, CommitLatency: 0.020,
			TotalLatency: 0.022, Participants: 1}.Mutation())
	return append(ms, seedLockRows(txnTag)...)
}

// seedLockRows are the update's lock conflicts: a hot row sampled in two
// minutes (shared with another run's transactions in the first), a range
// in the second, and rows that must be left out: another run's conflict,
// the minute after the window, and samples that are not JSON.
func seedLockRows(txnTag string) []*spanner.Mutation {
	other := v1alpha1.RequestTag("other", "update")
	mine := statstest.LockSample{Column: "usertable.field0", Mode: "Exclusive", Tag: txnTag}
	shared := statstest.LockSample{Column: "usertable._exists", Mode: "WriterShared", Tag: txnTag}
	return []*spanner.Mutation{
		statstest.LockRow{End: m1, Key: "usertable(user42)", Wait: 2,
			Samples: []statstest.LockSample{mine, mine, shared, {Column: "usertable.field0", Mode: "Exclusive", Tag: other}}}.Mutation(),
		statstest.LockRow{End: m2, Key: "usertable(user42)", Wait: 1, Samples: []statstest.LockSample{mine, mine}}.Mutation(),
		statstest.LockRow{End: m2, Key: "usertable(user7)+", Wait: 0.5, Samples: []statstest.LockSample{mine}}.Mutation(),
		statstest.LockRow{End: m2, Key: "othertable(1)", Wait: 50,
			Samples: []statstest.LockSample{{Column: "othertable.x", Mode: "Exclusive", Tag: other}}}.Mutation(),
		statstest.LockRow{End: minute(4), Key: "usertable(user42)", Wait: 100, Samples: []statstest.LockSample{mine}}.Mutation(),
		spanner.Insert(standinPrefix+"LOCK_STATS_TOP_MINUTE",
			[]string{"INTERVAL_END", "ROW_RANGE_START_KEY", "LOCK_WAIT_SECONDS", "SAMPLE_LOCK_REQUESTS_JSON_STRING"},
			[]any{m3, []byte("usertable(user1)"), 9.0, "not json"}),
	}
}

func seedOps() []serverstats.Operation {
	all := []time.Time{m1, m2, m3}
	return []serverstats.Operation{
		{Name: "readkeys-read", RequestTag: v1alpha1.RequestTag("seed", "readkeys-read"), Ops: perMinute(readOpsPerMinute, all...)},
		{Name: "readkeys-sql", RequestTag: v1alpha1.RequestTag("seed", "readkeys-sql"), Ops: perMinute(sqlOpsPerMinute, all...)},
		{Name: "update", TransactionTag: v1alpha1.RequestTag("seed", "update"), Ops: perMinute(1000, all...)},
		{Name: "scan", RequestTag: v1alpha1.RequestTag("seed", "scan"), Ops: perMinute(500, all...)},
	}
}

func near(t *testing.T, what string, got *float64, want float64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: not reported, want %g", what, want)
		return
	}
	if math.Abs(*got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.9g, want %.9g", what, *got, want)
	}
}

// TestCollectReproducesTheReadVsSQLSeed runs the collector's SQL on the
// real emulator against stand-in tables holding the seed's figures: the
// 4-split read's CPU is multiplied back to per operation, the factor 4
// shows, a shape missing in a minute lowers coverage, and a shape missing
// everywhere is "not captured", not zero.
// It runs in a database of each dialect: the PostgreSQL dialect's
// spanner_sys tables take positional parameters.
func TestCollectReproducesTheReadVsSQLSeed(t *testing.T) {
	for _, d := range []v1alpha1.Dialect{v1alpha1.DialectGoogleSQL, v1alpha1.DialectPostgreSQL} {
		t.Run(string(d), func(t *testing.T) { checkSeed(t, d) })
	}
}

func checkSeed(t *testing.T, d v1alpha1.Dialect) {
	client := startStandin(t, d)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := client.Apply(ctx, seedRows()); err != nil {
		t.Fatalf("filling the stand-in tables: %v", err)
	}
	c := serverstats.Collector{Prefix: standinPrefix, Settle: 2 * time.Minute, Dialect: d,
		Clock: clocktesting.NewFakePassiveClock(minute(5))}
	res, err := c.Collect(ctx, client, serverstats.Window{Start: windowStart, End: windowEnd}, seedOps())
	if err != nil {
		t.Fatalf("collecting: %v", err)
	}
	if len(res.Minutes) != 3 || !res.Minutes[0].Equal(m1) || !res.Minutes[2].Equal(m3) {
		t.Fatalf("minutes read = %v, want the three whole minutes closing at 12:01, 12:02, 12:03", res.Minutes)
	}
	if len(res.Absent) > 0 {
		t.Errorf("the stand-ins have every documented column, yet %q read as absent", res.Absent)
	}
	byName := map[string]serverstats.OperationStats{}
	for _, o := range res.Operations {
		byName[o.Name] = o
	}

	read := byName["readkeys-read"].Statements
	if read == nil {
		t.Fatalf("the Read API key list was not captured: %+v", byName["readkeys-read"])
	}
	near(t, "read: executions per operation (splits)", read.ExecutionsPerOp, splits)
	near(t, "read: CPU seconds per execution, as READ_STATS says", read.CPUSecondsPerExecution, readCPU)
	near(t, "read: CPU seconds per operation after the per-split correction", read.CPUSecondsPerOp, splits*readCPU)
	near(t, "read: rows per operation", read.RowsPerOp, 10)
	near(t, "read: bytes per operation", read.BytesPerOp, splits*2607.25)
	near(t, "read: coverage", &read.Coverage, 1)
	if read.LatencySeconds != nil || read.RowsScannedPerOp != nil {
		t.Errorf("read: READ_STATS has no latency or rows scanned, got latency %v scanned %v", read.LatencySeconds, read.RowsScannedPerOp)
	}

	sql := byName["readkeys-sql"].Statements
	if sql == nil {
		t.Fatalf("the SQL key list was not captured: %+v", byName["readkeys-sql"])
	}
	near(t, "sql: executions per operation", sql.ExecutionsPerOp, 1)
	near(t, "sql: CPU seconds per operation", sql.CPUSecondsPerOp, sqlCPU)
	near(t, "sql: latency", sql.LatencySeconds, 0.002391)
	near(t, "sql: rows scanned per operation", sql.RowsScannedPerOp, 10)
	near(t, "sql: remote server calls", sql.RemoteServerCallsPerExecution, 4)
	near(t, "sql: coverage (third minute not in the TOP table)", &sql.Coverage, 2.0/3)
	if sql.Minutes != 2 || sql.ClientOps != 2*sqlOpsPerMinute {
		t.Errorf("sql: %d minutes and %d client operations, want 2 and %d", sql.Minutes, sql.ClientOps, 2*sqlOpsPerMinute)
	}
	checkLatencyPercentiles(t, read, sql)
	// The seed's conclusion: READ is about 2.7x cheaper on a key list
	// across splits once its CPU is multiplied back.
	if r := *sql.CPUSecondsPerOp / *read.CPUSecondsPerOp; r < 2.6 || r > 2.8 {
		t.Errorf("SQL/READ CPU per operation = %.2f, want about 2.7", r)
	}

	txn := byName["update"].Transactions
	if txn == nil {
		t.Fatalf("the update transactions were not captured: %+v", byName["update"])
	}
	near(t, "update: attempts per operation", txn.AttemptsPerOp, 2010.0/2000)
	near(t, "update: abort rate", txn.AbortRate, 10.0/2010)
	near(t, "update: commit latency (weighted by commit attempts)", txn.CommitLatencySeconds, (1010*0.010+1000*0.020)/2010)
	if txn.CommitAborts != 10 || txn.CommitRetries != 10 {
		t.Errorf("update: %d aborts and %d retries, want 10 and 10", txn.CommitAborts, txn.CommitRetries)
	}

	// The transaction histogram of the first minute only: 8-16 ms.
	near(t, "update: total latency p50", txn.TotalLatencyP50Seconds, 0.012)
	near(t, "update: total latency p99", txn.TotalLatencyP99Seconds, 0.008+0.008*0.99)
	checkLocks(t, byName["update"], res)

	scan := byName["scan"]
	if scan.Statements != nil || len(scan.NotCaptured) != 1 || !strings.Contains(scan.NotCaptured[0], "no row") {
		t.Errorf("scan has no row anywhere: want not captured, got %+v", scan)
	}

	// The tables are input: more rows than a run can have is refused.
	c.MaxRows = 2
	if _, err := c.Collect(ctx, client, serverstats.Window{Start: windowStart, End: windowEnd}, seedOps()); err == nil ||
		!strings.Contains(err.Error(), "more than 2 rows") {
		t.Errorf("collecting with at most 2 rows a table from 3 read rows: got %v, want a refusal", err)
	}
}

// TestCollectWaitsForTheLastMinuteToSettle: before the last whole minute's
// statistics can have been published, Collect says when to come back.
func TestCollectWaitsForTheLastMinuteToSettle(t *testing.T) {
	c := serverstats.Collector{Prefix: standinPrefix, Settle: 90 * time.Second,
		Clock: clocktesting.NewFakePassiveClock(m3.Add(89 * time.Second))}
	_, err := c.Collect(context.Background(), nil, serverstats.Window{Start: windowStart, End: windowEnd}, seedOps())
	var ns *serverstats.NotSettledError
	if !errors.As(err, &ns) || !ns.ReadyAt.Equal(m3.Add(90*time.Second)) {
		t.Fatalf("Collect before the settle time: got %v, want NotSettledError ready at %s", err, m3.Add(90*time.Second))
	}
}

// TestCollectRefusesAPrefixThatIsNotAName: the table prefix is the only
// part of the SQL not passed as a parameter.
func TestCollectRefusesAPrefixThatIsNotAName(t *testing.T) {
	for _, p := range []string{"", "SPANNER_SYS", "x; DROP TABLE t; --", "a.b.", "1X_"} {
		// Even before the window settles: a wrong prefix is configuration.
		c := serverstats.Collector{Prefix: p, Clock: clocktesting.NewFakePassiveClock(minute(0))}
		_, err := c.Collect(context.Background(), nil, serverstats.Window{Start: windowStart, End: windowEnd}, seedOps())
		if err == nil || !strings.Contains(err.Error(), "table prefix") {
			t.Errorf("prefix %q: got %v, want a refusal naming the table prefix", p, err)
		}
	}
}

// TestCollectLeavesOutNullAndHostileValues: every SPANNER_SYS column may
// be NULL, and the tables are input: a NULL or NaN average is left out of
// its mean instead of counting as zero, and a figure no row had is absent.
// Minutes past the tables' retention are said to be.
func TestCollectLeavesOutNullAndHostileValues(t *testing.T) {
	client := startStandin(t, v1alpha1.DialectGoogleSQL)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tag := v1alpha1.RequestTag("nulls", "read")
	row := func(end time.Time, fprint int64, cpu, rows spanner.NullFloat64) *spanner.Mutation {
		return spanner.Insert(standinPrefix+"READ_STATS_TOP_MINUTE",
			[]string{"INTERVAL_END", "REQUEST_TAG", "FPRINT", "EXECUTION_COUNT", "AVG_CPU_SECONDS", "AVG_ROWS"},
			[]any{end, tag, fprint, int64(100), cpu, rows})
	}
	if _, err := client.Apply(ctx, []*spanner.Mutation{
		row(m1, 1, spanner.NullFloat64{Float64: 0.0002, Valid: true}, spanner.NullFloat64{Float64: math.NaN(), Valid: true}),
		row(m2, 1, spanner.NullFloat64{}, spanner.NullFloat64{}),
	}); err != nil {
		t.Fatalf("filling the stand-in tables: %v", err)
	}
	c := serverstats.Collector{Prefix: standinPrefix, Clock: clocktesting.NewFakePassiveClock(m1.Add(6*time.Hour + 30*time.Second))}
	res, err := c.Collect(ctx, client, serverstats.Window{Start: minute(0), End: minute(2)},
		[]serverstats.Operation{{Name: "read", RequestTag: tag, Ops: perMinute(50, m1, m2)}})
	if err != nil {
		t.Fatalf("collecting: %v", err)
	}
	s := res.Operations[0].Statements
	if s == nil {
		t.Fatalf("not captured: %+v", res.Operations[0])
	}
	near(t, "executions per operation (NULL averages do not drop executions)", s.ExecutionsPerOp, 2)
	near(t, "CPU per execution, over the rows that had it", s.CPUSecondsPerExecution, 0.0002)
	near(t, "CPU per operation", s.CPUSecondsPerOp, 0.0004)
	if s.RowsPerOp != nil {
		t.Errorf("rows per operation = %g from a NaN and a NULL, want absent", *s.RowsPerOp)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "1 of 2 minutes are older") {
		t.Errorf("notes = %q, want one saying 1 of 2 minutes are past retention", res.Notes)
	}
}

// TestCollectReadsNothingForAWindowWithoutAWholeMinute: no query is made
// (the client is nil) and the result says why every shape is not captured.
func TestCollectReadsNothingForAWindowWithoutAWholeMinute(t *testing.T) {
	c := serverstats.Collector{Prefix: standinPrefix, Clock: clocktesting.NewFakePassiveClock(minute(30))}
	res, err := c.Collect(context.Background(), nil, serverstats.Window{Start: at(12, 0, 10), End: at(12, 0, 50)}, seedOps())
	if err != nil {
		t.Fatalf("collecting: %v", err)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "no whole statistics minute") {
		t.Errorf("notes = %q, want one saying the window holds no whole minute", res.Notes)
	}
	for _, o := range res.Operations {
		if o.Statements != nil || o.Transactions != nil || len(o.NotCaptured) == 0 {
			t.Errorf("%s: want not captured, got %+v", o.Name, o)
		}
	}
}

// checkLatencyPercentiles: the query's p50 and p99 come from its minutes'
// histograms merged, never from averaging per-minute percentiles, and a
// read (READ_STATS has no histogram) has none.
func checkLatencyPercentiles(t *testing.T, read, sql *serverstats.StatementStats) {
	t.Helper()
	total := float64(2 * sqlOpsPerMinute)
	fast := total - sqlSlow // all in [2 ms, 4 ms)
	near(t, "sql: latency p50, interpolated in [2 ms, 4 ms)", sql.LatencyP50Seconds, 0.002+0.002*(0.5*total)/fast)
	// The 99th percentile falls among the slow executions of [32 ms, 64 ms);
	// the mean of the two minutes' own p99s would read 29.6 ms.
	near(t, "sql: latency p99 of the merged minutes", sql.LatencyP99Seconds, 0.032+0.032*(0.99*total-fast)/sqlSlow)
	if sql.LatencyDistributionCount != 2*sqlOpsPerMinute {
		t.Errorf("sql: histograms hold %d executions, want %d", sql.LatencyDistributionCount, 2*sqlOpsPerMinute)
	}
	if read.LatencyP50Seconds != nil || read.LatencyP99Seconds != nil {
		t.Errorf("read: READ_STATS has no latency histogram, got p50 %v p99 %v", read.LatencyP50Seconds, read.LatencyP99Seconds)
	}
}

// checkLocks: the update's lock wait comes from the rows whose samples
// carry its transaction tag, apportioned by its share of the samples;
// another run's conflict, the minute after the window and unreadable
// samples are left out.
func checkLocks(t *testing.T, update serverstats.OperationStats, res *serverstats.Result) {
	t.Helper()
	l := update.Locks
	if l == nil {
		t.Fatalf("update: no lock figures, want the sampled conflicts of minutes 1 and 2")
	}
	if l.Samples != 6 || l.Ranges != 3 {
		t.Errorf("update: %d samples in %d ranges, want 6 in 3", l.Samples, l.Ranges)
	}
	near(t, "update: lock wait of the conflicts it took part in", &l.WaitSecondsInvolved, 2+1+0.5)
	near(t, "update: lock wait apportioned by its samples", &l.WaitSecondsShare, 2*3.0/4+1+0.5)
	if len(l.Modes) != 2 || len(l.Columns) != 2 {
		t.Errorf("update: modes %q and columns %q, want Exclusive and WriterShared on field0 and _exists", l.Modes, l.Columns)
	}
	if len(res.LockRanges) != 2 || res.LockRanges[0].Key != "usertable(user42)" || res.LockRanges[0].Intervals != 2 ||
		res.LockRanges[1].Key != "usertable(user7)+" {
		t.Fatalf("lock ranges = %+v, want usertable(user42) over 2 minutes, then usertable(user7)+", res.LockRanges)
	}
	near(t, "hot row's lock wait over the minutes", &res.LockRanges[0].WaitSeconds, 3)
	if ops := res.LockRanges[0].Operations; len(ops) != 1 || ops[0] != "update" {
		t.Errorf("hot row's operations = %q, want only the run's update", ops)
	}
	if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "1 rows' latency histograms or lock samples") }) {
		t.Errorf("notes = %q, want one saying a row's lock samples could not be read", res.Notes)
	}
}
