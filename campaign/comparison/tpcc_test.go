package comparison

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/stats"
	"github.com/spanbench/spanbench/result"
)

// asNewOrder makes c's runs TPC-C runs: their one operation becomes the
// NewOrder operation "new-order", and each run's tpmC is tpmC (± run
// noise).
func asNewOrder(c Cell, rng *rand.Rand, tpmC float64) Cell {
	for _, d := range c.Runs {
		for i := range d.Totals {
			d.Totals[i].Name, d.Totals[i].Type = "new-order", "NewOrder"
		}
		for i := range d.Intervals {
			for j := range d.Intervals[i].Operations {
				d.Intervals[i].Operations[j].Name = "new-order"
			}
		}
		d.TPCC = &result.TPCC{TpmC: tpmC * (1 + 0.01*rng.NormFloat64())}
	}
	return c
}

// TestTpmCComparesTheCommitDelayVariants: the Tsurugi experiment's row on
// Spanner: a maxCommitDelay variant at 1250 tpmC against 1000 without is
// Improved (tpmC is higher-is-better by default) at about 1.25x, named
// "new-order tpmC", which ParseMetric reads back.
func TestTpmCComparesTheCommitDelayVariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	none := asNewOrder(cellOf(t, rng, "delay-0ms", 1, 4), rng, 1000)
	delay := asNewOrder(cellOf(t, rng, "delay-10ms", 1, 4), rng, 1250)
	spec := &v1alpha1.ComparisonSpec{Metrics: []v1alpha1.MetricSpec{{Statistic: v1alpha1.StatisticTpmC}}}
	tab, err := Assemble(spec, []Cell{none, delay}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != 1 {
		t.Fatalf("%d rows, want one for the NewOrder operation: %+v", len(tab.Rows), tab.Rows)
	}
	r := rowFor(t, tab, "delay-10ms", "new-order tpmC")
	if r.Comparison.Verdict != stats.Improved || r.Comparison.Ratio < 1.2 || r.Comparison.Ratio > 1.3 || r.Comparison.Method != stats.MethodExact {
		t.Errorf("10ms vs 0ms: verdict %s ratio %.3f method %s (%s); want Improved at about 1.25x, run by run",
			r.Comparison.Verdict, r.Comparison.Ratio, r.Comparison.Method, r.Comparison.Reason)
	}
	if r.Baseline < 980 || r.Baseline > 1020 || r.Value < 1220 || r.Value > 1280 {
		t.Errorf("baseline %.1f, value %.1f tpmC; want the cells' ~1000 and ~1250", r.Baseline, r.Value)
	}
	op, st, ok := ParseMetric(r.Metric)
	if !ok || op != "new-order" || st != v1alpha1.StatisticTpmC {
		t.Errorf("ParseMetric(%q) = %q, %q, %v", r.Metric, op, st, ok)
	}
	if v, err := Value(v1alpha1.StatisticTpmC, Figures{Throughput: 20}); err != nil || v != 1200 {
		t.Errorf("tpmC of 20 New-Orders/s is %v (%v); want 1200 per minute", v, err)
	}
}

// TestTpmCOfAnInconsistentRunIsNotCompared: a run whose consistency checks
// failed, a run whose checks did not run, and a run that is not TPC-C, give inconclusive rows that say
// why; one run per cell compares the NewOrder intervals' throughput.
func TestTpmCOfAnInconsistentRunIsNotCompared(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	spec := &v1alpha1.ComparisonSpec{Metrics: []v1alpha1.MetricSpec{{Statistic: v1alpha1.StatisticTpmC, Operations: []string{"new-order"}}}}
	base := asNewOrder(cellOf(t, rng, "base", 1, 3), rng, 1000)
	lost := asNewOrder(cellOf(t, rng, "lost", 1, 3), rng, 1300)
	lost.Runs[1].TPCC.Checks = []result.Check{{Name: "W_YTD = sum(D_YTD)", Detail: "warehouse 1"}}
	unchecked := asNewOrder(cellOf(t, rng, "unchecked", 1, 3), rng, 1300)
	unchecked.Runs[2].TPCC.NotChecked = "not checked: the checks took longer than 2m0s"
	notTPCC := cellOf(t, rng, "ycsb", 1, 3)
	for i := range notTPCC.Runs {
		notTPCC.Runs[i] = asNewOrder(Cell{Runs: notTPCC.Runs[i : i+1]}, rng, 1).Runs[0]
		notTPCC.Runs[i].TPCC = nil
	}
	tab, err := Assemble(spec, []Cell{base, lost, unchecked, notTPCC}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r := rowFor(t, tab, "lost", "new-order tpmC"); r.Comparison.Verdict != stats.Inconclusive || !strings.Contains(r.Comparison.Reason, "W_YTD = sum(D_YTD)") {
		t.Errorf("a cell with an inconsistent run: verdict %s (%s); want Inconclusive naming the failed condition", r.Comparison.Verdict, r.Comparison.Reason)
	}
	if r := rowFor(t, tab, "unchecked", "new-order tpmC"); r.Comparison.Verdict != stats.Inconclusive || !strings.Contains(r.Comparison.Reason, "was not checked (not checked: the checks took longer") {
		t.Errorf("a cell with an unchecked run: verdict %s (%s); want Inconclusive saying its consistency was not checked and why", r.Comparison.Verdict, r.Comparison.Reason)
	}
	if r := rowFor(t, tab, "ycsb", "new-order tpmC"); r.Comparison.Verdict != stats.Inconclusive || !strings.Contains(r.Comparison.Reason, "not a TPC-C run") {
		t.Errorf("a cell without tpmC: verdict %s (%s); want Inconclusive saying it is not TPC-C", r.Comparison.Verdict, r.Comparison.Reason)
	}
	one := asNewOrder(cellOf(t, rng, "one", 1, 1), rng, 1000)
	two := asNewOrder(cellOf(t, rng, "two", 1, 1), rng, 1000)
	tab, err = Assemble(spec, []Cell{one, two}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r := rowFor(t, tab, "two", "new-order tpmC"); r.Comparison.Method != stats.MethodSectioning || r.Comparison.Verdict == stats.Inconclusive && r.Comparison.Ratio == 0 {
		t.Errorf("one run a cell: method %s verdict %s (%s); want a bootstrap over the NewOrder intervals", r.Comparison.Method, r.Comparison.Verdict, r.Comparison.Reason)
	}
}

// TestNoFigureOfAnUnverifiedTPCCRunIsCompared: beside tpmC, a TPC-C
// run's New-Order throughput (tpmC by another name) and latency are
// Inconclusive when one run of either cell was not checked (the check
// timed out) or failed a condition, saying why; a cell whose runs all
// passed their checks is compared on the same metrics.
func TestNoFigureOfAnUnverifiedTPCCRunIsCompared(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	spec := &v1alpha1.ComparisonSpec{Metrics: []v1alpha1.MetricSpec{{Statistic: v1alpha1.StatisticThroughput}, {Statistic: v1alpha1.StatisticP99}}}
	passed := []result.Check{{Name: "W_YTD = sum(D_YTD)", Passed: true}}
	checked := func(name string, tpmC float64) Cell {
		c := asNewOrder(cellOf(t, rng, name, 1, 3), rng, tpmC)
		for _, d := range c.Runs {
			d.TPCC.Checks = passed
		}
		return c
	}
	base, fine := checked("base", 1000), checked("fine", 1300)
	unchecked, lost := checked("unchecked", 1300), checked("lost", 1300)
	unchecked.Runs[0].TPCC.Checks, unchecked.Runs[0].TPCC.NotChecked = nil, "not checked: the checks took longer than 2m0s"
	lost.Runs[2].TPCC.Checks = []result.Check{{Name: "D_YTD = sum(H_AMOUNT)", Detail: "district 1/1"}}
	tab, err := Assemble(spec, []Cell{base, fine, unchecked, lost}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, metric := range []string{MetricName("new-order", v1alpha1.StatisticThroughput), MetricName("new-order", v1alpha1.StatisticP99)} {
		if r := rowFor(t, tab, "fine", metric); strings.Contains(r.Comparison.Reason, "consistency") || r.Comparison.Method == "" {
			t.Errorf("%s of checked runs: not compared (%s); want them compared", metric, r.Comparison.Reason)
		}
		if r := rowFor(t, tab, "unchecked", metric); r.Comparison.Verdict != stats.Inconclusive || !strings.Contains(r.Comparison.Reason, "consistency was not checked (not checked: the checks took longer") {
			t.Errorf("%s of a cell with an unchecked run: %s (%s); want Inconclusive saying it was not checked and why", metric, r.Comparison.Verdict, r.Comparison.Reason)
		}
		if r := rowFor(t, tab, "lost", metric); r.Comparison.Verdict != stats.Inconclusive || !strings.Contains(r.Comparison.Reason, "D_YTD = sum(H_AMOUNT)") {
			t.Errorf("%s of a cell with an inconsistent run: %s (%s); want Inconclusive naming the condition", metric, r.Comparison.Verdict, r.Comparison.Reason)
		}
	}
}
