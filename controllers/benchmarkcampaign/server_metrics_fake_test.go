package benchmarkcampaign_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/comparison"
	"github.com/spanbench/spanbench/result"
)

// finishRunsWithMonitoring ends the iteration's runs as the run controller
// does before Cloud Monitoring's figures are published: Succeeded, with
// a start time and no ServerMetricsCollected condition yet. leaderCPU(run)
// is the high-priority CPU percent of asia-northeast1 its report holds,
// 0 for none (the figures were not collected).
func (f *fakeCampaign) finishRunsWithMonitoring(leaderCPU func(run *v1alpha1.BenchmarkRun) float64) {
	f.t.Helper()
	for _, run := range f.runs() {
		if run.IsFinished() {
			continue
		}
		run.Status.StartTime = &metav1.Time{Time: t0.Add(-time.Minute)}
		d := campaignResultDoc(f.t, &run, 1)
		if p := leaderCPU(&run); p > 0 {
			d.Monitoring = &result.Monitoring{Version: result.MonitoringSchemaVersion, AlignmentSeconds: 60,
				CPU: []result.MonitoringCPU{{Priority: "high", Location: "asia-northeast1", MeanRatio: p / 100, MaxRatio: p / 100}}}
		}
		finishCampaignRunWith(f.t, f.stored, &run, d)
	}
}

// setServerMetrics sets every run's ServerMetricsCollected condition:
// status(run) and its reason.
func (f *fakeCampaign) setServerMetrics(status func(run *v1alpha1.BenchmarkRun) (metav1.ConditionStatus, string)) {
	f.t.Helper()
	for _, run := range f.runs() {
		s, reason := status(&run)
		run.SetCondition(v1alpha1.ConditionServerMetricsCollected, s, reason, "set by the test", t0)
		if err := f.stored.Status().Update(context.Background(), &run); err != nil {
			f.t.Fatal(err)
		}
	}
}

// TestCampaignComparesTheLeaderRegionsCPUOnceCollected: the single- vs
// multi-region question as a campaign: the iteration waits while the
// runs' Cloud Monitoring figures are not collected yet (no condition,
// then Pending), then compares the leader region's high-priority CPU
// read from the runs' reports: asia1 at about 1.86x tokyo's is a
// regression; a cell whose figures were not collected (the emulator)
// is Inconclusive and reads "not collected", not 0. The history entry
// keeps the cells' figures for the trend.
func TestCampaignComparesTheLeaderRegionsCPUOnceCollected(t *testing.T) {
	c := testCampaign("leader", 4, 12, axis("rate", "workload.load.rate", "tokyo=50", "asia1=100", "emulator=150"))
	c.Spec.Comparison.Metrics = []v1alpha1.MetricSpec{{Statistic: v1alpha1.StatisticServerHighPriorityCPU, Operations: []string{"asia-northeast1"}}}
	f := newFakeCampaign(t, c, interceptor.Funcs{})
	rate := func(run *v1alpha1.BenchmarkRun) int32 { return *run.Spec.Workload.Load.Rate }
	n := 0
	for range 12 { // the campaign starts its runs one pass at a time
		f.settle()
		f.finishRunsWithMonitoring(func(run *v1alpha1.BenchmarkRun) float64 {
			n++
			switch rate(run) {
			case 50:
				return 21 * (1 + 0.01*float64(n%3))
			case 100:
				return 39 * (1 + 0.01*float64(n%3))
			}
			return 0
		})
	}
	running := func(when string) {
		t.Helper()
		f.settle()
		st := f.campaign().Status
		if len(st.Iterations) != 1 || st.Iterations[0].Outcome != v1alpha1.IterationRunning || st.Comparison != nil {
			t.Fatalf("%s the iteration ended: %+v, comparison %+v", when, st.Iterations, st.Comparison)
		}
	}
	running("with the runs' Cloud Monitoring figures not yet collected (no condition)")
	f.setServerMetrics(func(*v1alpha1.BenchmarkRun) (metav1.ConditionStatus, string) {
		return metav1.ConditionUnknown, v1alpha1.ReasonMetricsPending
	})
	running("with the runs' Cloud Monitoring figures pending")

	f.setServerMetrics(func(run *v1alpha1.BenchmarkRun) (metav1.ConditionStatus, string) {
		if rate(run) == 150 {
			return metav1.ConditionFalse, v1alpha1.ReasonMetricsNotAvailableOnEmulator
		}
		return metav1.ConditionTrue, v1alpha1.ReasonMetricsCollected
	})
	f.settle()
	st := f.campaign().Status
	if len(st.Iterations) != 1 || st.Iterations[0].Outcome != v1alpha1.IterationSucceeded || st.Comparison == nil || len(st.Comparison.Rows) != 2 {
		t.Fatalf("iterations %+v, comparison %+v; want one compared iteration with a row per variant", st.Iterations, st.Comparison)
	}
	for _, r := range st.Comparison.Rows {
		if r.Metric != "asia-northeast1 high-priority CPU %" || r.Statistic != v1alpha1.StatisticServerHighPriorityCPU || r.Operation != "asia-northeast1" {
			t.Errorf("row %+v; want asia-northeast1 high-priority CPU %%", r)
		}
		switch r.Variant {
		case "asia1":
			if r.Verdict != v1alpha1.VerdictRegressed || r.Ratio < "1.8" || r.Ratio > "1.9" {
				t.Errorf("asia1's row %+v; want Regressed at about 1.86x", r)
			}
		case "emulator":
			if r.Verdict != v1alpha1.VerdictInconclusive || r.Value != comparison.NotCollected {
				t.Errorf("the emulator's row %+v; want Inconclusive, value %q", r, comparison.NotCollected)
			}
		}
	}
	e := f.historyEntry(st.Iterations[0].Name)
	tokyo, ok := e.FindCell("tokyo")
	if !ok {
		t.Fatalf("the history entry has no tokyo cell: %+v", e.Cells)
	}
	if v, ok := tokyo.Monitoring.Figure(v1alpha1.StatisticServerHighPriorityCPU, "asia-northeast1"); !ok || v < 20.9 || v > 21.5 {
		t.Errorf("tokyo's history figures %+v; want the leader's CPU about 21 %%", tokyo.Monitoring)
	}
	if emu, _ := e.FindCell("emulator"); emu != nil && emu.Monitoring != nil {
		t.Errorf("the emulator cell's history has figures %+v; want none (not collected)", emu.Monitoring)
	}
}
