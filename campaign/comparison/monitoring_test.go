package comparison

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/stats"
	"github.com/spanbench/spanbench/result"
)

// withMonitoring gives each of c's runs a monitoring section: high- and
// low-priority CPU of each region's mean percent, and Commit's server p99
// of commitMillis (± run noise).
func withMonitoring(c Cell, rng *rand.Rand, cpuPercent map[string]float64, commitMillis float64) Cell {
	for _, d := range c.Runs {
		m := &result.Monitoring{Version: result.MonitoringSchemaVersion, AlignmentSeconds: 60}
		for _, loc := range []string{"asia-northeast1", "asia-northeast2"} {
			p, ok := cpuPercent[loc]
			if !ok {
				continue
			}
			v := p * (1 + 0.01*rng.NormFloat64()) / 100
			m.CPU = append(m.CPU, result.MonitoringCPU{Priority: "high", Location: loc, MeanRatio: v, MaxRatio: v},
				result.MonitoringCPU{Priority: "low", Location: loc, MeanRatio: 0.9, MaxRatio: 0.9})
		}
		m.Latency = []result.MonitoringLatency{{Method: "Commit", Count: 1000, P99Seconds: commitMillis * (1 + 0.01*rng.NormFloat64()) / 1e3}}
		d.Monitoring = m
	}
	return c
}

// TestTheLeaderRegionsCPUComparesTokyoAgainstAsia1: the single- vs
// multi-region seed's question as campaign rows: asia1's leader region
// (asia-northeast1) runs at about twice the regional instance's
// high-priority CPU (the seed's "2倍弱"), and its commit p99 is worse:
// both regressions, named by region and method, read from the runs'
// monitoring sections (the low-priority CPU and the other region are
// not read). By default the rows are the baseline's regions.
func TestTheLeaderRegionsCPUComparesTokyoAgainstAsia1(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	tokyo := withMonitoring(cellOf(t, rng, "tokyo", 1, 4), rng, map[string]float64{"asia-northeast1": 21}, 12)
	asia1 := withMonitoring(cellOf(t, rng, "asia1", 1, 4), rng, map[string]float64{"asia-northeast1": 39, "asia-northeast2": 8}, 42)
	spec := &v1alpha1.ComparisonSpec{Metrics: []v1alpha1.MetricSpec{
		{Statistic: v1alpha1.StatisticServerHighPriorityCPU},
		{Statistic: v1alpha1.StatisticServerLatencyP99, Operations: []string{"Commit"}},
	}}
	tab, err := Assemble(spec, []Cell{tokyo, asia1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != 2 {
		t.Fatalf("rows %+v; want the baseline's one region and Commit", tab.Rows)
	}
	cpu := rowFor(t, tab, "asia1", "asia-northeast1 high-priority CPU %")
	if cpu.Comparison.Verdict != stats.Regressed || cpu.Comparison.Ratio < 1.75 || cpu.Comparison.Ratio > 1.95 || cpu.Baseline < 20 || cpu.Baseline > 22 {
		t.Errorf("leader CPU: verdict %s ratio %.3f baseline %.1f %% (%s); want Regressed at about 1.86x of 21 %%",
			cpu.Comparison.Verdict, cpu.Comparison.Ratio, cpu.Baseline, cpu.Comparison.Reason)
	}
	commit := rowFor(t, tab, "asia1", "Commit server p99 µs")
	if commit.Comparison.Verdict != stats.Regressed || commit.Baseline < 11500 || commit.Baseline > 12500 {
		t.Errorf("Commit p99: verdict %s baseline %.0f µs; want Regressed from about 12000 µs", commit.Comparison.Verdict, commit.Baseline)
	}
	for metric, want := range map[string]v1alpha1.CampaignStatistic{cpu.Metric: v1alpha1.StatisticServerHighPriorityCPU, commit.Metric: v1alpha1.StatisticServerLatencyP99} {
		if _, st, ok := ParseMetric(metric); !ok || st != want {
			t.Errorf("ParseMetric(%q) = %q, %v; want %s", metric, st, ok, want)
		}
	}
}

// TestCloudMonitoringFiguresNotCollectedAreNotZero: a cell whose runs
// have no Cloud Monitoring figures (the emulator, a figure not yet or
// never collected), a region no run reported, and one run per cell give
// inconclusive rows that say why; a baseline without any figures still
// gives its row.
func TestCloudMonitoringFiguresNotCollectedAreNotZero(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	cpu := map[string]float64{"asia-northeast1": 21}
	for _, tc := range []struct {
		name       string
		ops        []string
		base, vari Cell
		metric     string
		why        string
	}{
		{"variant not collected", nil, withMonitoring(cellOf(t, rng, "a", 1, 2), rng, cpu, 12), cellOf(t, rng, "b", 1, 2),
			"asia-northeast1 high-priority CPU %", "Cloud Monitoring figures not collected"},
		{"baseline not collected", nil, cellOf(t, rng, "a", 1, 2), withMonitoring(cellOf(t, rng, "b", 1, 2), rng, cpu, 12),
			"not-collected high-priority CPU %", "Cloud Monitoring figures not collected"},
		{"no such region", []string{"us-central1"}, withMonitoring(cellOf(t, rng, "a", 1, 2), rng, cpu, 12), withMonitoring(cellOf(t, rng, "b", 1, 2), rng, cpu, 12),
			"us-central1 high-priority CPU %", `no high-priority CPU for region "us-central1"`},
		{"one run each", nil, withMonitoring(cellOf(t, rng, "a", 1, 1), rng, cpu, 12), withMonitoring(cellOf(t, rng, "b", 1, 1), rng, cpu, 12),
			"asia-northeast1 high-priority CPU %", "two or more runs per cell"},
	} {
		spec := &v1alpha1.ComparisonSpec{Metrics: []v1alpha1.MetricSpec{{Statistic: v1alpha1.StatisticServerHighPriorityCPU, Operations: tc.ops}}}
		tab, err := Assemble(spec, []Cell{tc.base, tc.vari}, 0)
		if err != nil {
			t.Fatal(err)
		}
		r := rowFor(t, tab, "b", tc.metric)
		notZero := tc.name == "one run each" || math.IsNaN(r.Baseline) || math.IsNaN(r.Value)
		if r.Comparison.Verdict != stats.Inconclusive || !strings.Contains(r.Comparison.Reason, tc.why) || !notZero {
			t.Errorf("%s: verdict %s (%q) baseline %g value %g; want Inconclusive saying %q, the missing side not collected (NaN), not 0",
				tc.name, r.Comparison.Verdict, r.Comparison.Reason, r.Baseline, r.Value, tc.why)
		}
		if notCollected := tc.name != "one run each" && tc.name != "no such region"; notCollected {
			if st := statusRow(r); st.Baseline != NotCollected && st.Value != NotCollected {
				t.Errorf("%s: status row baseline %q value %q; want a side saying %q", tc.name, st.Baseline, st.Value, NotCollected)
			}
		}
	}
}

// TestALongMethodNameKeepsItsRowWithoutTheOperationField: Cloud
// Monitoring's labels may be 64 bytes, one more than the status row's
// operation field holds: the row keeps its metric name and drops the
// field rather than fail the status write.
func TestALongMethodNameKeepsItsRowWithoutTheOperationField(t *testing.T) {
	method := strings.Repeat("M", 64)
	r := statusRow(stats.Row{Variant: "b", Metric: MetricName(method, v1alpha1.StatisticServerLatencyP99), Baseline: 1, Value: 2})
	if r.Operation != "" || r.Metric != method+" server p99 µs" {
		t.Errorf("row operation %q metric %q; want no operation and the full metric", r.Operation, r.Metric)
	}
	if r := statusRow(stats.Row{Variant: "b", Metric: MetricName("Commit", v1alpha1.StatisticServerLatencyP99)}); r.Operation != "Commit" ||
		r.Statistic != v1alpha1.StatisticServerLatencyP99 {
		t.Errorf("row operation %q statistic %q; want Commit, ServerLatencyP99", r.Operation, r.Statistic)
	}
}
