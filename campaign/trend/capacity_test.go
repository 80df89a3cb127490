package trend

import (
	"testing"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/history"
)

// TestACapacityDropIsARegressionAcrossNights: a cell's capacity falling
// 25 % from night 10 of 14 is one change point there, Regressed (higher
// is better), named as the comparison names the metric; the steady cell
// has none; a night whose search did not finish is no point, not a
// zero; capacity per node is its own series.
func TestACapacityDropIsARegressionAcrossNights(t *testing.T) {
	entries := nightly(14, []string{"3n", "6n"}, func(string, int) float64 { return 1 })
	for i := range entries {
		for c := range entries[i].Cells {
			cell := &entries[i].Cells[c]
			if cell.Name == "6n" && i == 4 {
				continue // that night's search did not finish
			}
			capacity := 4000 * (1 + 0.01*float64(i%3))
			if cell.Name == "6n" {
				capacity *= 2
				if i >= 10 {
					capacity *= 0.75
				}
			}
			nodes := map[string]float64{"3n": 3, "6n": 6}[cell.Name]
			perNode := capacity / nodes
			cell.Capacity = &history.CapacityFigures{Capacity: &capacity, PerNode: &perNode}
		}
	}
	spec := &v1alpha1.BenchmarkCampaignSpec{Comparison: v1alpha1.ComparisonSpec{Metrics: []v1alpha1.MetricSpec{
		{Statistic: v1alpha1.StatisticCapacity}, {Statistic: v1alpha1.StatisticCapacityPerNode}}}}
	series := Build(entries, spec)
	var names []string
	for _, s := range series {
		names = append(names, s.Variant+" "+s.Metric)
		for _, v := range s.Values {
			if v == 0 {
				t.Fatalf("series %s %s has a zero point: a night without a capacity became one", s.Variant, s.Metric)
			}
		}
	}
	want := []string{"3n search capacity ops/s", "3n search capacity ops/s per node", "6n search capacity ops/s", "6n search capacity ops/s per node"}
	if len(names) != len(want) {
		t.Fatalf("series %q, want %q", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("series %q, want %q", names, want)
		}
	}
	if n := len(series[2].Values); n != 13 {
		t.Errorf("6n's capacity has %d points; want 13 (the unfinished night left out)", n)
	}
	cps := analyse(t, entries, spec)
	if len(cps) != 2 {
		t.Fatalf("change points %+v; want 6n's capacity and capacity per node at c-10", cps)
	}
	for _, cp := range cps {
		if cp.Variant != "6n" || cp.Iteration != "c-10" || cp.Verdict != v1alpha1.VerdictRegressed || !cp.Recent {
			t.Errorf("change point %+v; want 6n at c-10, Regressed, recent", cp)
		}
	}
}
