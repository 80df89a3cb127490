package comparison

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/stats"
	"github.com/spanbench/spanbench/result"
)

// withServerCPU gives each of c's runs a server section whose read costs
// cpuMicros (± run noise) per operation.
func withServerCPU(c Cell, rng *rand.Rand, cpuMicros float64) Cell {
	for _, d := range c.Runs {
		v := cpuMicros * (1 + 0.01*rng.NormFloat64()) / 1e6
		d.Server = &result.Server{Version: result.ServerSchemaVersion, Operations: []result.ServerOperation{
			{Name: "read", Statements: &result.ServerStatements{CPUSecondsPerOp: &v}}}}
	}
	return c
}

// TestServerCPUPerOpComparesTheSeedsReadAgainstSQL: the READ-vs-SQL seed's
// conclusion as a campaign row: SQL (1532 µs per key list) against the
// Read API (564 µs after the per-split correction) is a regression of
// about 2.7x in server CPU per operation, named "read server CPU µs/op";
// four runs per cell give the run-by-run comparison its 95% interval.
func TestServerCPUPerOpComparesTheSeedsReadAgainstSQL(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	readAPI := withServerCPU(cellOf(t, rng, "read-api", 1, 4), rng, 564)
	sqlAPI := withServerCPU(cellOf(t, rng, "sql-api", 1, 4), rng, 1532)
	spec := &v1alpha1.ComparisonSpec{Metrics: []v1alpha1.MetricSpec{{Statistic: v1alpha1.StatisticServerCPUPerOp}}}
	tab, err := Assemble(spec, []Cell{readAPI, sqlAPI}, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := rowFor(t, tab, "sql-api", "read server CPU µs/op")
	if r.Comparison.Verdict != stats.Regressed || r.Comparison.Ratio < 2.6 || r.Comparison.Ratio > 2.8 {
		t.Errorf("SQL vs Read API server CPU: verdict %s ratio %.3f (%s); want Regressed at about 2.7x",
			r.Comparison.Verdict, r.Comparison.Ratio, r.Comparison.Reason)
	}
	if r.Baseline < 555 || r.Baseline > 575 {
		t.Errorf("baseline %.1f µs, want the Read API's ~564", r.Baseline)
	}
	op, st, ok := ParseMetric(r.Metric)
	if !ok || op != "read" || st != v1alpha1.StatisticServerCPUPerOp {
		t.Errorf("ParseMetric(%q) = %q, %q, %v", r.Metric, op, st, ok)
	}
}

// TestServerCPUPerOpWithoutStatisticsIsInconclusiveAndSaysWhy: a run whose
// statistics were not collected (the emulator, no permission) and a
// single run per cell give inconclusive rows that say why, never a
// verdict from a missing figure.
func TestServerCPUPerOpWithoutStatisticsIsInconclusiveAndSaysWhy(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	spec := &v1alpha1.ComparisonSpec{Metrics: []v1alpha1.MetricSpec{{Statistic: v1alpha1.StatisticServerCPUPerOp}}}
	for _, tc := range []struct {
		name       string
		base, vari Cell
		why        string
	}{
		{"not collected", withServerCPU(cellOf(t, rng, "a", 1, 2), rng, 564), cellOf(t, rng, "b", 1, 2), "no server statistics"},
		{"one run each", withServerCPU(cellOf(t, rng, "a", 1, 1), rng, 564), withServerCPU(cellOf(t, rng, "b", 1, 1), rng, 600), "two or more runs per cell"},
	} {
		tab, err := Assemble(spec, []Cell{tc.base, tc.vari}, 0)
		if err != nil {
			t.Fatal(err)
		}
		r := rowFor(t, tab, "b", "read server CPU µs/op")
		if r.Comparison.Verdict != stats.Inconclusive || !strings.Contains(r.Comparison.Reason, tc.why) {
			t.Errorf("%s: verdict %s (%q); want Inconclusive saying %q", tc.name, r.Comparison.Verdict, r.Comparison.Reason, tc.why)
		}
	}
}

// withServerQuery gives each of c's runs a server section of two
// operations: a Read API read (CPU, but no latency histogram) and a SQL
// query whose merged p99 is p99Millis (± run noise).
func withServerQuery(c Cell, rng *rand.Rand, p99Millis float64) Cell {
	for _, d := range c.Runs {
		cpu, p99 := 0.000564, p99Millis*(1+0.01*rng.NormFloat64())/1e3
		d.Server = &result.Server{Version: result.ServerSchemaVersion, Operations: []result.ServerOperation{
			{Name: "read", Statements: &result.ServerStatements{CPUSecondsPerOp: &cpu}},
			{Name: "query", Statements: &result.ServerStatements{CPUSecondsPerOp: &cpu, LatencyP99Seconds: &p99}}}}
	}
	return c
}

// TestServerQueryP99ComparesTheQuerysServerLatency: the seed's SQL shape
// (merged p99 46.6 ms over its two minutes) against the same query at
// 12 ms is a regression of about 3.9x in server query p99, named "query
// server query p99 µs" (which ParseMetric reads back as ServerQueryP99,
// not as a P99 of an operation "query server query"). By default only
// the query gets a row: the read has no latency histogram. Named
// explicitly, the read's row is inconclusive and says why.
func TestServerQueryP99ComparesTheQuerysServerLatency(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	fast := withServerQuery(cellOf(t, rng, "indexed", 1, 4), rng, 12)
	slow := withServerQuery(cellOf(t, rng, "seed", 1, 4), rng, 46.6)
	spec := &v1alpha1.ComparisonSpec{Metrics: []v1alpha1.MetricSpec{{Statistic: v1alpha1.StatisticServerQueryP99}}}
	tab, err := Assemble(spec, []Cell{fast, slow}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != 1 {
		t.Fatalf("rows %+v; want the query's only (the read has no server p99)", tab.Rows)
	}
	r := rowFor(t, tab, "seed", "query server query p99 µs")
	if r.Comparison.Verdict != stats.Regressed || r.Comparison.Ratio < 3.7 || r.Comparison.Ratio > 4.1 {
		t.Errorf("seed vs indexed server query p99: verdict %s ratio %.3f (%s); want Regressed at about 3.9x",
			r.Comparison.Verdict, r.Comparison.Ratio, r.Comparison.Reason)
	}
	if r.Baseline < 11800 || r.Baseline > 12200 || r.Value < 46000 || r.Value > 47200 {
		t.Errorf("baseline %.0f µs, value %.0f µs; want about 12000 and 46600", r.Baseline, r.Value)
	}
	if op, st, ok := ParseMetric(r.Metric); !ok || op != "query" || st != v1alpha1.StatisticServerQueryP99 {
		t.Errorf("ParseMetric(%q) = %q, %q, %v; want query, ServerQueryP99", r.Metric, op, st, ok)
	}

	spec.Metrics[0].Operations = []string{"read"}
	if tab, err = Assemble(spec, []Cell{fast, slow}, 0); err != nil {
		t.Fatal(err)
	}
	if r := rowFor(t, tab, "seed", "read server query p99 µs"); r.Comparison.Verdict != stats.Inconclusive ||
		!strings.Contains(r.Comparison.Reason, "reads have no latency histogram") {
		t.Errorf("the read's row: verdict %s (%q); want Inconclusive saying reads have no latency histogram", r.Comparison.Verdict, r.Comparison.Reason)
	}
}
