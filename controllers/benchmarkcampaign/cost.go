package benchmarkcampaign

import (
	"context"
	"fmt"
	"time"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/plan"
	"github.com/spanbench/spanbench/controllers/guardrails"
	"github.com/spanbench/spanbench/controllers/statuswrite"
	"github.com/spanbench/spanbench/spanner/pricing"
	"github.com/spanbench/spanbench/spanner/runcost"
)

// estimateCampaign prices one iteration of the campaign's current spec
// and, with a schedule, its next 30 days, into status.cost, and keeps the
// iteration's estimate in p for the --max-iteration-cost check. An
// unusable price override leaves the estimate unknown, with the reason
// (and so refused under a cap); an error is the API server's.
func (r *BenchmarkCampaignReconciler) estimateCampaign(ctx context.Context, p *pass) error {
	if p.current == nil {
		return nil
	}
	c, from, err := r.Prices.CatalogOrNone(ctx)
	if err != nil {
		return err
	}
	p.iterationCost = iterationEstimate(c, p.current, p.now)
	cost := &v1alpha1.CampaignCost{Currency: c.Currency(), Catalog: statuswrite.Shorten(from, 256), IterationEstimate: guardrails.StatusFigure(p.iterationCost)}
	if p.c.Spec.Schedule != "" {
		if sched, loc, err := plan.ParseSchedule(&p.c.Spec); err == nil {
			month, n, _ := pricing.Monthly(p.iterationCost, sched, loc, p.now)
			runs := int32(n)
			cost.IterationsPerMonth, cost.MonthlyProjection = &runs, guardrails.StatusFigure(month)
		}
	}
	p.c.Status.Cost = cost
	if reason, msg := r.refuseIteration(p); reason != "" {
		// Stalled until the spec or the cap changes: every iteration due
		// is refused (recordIteration), and the condition says why.
		p.stall = stalledBy(reason, msg)
	}
	return nil
}

// iterationEstimate is one iteration of ip: every cell's run, repeated.
func iterationEstimate(c *pricing.Catalog, ip *iterationPlan, now time.Time) pricing.Money {
	specs, names := make([]v1alpha1.BenchmarkRunSpec, len(ip.cells)), make([]string, len(ip.cells))
	for i := range ip.cells {
		specs[i], names[i] = ip.cells[i].Spec, ip.cells[i].Name
	}
	return runcost.EstimateIteration(c, specs, names, ip.spec.RepetitionCount(), now)
}

// refuseIteration holds the iteration about to start to
// --max-iteration-cost: "" when it may start, else why not, naming the
// figure and the flag. A refused iteration is recorded Missed, and none of
// its runs is created.
func (r *BenchmarkCampaignReconciler) refuseIteration(p *pass) (reason, msg string) {
	return r.CostLimits.CheckIteration(p.iterationCost)
}

// priceIterations records each ended iteration's cost once every run of it
// that held an instance has its cost: the sum of their status.cost.total.
// An iteration whose runs are gone (pruned) keeps no cost.
func priceIterations(p *pass) {
	byIteration := map[string][]*v1alpha1.BenchmarkRun{}
	for _, run := range p.runs {
		it := run.Labels[v1alpha1.LabelIteration]
		byIteration[it] = append(byIteration[it], run)
	}
	for i := range p.c.Status.Iterations {
		it := &p.c.Status.Iterations[i]
		if it.Cost != nil || it.Outcome == v1alpha1.IterationRunning || it.Outcome == v1alpha1.IterationMissed {
			continue
		}
		runs := byIteration[it.Name]
		if len(runs) == 0 || int32(len(runs)) < it.Runs {
			continue
		}
		if m, ok := sumRunCosts(runs); ok {
			it.Cost = guardrails.StatusFigure(m)
		}
	}
}

// sumRunCosts adds the runs' recorded costs; ok is false while one that
// held an instance has none yet. A run that held nothing (refused before
// its instance or its start) adds nothing.
func sumRunCosts(runs []*v1alpha1.BenchmarkRun) (pricing.Money, bool) {
	var costs []pricing.Money
	for _, run := range runs {
		c := run.Status.Cost
		switch {
		case c != nil && c.Total != nil:
			m, err := pricing.ParseMoney(c.Total.Amount, c.Currency, c.Total.UnknownReason)
			if err != nil {
				m = pricing.Unknown(fmt.Sprintf("run %s: its recorded cost does not read back", run.Name))
			} else if !m.Known() {
				m = pricing.Unknown(fmt.Sprintf("run %s: %s", run.Name, m.Reason()))
			}
			costs = append(costs, m)
		case !run.IsFinished() || heldSomething(run):
			return pricing.Money{}, false
		}
	}
	if len(costs) == 0 {
		return pricing.Unknown("no run of the iteration held an instance"), true
	}
	return pricing.Sum(costs...), true
}

// heldSomething says whether a finished run held an instance, and so will
// have a cost: an Ephemeral one it created, or an Existing one it ran on.
func heldSomething(run *v1alpha1.BenchmarkRun) bool {
	if run.Spec.Target.Instance.Mode == v1alpha1.InstanceEphemeral {
		return run.Status.Target != nil && run.Status.Target.Created
	}
	return run.Status.StartTime != nil
}
