package serverfigures

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/collectors"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/spanner/serverstats"
)

func fp(v float64) *float64 { return &v }

// serverStatsCollector serves one run's series as the manager's results
// collector does: from a client holding only the run, marked finished.
func serverStatsCollector(t *testing.T, run *v1alpha1.BenchmarkRun) prometheus.Collector {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	run = run.DeepCopy()
	if run.Status.Overall == nil {
		run.Status.Overall = &v1alpha1.ResultFigures{}
	}
	return &collectors.ResultsCollector{Reader: fake.NewClientBuilder().WithScheme(s).WithObjects(run).Build()}
}

// TestServerFiguresCarryPercentilesLockWaitAndTheTablesRead: a
// collection's latency percentiles, transaction p99, lock wait, contended
// ranges and the tables read go into the report's server section, the
// run's status and the Prometheus series; an operation without a
// histogram has no percentile series (not captured, not zero).
func TestServerFiguresCarryPercentilesLockWaitAndTheTablesRead(t *testing.T) {
	end := time.Date(2026, 11, 24, 12, 10, 0, 0, time.UTC)
	res := &serverstats.Result{Granularity: serverstats.TenMinute, Minutes: []time.Time{end},
		Operations: []serverstats.OperationStats{
			{Name: "query", ClientOps: 100, Statements: &serverstats.StatementStats{Minutes: 1, Coverage: 1, ClientOps: 100,
				Executions: 100, LatencyP50Seconds: fp(0.003), LatencyP99Seconds: fp(0.0466), LatencyDistributionCount: 100}},
			{Name: "read", ClientOps: 100, Statements: &serverstats.StatementStats{Minutes: 1, Coverage: 1, ClientOps: 100, Executions: 400}},
			{Name: "update", ClientOps: 50, Transactions: &serverstats.TransactionStats{Minutes: 1, Coverage: 1, ClientOps: 50,
				Attempts: 50, TotalLatencyP99Seconds: fp(0.01592)},
				Locks: &serverstats.LockStats{Samples: 6, Ranges: 3, WaitSecondsInvolved: 3.5, WaitSecondsShare: 3}},
			// TXN_STATS dropped the delete, but its lock requests were sampled.
			{Name: "delete", ClientOps: 5, NotCaptured: []string{"transaction tag: no row in TXN_STATS_TOP_10MINUTE"},
				Locks: &serverstats.LockStats{Samples: 1, Ranges: 1, WaitSecondsInvolved: 0.5, WaitSecondsShare: 0.5}},
		},
		LockRanges: []serverstats.LockRange{{Key: "usertable(user42)", WaitSeconds: 3, Intervals: 2, Operations: []string{"update"}}},
	}
	sec := serverSection(res, "SPANNER_SYS.", 0, end.Add(7*time.Hour))
	if sec.Granularity != "10MINUTE" || len(sec.LockRanges) != 1 || sec.Operation("update").Locks == nil ||
		*sec.Operation("query").Statements.LatencyP99Seconds != 0.0466 {
		t.Fatalf("the server section lost the tables read, the lock ranges, the lock wait or the p99: %+v", sec)
	}
	run := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "r"}}
	run.Status.Operations = []v1alpha1.OperationResult{{Name: "query"}, {Name: "read"}, {Name: "update"}, {Name: "delete"}}
	applyServerStats(&run.Status, sec)
	q, u := run.Status.Operations[0].Server, run.Status.Operations[2].Server
	if q.LatencyP50 == nil || q.LatencyP50.Duration != 3*time.Millisecond || q.LatencyP99 == nil || q.LatencyP99.Duration != 46600*time.Microsecond {
		t.Errorf("query: status p50 %v p99 %v, want 3ms and 46.6ms", q.LatencyP50, q.LatencyP99)
	}
	if u.TransactionLatencyP99 == nil || u.TransactionLatencyP99.Duration != 15920*time.Microsecond || u.LockWait == nil || u.LockWait.Duration != 3*time.Second {
		t.Errorf("update: status transaction p99 %v lock wait %v, want 15.92ms and 3s", u.TransactionLatencyP99, u.LockWait)
	}
	if d := run.Status.Operations[3].Server; d.NotCaptured || d.LockWait == nil || d.LockWait.Duration != 500*time.Millisecond ||
		!strings.Contains(d.NotCapturedIn, "TXN_STATS") {
		t.Errorf("delete: status %+v, want its lock wait 500ms and TXN_STATS named as missing, not the whole operation not captured", d)
	}
	if run.Status.ServerStats.Granularity != "10MINUTE" {
		t.Errorf("status.serverStats.granularity = %q, want 10MINUTE", run.Status.ServerStats.Granularity)
	}
	want := `
# HELP spanbench_run_server_latency_seconds Spanner's server latency per execution of a finished run's queries at quantile=0.5 or 0.99, from the merged SPANNER_SYS latency histograms.
# TYPE spanbench_run_server_latency_seconds gauge
spanbench_run_server_latency_seconds{namespace="bench",operation="query",quantile="0.5",run="r"} 0.003
spanbench_run_server_latency_seconds{namespace="bench",operation="query",quantile="0.99",run="r"} 0.0466
# HELP spanbench_run_server_lock_wait_seconds A finished run's operation's estimated lock wait over the statistics intervals read, from SPANNER_SYS lock samples.
# TYPE spanbench_run_server_lock_wait_seconds gauge
spanbench_run_server_lock_wait_seconds{namespace="bench",operation="delete",run="r"} 0.5
spanbench_run_server_lock_wait_seconds{namespace="bench",operation="update",run="r"} 3
# HELP spanbench_run_server_transaction_latency_seconds Spanner's total latency per read-write transaction attempt of a finished run at quantile=0.99, from the merged SPANNER_SYS histograms.
# TYPE spanbench_run_server_transaction_latency_seconds gauge
spanbench_run_server_transaction_latency_seconds{namespace="bench",operation="update",quantile="0.99",run="r"} 0.01592
`
	if err := testutil.CollectAndCompare(serverStatsCollector(t, run), strings.NewReader(want), "spanbench_run_server_latency_seconds",
		"spanbench_run_server_lock_wait_seconds", "spanbench_run_server_transaction_latency_seconds"); err != nil {
		t.Error(err)
	}
}

// TestClientCountsFollowTheTablesRead: when the collection reads the
// 10-minute tables, the client's operations are counted per 10-minute
// interval of the window (whole intervals only), not per minute.
func TestClientCountsFollowTheTablesRead(t *testing.T) {
	start := time.Date(2026, 11, 24, 11, 59, 40, 0, time.UTC)
	doc := &result.Document{Start: start, IntervalSeconds: 10, Totals: []result.Operation{{Name: "read", Type: "Read"}}}
	for i := range 124 { // 11:59:40 to 12:20:20, 7 operations each 10 s
		doc.Intervals = append(doc.Intervals, result.Interval{Index: i,
			Operations: []result.IntervalOperation{{Name: "read", Counts: result.Counts{OK: 7}}}})
	}
	w := serverstats.Window{Start: start, End: start.Add(20*time.Minute + 40*time.Second)}
	ops, apportioned, err := clientMinuteCounts(doc, w, serverstats.TenMinute, statsTags(namedRun("r")))
	if err != nil {
		t.Fatal(err)
	}
	ten, twenty := time.Date(2026, 11, 24, 12, 10, 0, 0, time.UTC), time.Date(2026, 11, 24, 12, 20, 0, 0, time.UTC)
	if got := ops[0].Ops; got[ten] != 60*7 || got[twenty] != 60*7 || apportioned != 0 {
		t.Errorf("client counts per 10 minutes = %v (%d apportioned), want 420 in each of the intervals ending 12:10 and 12:20", got, apportioned)
	}
}

// TestClientCountsAddUpTheStreams: a streams run's report keeps its
// intervals in its stream sections, each counted from the stream's own
// start; Spanner counts an operation's executions under its tag whatever
// stream sent them, so the client's counts of an operation in two
// streams add up per minute.
func TestClientCountsAddUpTheStreams(t *testing.T) {
	start := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	series := func(offset time.Duration, n int, ok uint64) result.StreamSection {
		s := result.StreamSection{Start: start.Add(offset)}
		for i := range n {
			s.Intervals = append(s.Intervals, result.Interval{Index: i,
				Operations: []result.IntervalOperation{{Name: "read", Counts: result.Counts{OK: ok}}}})
		}
		return s
	}
	doc := &result.Document{Start: start, IntervalSeconds: 10, Totals: []result.Operation{{Name: "read", Type: "Read"}},
		Streams: []result.StreamSection{series(0, 12, 5), series(time.Minute, 6, 3)}} // 12:00-12:02 and 12:01-12:02
	w := serverstats.Window{Start: start, End: start.Add(2 * time.Minute)}
	ops, _, err := clientMinuteCounts(doc, w, serverstats.Minute, statsTags(namedRun("r")))
	if err != nil {
		t.Fatal(err)
	}
	one, two := start.Add(time.Minute), start.Add(2*time.Minute)
	if got := ops[0].Ops; got[one] != 30 || got[two] != 30+18 {
		t.Errorf("client counts per minute = %v, want 30 in the minute ending 12:01 and 48 (30 + the second stream's 18) in the one ending 12:02", got)
	}
}

func namedRun(name string, ops ...v1alpha1.OperationSpec) *v1alpha1.BenchmarkRun {
	return &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.BenchmarkRunSpec{
		Workload: v1alpha1.WorkloadSpec{Operations: ops}}}
}

// TestStatsTagsFollowWhatEachOperationSends: the collector looks for an
// operation's statement rows by request tag only if it sends statements
// and for its transaction rows by transaction tag only if it commits; a
// TPC-C or Custom transaction does both, a mutation-only write no
// statement. Looking for rows an operation never makes would report it
// "not captured"; not looking for rows it makes would lose its commit
// latency, aborts and lock wait.
func TestStatsTagsFollowWhatEachOperationSends(t *testing.T) {
	op := func(name string, typ v1alpha1.OperationType, path v1alpha1.WritePath) v1alpha1.OperationSpec {
		return v1alpha1.OperationSpec{Name: name, Type: typ, WritePath: path}
	}
	run := namedRun("r",
		op("read", v1alpha1.OpRead, ""), op("query", v1alpha1.OpQuery, ""),
		op("insert", v1alpha1.OpInsert, ""), op("update-dml", v1alpha1.OpUpdate, v1alpha1.WriteDML),
		op("rmw", v1alpha1.OpReadModifyWrite, ""), op("new-order", v1alpha1.OpNewOrder, v1alpha1.WriteMutation),
		op("order-status", v1alpha1.OpOrderStatus, ""), op("dml", v1alpha1.OpDML, ""),
		op("mutation", v1alpha1.OpMutation, ""), op("txn", v1alpha1.OpTransaction, ""))
	tags := statsTags(run)
	for _, c := range []struct {
		name, typ          string
		statements, commit bool
	}{
		{"read", "Read", true, false}, {"query", "Query", true, false},
		{"insert", "Insert", false, true}, {"update-dml", "Update", true, true},
		{"rmw", "ReadModifyWrite", true, true}, {"new-order", "NewOrder", true, true},
		{"order-status", "OrderStatus", true, false}, {"dml", "DML", true, true},
		{"mutation", "Mutation", false, true}, {"txn", "Transaction", true, true},
		{"not-in-spec", "Delete", false, true}, // the type alone: a Delete defaults to mutations
	} {
		req, txn := tags(result.Operation{Name: c.name, Type: result.OperationType(c.typ)})
		if got, want := req != "", c.statements; got != want {
			t.Errorf("%s (%s): request tag %q; want one: %v", c.name, c.typ, req, want)
		}
		if got, want := txn != "", c.commit; got != want {
			t.Errorf("%s (%s): transaction tag %q; want one: %v", c.name, c.typ, txn, want)
		}
		if tag := v1alpha1.RequestTag("r", c.name); (req != "" && req != tag) || (txn != "" && txn != tag) {
			t.Errorf("%s: tags %q and %q, want the runner's %q", c.name, req, txn, tag)
		}
	}
}
