package benchmarkrun_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/spanner"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/controllers/benchmarkrun/serverfigures"
	"github.com/spanbench/spanbench/controllers/collectors"
	"github.com/spanbench/spanbench/controllers/runreport"
	"github.com/spanbench/spanbench/internal/emulatortest"
	"github.com/spanbench/spanbench/internal/statstest"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/pod"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/serverstats"
	"github.com/spanbench/spanbench/spanner/session"
)

// The READ-vs-SQL seed's key-list read over 4 splits: Spanner counts one
// execution per split, each of 0.141 ms CPU and 2.5 rows
// (docs/server-stats.md).
const (
	seedSplits  = 4
	seedReadCPU = 0.000141
)

// TestServerStatsScenarioJoinsTheRunToSpannersStatistics runs a real
// 2-minute run on the emulator through the Cloud Spanner path of the
// collection, pointed at stand-in SPANNER_SYS tables in the run's
// database (the emulator has none): the run succeeds and its statistics
// wait; the test writes the seed's 4-split rows for the run's read tag
// only, sized from the run's own per-minute counts; a restarted manager
// whose statistics have settled collects them. The read's server CPU per
// operation is the per-split CPU multiplied back (0.564 ms), its
// executions per operation the 4 splits, the update (no row) is "not
// captured", and the figures are in the status and the report.
func TestServerStatsScenarioJoinsTheRunToSpannersStatistics(t *testing.T) {
	h := newHarness(t)
	standIn := serverfigures.ServerStatsConfig{Prefix: statstest.Prefix, OnEmulator: true, Settle: time.Hour}
	h.startManagerWith(managerOptions{preparer: benchmarkrun.SpannerPreparer{}, serverStats: standIn})
	run := h.runSpec("sys", 1)
	// Two minutes hold at least one whole statistics minute, whatever the
	// start's second.
	rate := int32(20)
	run.Spec.Workload.Load.Rate = &rate
	run.Spec.Workload.Duration = &metav1.Duration{Duration: 2 * time.Minute}
	run.Spec.Workload.Interval = &metav1.Duration{Duration: 10 * time.Second}
	if err := h.c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	runners := h.kubelet(run, 0)
	got := h.finished(run, 4*time.Minute)
	runners.Wait()
	if c := h.condition(got, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionTrue {
		t.Fatalf("run ended %s/%s: %s", c.Status, c.Reason, c.Message)
	}
	if c := h.condition(got, v1alpha1.ConditionServerStatsCollected); c == nil || c.Reason != v1alpha1.ReasonServerStatsPending {
		t.Fatalf("ServerStatsCollected is %+v; want Pending while the minutes settle", c)
	}
	minutes := whole(got.Status.ServerStats)
	if len(minutes) == 0 {
		t.Fatalf("status.serverStats %+v names no whole minute of a 2-minute run", got.Status.ServerStats)
	}

	doc, err := runreport.ReadReport(context.Background(), h.c, client.ObjectKeyFromObject(run), pod.RunArrivals)
	if err != nil {
		t.Fatal(err)
	}
	read, update := opNamed(t, got, v1alpha1.OpRead), opNamed(t, got, v1alpha1.OpUpdate)
	perMinute := clientCountsPerMinute(t, doc, read)
	h.writeStandInStats(run, minutes, v1alpha1.RequestTag(run.Name, read), perMinute)

	h.stopManager()
	standIn.Settle = time.Nanosecond
	h.startManagerWith(managerOptions{preparer: benchmarkrun.SpannerPreparer{}, serverStats: standIn})
	h.eventually("the statistics are collected", 60*time.Second, func() bool {
		_ = h.c.Get(context.Background(), client.ObjectKeyFromObject(run), got)
		c := h.condition(got, v1alpha1.ConditionServerStatsCollected)
		return c != nil && c.Reason != v1alpha1.ReasonServerStatsPending
	})
	if c := h.condition(got, v1alpha1.ConditionServerStatsCollected); c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonServerStatsCollected {
		t.Fatalf("ServerStatsCollected ended %s/%s: %s", c.Status, c.Reason, c.Message)
	}
	checkSeedFigures(t, statusOp(got, read).Server)
	if s := statusOp(got, update).Server; s == nil || !s.NotCaptured || s.CPUPerOperation != nil || !strings.Contains(s.NotCapturedIn, "TXN_STATS") {
		t.Errorf("the update, which has no row, has server figures %+v; want not captured in TXN_STATS, no CPU", s)
	}
	if got.Status.ServerStats.CollectionTime == nil || got.Status.ServerStats.Minutes != int32(len(minutes)) {
		t.Errorf("status.serverStats %+v; want the collection time and %d minutes", got.Status.ServerStats, len(minutes))
	}
	report, err := runreport.ReadReport(context.Background(), h.c, client.ObjectKeyFromObject(run), pod.RunArrivals)
	if err != nil || report.Server == nil || report.Server.Operation(read) == nil || report.Server.Operation(read).Statements == nil {
		t.Fatalf("the report (err %v) has no server section for %s: %+v", err, read, report.Server)
	}
	if c := h.condition(got, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonCompleted {
		t.Errorf("the collection changed the run's outcome to %s/%s", c.Status, c.Reason)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(&collectors.ResultsCollector{Reader: h.c})
	if cpu := gauge(t, reg, "spanbench_run_server_cpu_seconds_per_operation", map[string]string{"run": run.Name, "operation": read}); cpu != 0.000564 {
		t.Errorf("scraped server CPU per read %v s, want 0.000564", cpu)
	}
	if cpu := gauge(t, reg, "spanbench_run_server_cpu_seconds_per_operation", map[string]string{"run": run.Name, "operation": update}); cpu != -1 {
		t.Errorf("the update, not captured, has a server CPU series (%v): it would read as a figure", cpu)
	}
	if nc := gauge(t, reg, "spanbench_run_server_not_captured", map[string]string{"run": run.Name, "operation": update}); nc != 1 {
		t.Errorf("spanbench_run_server_not_captured for the update = %v, want 1", nc)
	}
}

// checkSeedFigures checks the seed's 4-split read as the status shows it.
func checkSeedFigures(t *testing.T, s *v1alpha1.ServerOperationFigures) {
	t.Helper()
	if s == nil || s.NotCaptured {
		t.Fatalf("the read's server figures are %+v; want them captured", s)
	}
	if s.ExecutionsPerOperation != "4" || s.RowsReturnedPerOperation != "10" || s.Coverage != "1" {
		t.Errorf("executions/op %q, rows/op %q, coverage %q; want 4 (the splits), 10 and 1",
			s.ExecutionsPerOperation, s.RowsReturnedPerOperation, s.Coverage)
	}
	if s.CPUPerOperation == nil || s.CPUPerOperation.Duration != 564*time.Microsecond {
		t.Errorf("cpu/op %v; want 564µs, the per-split 141µs times 4 splits", s.CPUPerOperation)
	}
	if s.CPUPerExecution == nil || s.CPUPerExecution.Duration != 141*time.Microsecond {
		t.Errorf("cpu/execution %v; want 141µs, as the table says", s.CPUPerExecution)
	}
}

// whole are the ends of the whole minutes status.serverStats says are read.
func whole(s *v1alpha1.ServerStatsSummary) []time.Time {
	if s == nil || s.WindowStart == nil || s.WindowEnd == nil {
		return nil
	}
	var out []time.Time
	for m := s.WindowStart.Add(time.Minute); !m.After(s.WindowEnd.Time); m = m.Add(time.Minute) {
		out = append(out, m.UTC())
	}
	return out
}

// opNamed is the name of the run's operation of type typ.
func opNamed(t *testing.T, run *v1alpha1.BenchmarkRun, typ v1alpha1.OperationType) string {
	t.Helper()
	for _, o := range run.Status.Operations {
		if o.Type == typ {
			return o.Name
		}
	}
	t.Fatalf("run %s has no %s operation: %+v", run.Name, typ, run.Status.Operations)
	return ""
}

func statusOp(run *v1alpha1.BenchmarkRun, name string) *v1alpha1.OperationResult {
	for i := range run.Status.Operations {
		if run.Status.Operations[i].Name == name {
			return &run.Status.Operations[i]
		}
	}
	return nil
}

// clientCountsPerMinute are the report's counts of op's logical operations
// (successful, not found or failed) per statistics minute.
func clientCountsPerMinute(t *testing.T, doc *result.Document, op string) map[time.Time]int64 {
	t.Helper()
	counts := make([]int64, len(doc.Intervals))
	for _, in := range doc.Intervals {
		for _, o := range in.Operations {
			if o.Name == op {
				counts[in.Index] += int64(o.OK + o.NotFound + o.ErrorCount())
			}
		}
	}
	m, _, err := serverstats.MinuteCounts(doc.Start, time.Duration(doc.IntervalSeconds*float64(time.Second)), counts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// writeStandInStats creates the stand-in tables in the run's database and
// fills them with the seed's 4-split rows for tag in minutes, plus rows
// the collection must leave out: the same tag in the minute before the
// window (the warm-up or another run) and another run's tag.
func (h *harness) writeStandInStats(run *v1alpha1.BenchmarkRun, minutes []time.Time, tag string, ops map[time.Time]int64) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ep := endpoint.Emulator(h.emu.Host())
	if err := session.EnsureDatabase(ctx, ep, run.Spec.Target, statstest.NewSchema(v1alpha1.DialectGoogleSQL), false); err != nil {
		h.t.Fatalf("creating the stand-in statistics tables: %v", err)
	}
	s, err := session.Open(ctx, ep, run.Spec.Target)
	if err != nil {
		h.t.Fatal(err)
	}
	defer s.Close()
	ms := []*spanner.Mutation{
		statstest.ReadRow{End: minutes[0].Add(-time.Minute), Tag: tag, Fprint: 1, Executions: 1000, CPU: 0.5, Rows: 1, Bytes: 1}.Mutation(),
		statstest.ReadRow{End: minutes[0], Tag: v1alpha1.RequestTag("other", "read"), Fprint: 2, Executions: 999, CPU: 0.9, Rows: 1, Bytes: 1}.Mutation(),
	}
	for _, m := range minutes {
		ms = append(ms, statstest.ReadRow{End: m, Tag: tag, Fprint: 3, Executions: seedSplits * ops[m], CPU: seedReadCPU,
			Rows: 2.5, Bytes: 2607.25}.Mutation())
	}
	if _, err := s.Client.Apply(ctx, ms); err != nil {
		h.t.Fatalf("filling the stand-in tables: %v", err)
	}
}

// TestServerStatsOfMissingTablesOnTheRealEmulatorAreNotFound: the real
// emulator's answer to a statistics table that does not exist is
// StatisticsNotFound, not PermissionDenied nor a retried outage.
func TestServerStatsOfMissingTablesOnTheRealEmulatorAreNotFound(t *testing.T) {
	emu := emulatortest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ep := endpoint.Emulator(emu.Host())
	nodes := int32(1)
	tgt := v1alpha1.TargetSpec{Project: "spanbench-test", Database: "nostats", EmulatorHost: emu.Host(),
		Instance: v1alpha1.InstanceSpec{Name: "test", Config: "regional-asia-northeast1", Nodes: &nodes}}
	if err := session.EnsureDatabase(ctx, ep, tgt, statstest.NewSchema(v1alpha1.DialectGoogleSQL), true); err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(ctx, ep, tgt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	col := serverstats.Collector{Prefix: "NOPE_", Clock: clocktesting.NewFakePassiveClock(start.Add(time.Hour))}
	_, err = col.Collect(ctx, s.Client, serverstats.Window{Start: start, End: start.Add(2 * time.Minute)},
		[]serverstats.Operation{{Name: "read", RequestTag: "t", Ops: map[time.Time]int64{start.Add(time.Minute): 1}}})
	if err == nil {
		t.Fatal("reading tables that do not exist succeeded")
	}
	if reason, msg, transient := serverfigures.ClassifyServerStatsError(err); reason != v1alpha1.ReasonStatisticsNotFound || transient {
		t.Errorf("the emulator's %v is %s (transient %v): %q; want StatisticsNotFound, not retried", err, reason, transient, msg)
	}
}
