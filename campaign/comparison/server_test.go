package comparison

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/load/result"
	"github.com/spanbench/spanbench/stats"
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
	tab, err := Assemble(spec, []Cell{readAPI, sqlAPI}, 0, 1)
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
		tab, err := Assemble(spec, []Cell{tc.base, tc.vari}, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		r := rowFor(t, tab, "b", "read server CPU µs/op")
		if r.Comparison.Verdict != stats.Inconclusive || !strings.Contains(r.Comparison.Reason, tc.why) {
			t.Errorf("%s: verdict %s (%q); want Inconclusive saying %q", tc.name, r.Comparison.Verdict, r.Comparison.Reason, tc.why)
		}
	}
}
