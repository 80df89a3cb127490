package serverstats_test

import (
	"context"
	"errors"
	"math"
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
	// The SQL shape fell out of the TOP table in the third minute.
	for _, m := range []time.Time{m1, m2} {
		ms = append(ms, statstest.QueryRow{End: m, Tag: sqlTag, Fprint: 9143951130769197872, Executions: sqlOpsPerMinute,
			Latency: 0.002391, CPU: sqlCPU, Rows: 10, Scanned: 10, Bytes: 10391, Remote: 4}.Mutation())
	}
	ms = append(ms,
		statstest.TxnRow{End: m1, Tag: txnTag, Fprint: 7, Attempts: 1010, Commits: 1010, Aborts: 10, Retries: 10,
			CommitLatency: 0.010, TotalLatency: 0.012, Participants: 1}.Mutation(),
		statstest.TxnRow{End: m2, Tag: txnTag, Fprint: 7, Attempts: 1000, Commits: 1000, CommitLatency: 0.020,
			TotalLatency: 0.022, Participants: 1}.Mutation())
	return ms
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
