package benchmarkcampaign_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/guardrails"
	"github.com/spanbench/spanbench/internal/pricetest"
	"github.com/spanbench/spanbench/spanner/pricing"
)

// fixturePrices is the test fixture's override in a ConfigMap, and the
// source that reads it.
func fixturePrices(f *fakeCampaign) guardrails.PriceSource {
	return guardrails.PriceSource{Reader: f.stored, ConfigMap: client.ObjectKey{Namespace: "spanbench-system", Name: "prices"}}
}

var fixtureConfigMap = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "spanbench-system", Name: "prices"},
	Data: map[string]string{guardrails.PriceOverrideKey: pricetest.Override}}

func costLimit(t *testing.T, s string) pricing.Limit {
	t.Helper()
	l, err := pricing.ParseLimit(s)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestCampaignRefusesAnIterationAboveItsCostCap: a nightly campaign of
// one 20 s run on 1 node (0.005556 USD at the test fixture's 1.00 per
// node-hour) shows its iteration's estimate and 30 days (30 iterations)
// in status.cost; above --max-iteration-cost it is Stalled with the figure
// and the flag, and the iteration due is recorded Missed with no run
// created; at the cap it starts its run.
func TestCampaignRefusesAnIterationAboveItsCostCap(t *testing.T) {
	for _, tc := range []struct {
		name, cap string
		refused   bool
	}{{"above the cap", "0.005", true}, {"at the cap", "0.005556", false}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeCampaign(t, nightly("capped", ""), interceptor.Funcs{}, fixtureConfigMap.DeepCopy())
			f.r.CostLimits.MaxIterationCost = costLimit(t, tc.cap)
			f.r.Prices = fixturePrices(f)
			f.reconcile()
			cost := f.campaign().Status.Cost
			if cost == nil || cost.IterationEstimate.Amount != "0.005556" || cost.IterationsPerMonth == nil || *cost.IterationsPerMonth != 30 ||
				cost.MonthlyProjection.Amount != "0.16668" || cost.Currency != "USD" {
				t.Fatalf("status.cost = %+v; want an iteration of 0.005556, 30 iterations, 0.16668 USD in 30 days", cost)
			}
			f.clock.SetTime(tokyo2am)
			f.settle()
			c := f.campaign()
			stalled := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.CampaignStalled)
			if !tc.refused {
				if len(f.created) != 1 || stalled != nil && stalled.Status == metav1.ConditionTrue {
					t.Fatalf("at the cap: runs %v, Stalled %+v; want the iteration's run", f.created, stalled)
				}
				return
			}
			if len(f.created) != 0 {
				t.Fatalf("runs created above the cap: %v", f.created)
			}
			if its := c.Status.Iterations; len(its) != 1 || its[0].Outcome != v1alpha1.IterationMissed {
				t.Errorf("iterations %+v; want the due one recorded Missed", its)
			}
			if stalled == nil || stalled.Status != metav1.ConditionTrue || stalled.Reason != v1alpha1.ReasonCostLimitExceeded ||
				!strings.Contains(stalled.Message, "the iteration's estimated cost USD 0.005556 exceeds the limit of USD 0.005 (--max-iteration-cost)") {
				t.Errorf("Stalled %+v; want CostLimitExceeded naming the figure and the flag", stalled)
			}
		})
	}
}

// TestCampaignRecordsEachIterationsCost: an ended iteration's cost is the
// sum of its runs' recorded costs, once every run that ran has one.
func TestCampaignRecordsEachIterationsCost(t *testing.T) {
	f := newFakeCampaign(t, testCampaign("summed", 2, 1), interceptor.Funcs{})
	for range 2 {
		f.settle()
		f.finishRuns(func(*v1alpha1.BenchmarkRun) float64 { return 1 })
	}
	f.settle()
	it := f.campaign().Status.Iterations[0]
	if it.Outcome == v1alpha1.IterationRunning || it.Cost != nil {
		t.Fatalf("iteration %+v; want it ended, its cost pending while its runs have none", it)
	}
	for i, amount := range []string{"1.50", "2.25"} {
		run := f.runs()[i]
		run.Status.Cost = &v1alpha1.RunCost{Currency: "USD", Total: &v1alpha1.CostFigure{Amount: amount}}
		if err := f.stored.Status().Update(context.Background(), &run); err != nil {
			t.Fatal(err)
		}
		f.reconcile()
		it = f.campaign().Status.Iterations[0]
		if i == 0 && it.Cost != nil {
			t.Fatalf("iteration cost %+v with one of two runs priced", it.Cost)
		}
	}
	if it.Cost == nil || it.Cost.Amount != "3.75" {
		t.Errorf("iteration cost %+v; want 3.75, the sum of its runs'", it.Cost)
	}
}
