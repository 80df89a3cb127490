package trend

import (
	"testing"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/history"
)

// TestAStepInServerCPUPerOpIsARegressionAcrossNights: server CPU per
// operation up 30 % from iteration 10 of 14, the client's latency level,
// is found like a latency regression; nights without server figures (an
// emulator night, an entry from before them) are no points, not zeros.
func TestAStepInServerCPUPerOpIsARegressionAcrossNights(t *testing.T) {
	entries := nightly(16, []string{"sql"}, func(string, int) float64 { return 1 })
	for i := range entries {
		op := &entries[i].Cells[0].Operations[0]
		switch {
		case i < 2:
			continue // before the server figures
		case i >= 12:
			op.Server = &history.ServerFigures{CPUMicrosPerOp: 564 * 1.3 * (1 + 0.005*float64(i%3)), Coverage: 1}
		default:
			op.Server = &history.ServerFigures{CPUMicrosPerOp: 564 * (1 + 0.005*float64(i%3)), Coverage: 1}
		}
	}
	spec := &v1alpha1.BenchmarkCampaignSpec{Comparison: v1alpha1.ComparisonSpec{Metrics: []v1alpha1.MetricSpec{{Statistic: v1alpha1.StatisticServerCPUPerOp}}}}
	series := Build(entries, spec)
	if len(series) != 1 || len(series[0].Values) != 14 || series[0].Names[0] != "c-2" {
		t.Fatalf("series %+v; want one of 14 nights (the 2 without server figures left out) starting at c-2", series)
	}
	cps := analyse(t, entries, spec)
	if len(cps) != 1 {
		t.Fatalf("change points %+v, want one", cps)
	}
	if cp := cps[0]; cp.Metric != "read server CPU µs/op" || cp.Iteration != "c-12" || cp.Verdict != v1alpha1.VerdictRegressed || !cp.Recent {
		t.Errorf("change point %+v, want read server CPU µs/op at c-12, Regressed, recent", cp)
	}
}
