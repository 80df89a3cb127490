package comparison

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/stats"
	"github.com/spanbench/spanbench/result"
)

// withCost gives each of c's runs a cost section of perMillion (± run
// noise) per million operations.
func withCost(c Cell, rng *rand.Rand, perMillion float64) Cell {
	for _, d := range c.Runs {
		v := perMillion * (1 + 0.01*rng.NormFloat64())
		d.Cost = &result.Cost{Currency: "USD", PerMillionOperations: result.CostFigure{Amount: fmt.Sprintf("%.6f", v)}}
	}
	return c
}

// TestCostPerMillionOpsComparesThePriceOfTheSameWork: the single- vs
// multi-region seed's cost conclusion as a campaign row: asia1 holding
// twice the nodes at three times the price per node for the same
// operations costs about 6x per million operations, a regression named
// "overall cost per million ops" (one row: the figure is the run's).
// Without a cost the row is inconclusive and says why.
func TestCostPerMillionOpsComparesThePriceOfTheSameWork(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	spec := &v1alpha1.ComparisonSpec{Metrics: []v1alpha1.MetricSpec{{Statistic: v1alpha1.StatisticCostPerMillionOps}}}
	tokyo := withCost(cellOf(t, rng, "tokyo", 1, 4), rng, 0.50)
	asia1 := withCost(cellOf(t, rng, "asia1", 1, 4), rng, 0.50*2*3)
	tab, err := Assemble(spec, []Cell{tokyo, asia1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := rowFor(t, tab, "asia1", "overall cost per million ops")
	if r.Comparison.Verdict != stats.Regressed || r.Comparison.Ratio < 5.8 || r.Comparison.Ratio > 6.2 {
		t.Errorf("asia1 vs tokyo cost per million ops: verdict %s ratio %.3f (%s); want Regressed at about 6x",
			r.Comparison.Verdict, r.Comparison.Ratio, r.Comparison.Reason)
	}
	if n := len(tab.Rows); n != 1 {
		t.Errorf("%d rows; want one for the variant (the run's figure, not one per operation)", n)
	}
	op, st, ok := ParseMetric(r.Metric)
	if !ok || op != "overall" || st != v1alpha1.StatisticCostPerMillionOps {
		t.Errorf("ParseMetric(%q) = %q, %q, %v", r.Metric, op, st, ok)
	}

	unpriced := cellOf(t, rng, "asia1", 1, 4)
	tab, err = Assemble(spec, []Cell{tokyo, unpriced}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r := rowFor(t, tab, "asia1", "overall cost per million ops"); r.Comparison.Verdict != stats.Inconclusive || !strings.Contains(r.Comparison.Reason, "has no cost") {
		t.Errorf("without a cost: verdict %s (%q); want Inconclusive saying so", r.Comparison.Verdict, r.Comparison.Reason)
	}
}
