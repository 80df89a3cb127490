package trend

import (
	"testing"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/history"
)

// TestAStepInTheLeadersCPUIsARegressionAcrossNights: the leader region's
// high-priority CPU up 40 % from night 12 of 16 is found like a latency
// regression, named by the region; nights whose Cloud Monitoring figures
// were not collected (an entry from before them, a night without them)
// are no points, not zeros, and the other region is its own series.
func TestAStepInTheLeadersCPUIsARegressionAcrossNights(t *testing.T) {
	entries := nightly(16, []string{"asia1"}, func(string, int) float64 { return 1 })
	for i := range entries {
		if i < 2 || i == 7 {
			continue // before the figures; a night they were not collected
		}
		leader := 38 * (1 + 0.005*float64(i%3))
		if i >= 12 {
			leader *= 1.4
		}
		entries[i].Cells[0].Monitoring = &history.MonitoringFigures{HighPriorityCPU: []history.KeyedFigure{
			{Key: "asia-northeast1", Value: leader}, {Key: "asia-northeast2", Value: 8 * (1 + 0.005*float64(i%3))}}}
	}
	spec := &v1alpha1.BenchmarkCampaignSpec{Comparison: v1alpha1.ComparisonSpec{Metrics: []v1alpha1.MetricSpec{
		{Statistic: v1alpha1.StatisticServerHighPriorityCPU}}}}
	series := Build(entries, spec)
	if len(series) != 2 || series[0].Metric != "asia-northeast1 high-priority CPU %" || len(series[0].Values) != 13 || series[0].Names[0] != "c-2" {
		t.Fatalf("series %+v; want one per region, the leader's of 13 nights (the 3 without figures left out) from c-2", series)
	}
	for _, v := range series[0].Values {
		if v == 0 {
			t.Fatal("a night without figures became a zero point")
		}
	}
	cps := analyse(t, entries, spec)
	if len(cps) != 1 {
		t.Fatalf("change points %+v, want one", cps)
	}
	if cp := cps[0]; cp.Metric != "asia-northeast1 high-priority CPU %" || cp.Iteration != "c-12" || cp.Verdict != v1alpha1.VerdictRegressed {
		t.Errorf("change point %+v, want asia-northeast1 high-priority CPU %% at c-12, Regressed", cp)
	}
}
