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

// TestAStepInServerQueryP99IsARegressionAcrossNights: the query's server
// p99 up from 12 ms to 46.6 ms from iteration 10 of 14 (an index
// dropped) is a change point named "query server query p99 µs"; nights
// whose server figures have no p99 are no points, not zeros.
func TestAStepInServerQueryP99IsARegressionAcrossNights(t *testing.T) {
	entries := nightly(16, []string{"sql"}, func(string, int) float64 { return 1 })
	for i := range entries {
		op := &entries[i].Cells[0].Operations[0]
		op.Name = "query"
		p99 := 12000 * (1 + 0.005*float64(i%3))
		if i >= 12 {
			p99 = 46600 * (1 + 0.005*float64(i%3))
		}
		op.Server = &history.ServerFigures{CPUMicrosPerOp: 1532, Coverage: 1, QueryP99Micros: &p99}
		if i < 2 {
			op.Server.QueryP99Micros = nil
		}
	}
	spec := &v1alpha1.BenchmarkCampaignSpec{Comparison: v1alpha1.ComparisonSpec{Metrics: []v1alpha1.MetricSpec{{Statistic: v1alpha1.StatisticServerQueryP99}}}}
	series := Build(entries, spec)
	if len(series) != 1 || len(series[0].Values) != 14 || series[0].Names[0] != "c-2" || series[0].Values[0] < 12000 || series[0].Values[0] > 12200 {
		t.Fatalf("series %+v; want one of 14 nights (the 2 without a p99 left out) starting at c-2 with about 12100 µs", series)
	}
	cps := analyse(t, entries, spec)
	if len(cps) != 1 {
		t.Fatalf("change points %+v, want one", cps)
	}
	if cp := cps[0]; cp.Metric != "query server query p99 µs" || cp.Iteration != "c-12" || cp.Verdict != v1alpha1.VerdictRegressed || !cp.Recent {
		t.Errorf("change point %+v, want query server query p99 µs at c-12, Regressed, recent", cp)
	}
}
