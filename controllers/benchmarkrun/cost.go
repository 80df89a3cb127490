package benchmarkrun

import (
	"context"
	"errors"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/guardrails"
	"github.com/spanbench/spanbench/controllers/statuswrite"
	"github.com/spanbench/spanbench/spanner/pricing"
)

// estimateCost prices the run from its spec before anything is created for
// it, records the estimate in status.cost once, and holds it to
// --max-run-cost on every pass before the instance, the database and the
// Jobs are made (a manager restarted with a tighter cap refuses too). ok
// is false when the run must stop here: it failed (err nil), or the
// override could not be read (err, retried).
func (r *BenchmarkRunReconciler) estimateCost(ctx context.Context, run *v1alpha1.BenchmarkRun, outbox *statuswrite.Outbox) (ok bool, err error) {
	if run.Status.Cost == nil || run.Status.Cost.Estimate == nil {
		c, from, err := r.Prices.Catalog(ctx)
		var bad *guardrails.CatalogError
		if errors.As(err, &bad) {
			r.fail(run, outbox, v1alpha1.ReasonPriceCatalogInvalid, "the price catalog cannot be used, so the run is not priced and nothing is created: "+err.Error())
			return false, nil
		}
		if err != nil {
			return false, err
		}
		recordEstimate(run, c, from, guardrails.EstimateRun(c, run, r.now()), r.now())
	}
	cost := run.Status.Cost
	estimate, err := pricing.ParseMoney(cost.Estimate.Amount, cost.Currency, cost.Estimate.UnknownReason)
	if err != nil {
		estimate = pricing.Unknown("the recorded estimate does not read back: " + err.Error())
	}
	if reason, msg := r.CostLimits.CheckRun(estimate); reason != "" {
		r.fail(run, outbox, reason, msg)
		return false, nil
	}
	return true, nil
}

// recordEstimate writes the estimate into status.cost. An Ephemeral run's
// charged time starts now, before the instance is asked for: the cost
// errs high rather than low.
func recordEstimate(run *v1alpha1.BenchmarkRun, c *pricing.Catalog, from string, e pricing.Estimate, now time.Time) {
	cost := &v1alpha1.RunCost{Currency: c.Currency(), Catalog: from, Estimate: costFigure(e.Total),
		Holding: v1alpha1.CostHolding(e.Held.Holding), Summary: summary(e.Total, true), Notes: capNotes(e.Notes)}
	if e.Held.Holding == pricing.Ephemeral {
		t := metav1.NewTime(now)
		cost.HeldFrom = &t
	}
	run.Status.Cost = cost
}

// costFigure is a Money as the status carries it.
func costFigure(m pricing.Money) *v1alpha1.CostFigure {
	if !m.Known() {
		return &v1alpha1.CostFigure{UnknownReason: truncate(m.Reason(), 512)}
	}
	return &v1alpha1.CostFigure{Amount: m.Decimal()}
}

// summary is the printer column's text: "USD 1.23", "~USD 1.50" for an
// estimate, or "unknown".
func summary(m pricing.Money, estimate bool) string {
	switch {
	case !m.Known():
		return "unknown"
	case estimate:
		return "~" + m.Currency() + " " + m.Decimal()
	}
	return m.Currency() + " " + m.Decimal()
}

// capNotes keeps the notes within the status's bounds.
func capNotes(notes []string) []string {
	out := make([]string, 0, min(len(notes), 8))
	for _, n := range notes[:min(len(notes), 8)] {
		out = append(out, truncate(n, 512))
	}
	return out
}
