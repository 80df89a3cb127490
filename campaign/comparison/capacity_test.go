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

// searched gives each run of c a finished search of the given capacity
// per node (±3 %) on an instance of pu processing units.
func searched(c Cell, rng *rand.Rand, perNode float64, pu int32) Cell {
	for _, d := range c.Runs {
		v := perNode * (0.97 + 0.06*rng.Float64())
		d.Target.ProcessingUnits = pu
		d.Search = &result.Search{Outcome: result.SearchOutcome{Done: true, Reason: "Resolved",
			Capacity: v * float64(pu) / 1000, CapacityPerNode: v}}
	}
	return c
}

// TestCapacityPerNodeComparesTwoConfigurations: the single-vs-multi-region
// question as capacity per node — a regional configuration whose nodes
// each carry twice a multi-region one's — compares run by run with an
// interval and calls the multi-region variant Regressed at about half;
// the capacity itself, of three times the nodes, Improved at about 1.5x;
// a cell whose runs did not
// search, or whose search did not finish, is inconclusive and says why.
func TestCapacityPerNodeComparesTwoConfigurations(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	regional := searched(cellOf(t, rng, "regional", 1, 4), rng, 2000, 3000)
	// Three times the nodes at half the capacity each: the per-node row
	// and the capacity row disagree, so neither can pass reading the other.
	multi := searched(cellOf(t, rng, "asia1", 1, 4), rng, 1000, 9000)
	spec := &v1alpha1.ComparisonSpec{Metrics: []v1alpha1.MetricSpec{{Statistic: v1alpha1.StatisticCapacityPerNode}, {Statistic: v1alpha1.StatisticCapacity}}}
	tab, err := Assemble(spec, []Cell{regional, multi}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		metric string
		want   stats.Verdict
		ratio  float64
	}{{"search capacity ops/s per node", stats.Regressed, 0.5}, {"search capacity ops/s", stats.Improved, 1.5}} {
		metric := w.metric
		r := rowFor(t, tab, "asia1", metric)
		c := r.Comparison
		if c.Verdict != w.want || math.Abs(c.Ratio-w.ratio) > 0.05*w.ratio || c.Method != stats.MethodExact || !(c.HasInterval && c.Lo <= c.Ratio && c.Ratio <= c.Hi) {
			t.Errorf("%s: verdict %s ratio %.3f [%.3f, %.3f] method %s (%s); want %s at about %g, run by run, with its interval",
				metric, c.Verdict, c.Ratio, c.Lo, c.Hi, c.Method, c.Reason, w.want, w.ratio)
		}
		if op, st, ok := ParseMetric(r.Metric); !ok || op != CapacityRow || !st.IsCapacity() {
			t.Errorf("ParseMetric(%q) = %q, %q, %v", r.Metric, op, st, ok)
		}
	}
	unfinished := searched(cellOf(t, rng, "unfinished", 1, 4), rng, 2000, 3000)
	unfinished.Runs[2].Search.Outcome.Done = false
	plain := cellOf(t, rng, "plain", 1, 4)
	tab, err = Assemble(spec, []Cell{regional, unfinished, plain}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for variant, why := range map[string]string{"unfinished": "did not finish", "plain": "not a search"} {
		if r := rowFor(t, tab, variant, "search capacity ops/s per node"); r.Comparison.Verdict != stats.Inconclusive || !strings.Contains(r.Comparison.Reason, why) {
			t.Errorf("%s: verdict %s (%s); want Inconclusive saying %q", variant, r.Comparison.Verdict, r.Comparison.Reason, why)
		}
	}
}

// TestCapacityRowsPerNodeComparesBatchesInRows: the write-throughput
// question with batches — single-row inserts against inserts of 100 rows a
// commit that carry a quarter of the commits — is Regressed in commits
// per node but Improved 25-fold in rows per node, the figure a node's
// write capacity is; rows per operation are the run's own.
func TestCapacityRowsPerNodeComparesBatchesInRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 4))
	single := searched(cellOf(t, rng, "rows-1", 1, 4), rng, 40, 1000)
	batch := searched(cellOf(t, rng, "rows-100", 1, 4), rng, 10, 1000)
	for _, d := range batch.Runs {
		d.Overall.Rows = 100 * d.Overall.OK
	}
	for _, d := range single.Runs {
		d.Overall.Rows = d.Overall.OK
	}
	spec := &v1alpha1.ComparisonSpec{Metrics: []v1alpha1.MetricSpec{{Statistic: v1alpha1.StatisticCapacityPerNode}, {Statistic: v1alpha1.StatisticCapacityRowsPerNode}}}
	tab, err := Assemble(spec, []Cell{single, batch}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		metric string
		want   stats.Verdict
		lo, hi float64
	}{{"search capacity ops/s per node", stats.Regressed, 0.22, 0.28}, {"search capacity rows/s per node", stats.Improved, 22, 28}} {
		r := rowFor(t, tab, "rows-100", c.metric)
		if r.Comparison.Verdict != c.want || r.Comparison.Ratio < c.lo || r.Comparison.Ratio > c.hi {
			t.Errorf("%s: verdict %s ratio %.3f (%s); want %s at %g to %g", c.metric, r.Comparison.Verdict, r.Comparison.Ratio, r.Comparison.Reason, c.want, c.lo, c.hi)
		}
		if op, st, ok := ParseMetric(r.Metric); !ok || op != CapacityRow || !st.IsCapacity() {
			t.Errorf("ParseMetric(%q) = %q, %q, %v", r.Metric, op, st, ok)
		}
	}
}

// TestStatisticsOverASearchAreInvalid: over capacity search runs, whose
// steps are offered different rates, a latency, throughput, error, server
// or cost statistic would pool the steps: its rows are Invalid and say so
// (a campaign stored before admission refused it), a capacity row beside
// them compares, and the same statistics over runs at one rate compare.
func TestStatisticsOverASearchAreInvalid(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	base := searched(cellOf(t, rng, "tokyo", 1, 4), rng, 2000, 3000)
	variant := searched(cellOf(t, rng, "asia1", 1, 4), rng, 1000, 3000)
	pooling := []v1alpha1.CampaignStatistic{v1alpha1.StatisticP99, v1alpha1.StatisticThroughput, v1alpha1.StatisticErrorRate,
		v1alpha1.StatisticServerCPUPerOp, v1alpha1.StatisticCostPerMillionOps}
	spec := &v1alpha1.ComparisonSpec{Metrics: []v1alpha1.MetricSpec{{Statistic: v1alpha1.StatisticCapacityPerNode}}}
	for _, s := range pooling {
		spec.Metrics = append(spec.Metrics, v1alpha1.MetricSpec{Statistic: s})
	}
	oneRate := cellOf(t, rng, "one-rate", 1, 4)
	for _, cells := range [][]Cell{{base, variant}, {oneRate, variant}} {
		tab, err := Assemble(spec, cells, 0)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[v1alpha1.CampaignStatistic]bool{}
		for _, r := range tab.Rows {
			_, st, ok := ParseMetric(r.Metric)
			if !ok {
				t.Fatalf("row %q: not a metric name", r.Metric)
			}
			seen[st] = true
			c := r.Comparison
			switch {
			case st.IsCapacity() && cells[0].Name == "tokyo" && c.Verdict == stats.Invalid:
				t.Errorf("%s: Invalid (%s); a capacity compares over searches", r.Metric, c.Reason)
			case !st.IsCapacity() && (c.Verdict != stats.Invalid || !strings.Contains(c.Reason, "is a capacity search: "+string(st)+" is not defined over a capacity search")):
				t.Errorf("baseline %s, %s: verdict %s (%s); want Invalid saying the statistic is not defined over a capacity search",
					cells[0].Name, r.Metric, c.Verdict, c.Reason)
			}
		}
		for _, s := range pooling {
			if !seen[s] {
				t.Errorf("baseline %s: no row of %s", cells[0].Name, s)
			}
		}
	}
	other := cellOf(t, rng, "other-rate", 1, 4)
	tab, err := Assemble(&v1alpha1.ComparisonSpec{Metrics: []v1alpha1.MetricSpec{{Statistic: v1alpha1.StatisticP99}}}, []Cell{oneRate, other}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tab.Rows {
		if r.Comparison.Verdict == stats.Invalid {
			t.Errorf("%s over runs at one rate: Invalid (%s)", r.Metric, r.Comparison.Reason)
		}
	}
}
