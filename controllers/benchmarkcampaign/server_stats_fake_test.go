package benchmarkcampaign_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/comparison"
)

// TestCampaignComparingServerCPUWaitsForTheRunsStatistics: an iteration
// that compares ServerCPUPerOp (or ServerQueryP99, read from the same
// statistics) does not compare runs whose statistics are
// still Pending (it would read "not collected" from a report about to
// get them); once every run's ServerStatsCollected is terminal it
// compares, and a run without statistics (here the emulator) gives an
// inconclusive row that says why.
func TestCampaignComparingServerCPUWaitsForTheRunsStatistics(t *testing.T) {
	for s, metric := range map[v1alpha1.CampaignStatistic]string{
		v1alpha1.StatisticServerCPUPerOp: "read server CPU µs/op",
		v1alpha1.StatisticServerQueryP99: "read server query p99 µs",
	} {
		t.Run(string(s), func(t *testing.T) { campaignWaitsForTheRunsStatistics(t, s, metric) })
	}
}

func campaignWaitsForTheRunsStatistics(t *testing.T, s v1alpha1.CampaignStatistic, metric string) {
	c := testCampaign("cpu", 1, 1, axis("rate", "workload.load.rate", "base=50", "other=100"))
	c.Spec.Comparison.Metrics = []v1alpha1.MetricSpec{{Statistic: s}}
	f := newFakeCampaign(t, c, interceptor.Funcs{})
	setServerStats := func(reason string) {
		for _, run := range f.runs() {
			run.SetCondition(v1alpha1.ConditionServerStatsCollected, metav1.ConditionFalse, reason, "set by the test", t0)
			if err := f.stored.Status().Update(context.Background(), &run); err != nil {
				t.Fatal(err)
			}
		}
	}
	for range 2 {
		f.settle()
		f.finishRuns(func(*v1alpha1.BenchmarkRun) float64 { return 1 })
		setServerStats(v1alpha1.ReasonServerStatsPending)
	}
	f.settle()
	st := f.campaign().Status
	if len(st.Iterations) != 1 || st.Iterations[0].Outcome != v1alpha1.IterationRunning || st.Comparison != nil {
		t.Fatalf("with the runs' statistics pending the iteration ended: %+v, comparison %+v", st.Iterations, st.Comparison)
	}

	setServerStats(v1alpha1.ReasonNotAvailableOnEmulator)
	f.settle()
	st = f.campaign().Status
	if len(st.Iterations) != 1 || st.Iterations[0].Outcome != v1alpha1.IterationSucceeded || st.Comparison == nil || len(st.Comparison.Rows) != 1 {
		t.Fatalf("iterations %+v, comparison %+v; want one compared iteration with one row", st.Iterations, st.Comparison)
	}
	if r := st.Comparison.Rows[0]; r.Metric != metric || r.Verdict != v1alpha1.VerdictInconclusive {
		t.Errorf("row %+v; want %s, Inconclusive", r, metric)
	}
	report := &corev1.ConfigMap{}
	if err := f.stored.Get(context.Background(), client.ObjectKey{Namespace: c.Namespace, Name: st.Iterations[0].Report}, report); err != nil {
		t.Fatal(err)
	}
	if js := report.Data[comparison.ReportJSONKey]; !strings.Contains(js, "no server statistics") {
		t.Errorf("the iteration's report does not say why the row is inconclusive: %s", js)
	}
}
