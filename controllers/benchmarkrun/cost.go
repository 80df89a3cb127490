package benchmarkrun

import (
	"context"
	"errors"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/guardrails"
	"github.com/spanbench/spanbench/controllers/runreport"
	"github.com/spanbench/spanbench/controllers/statuswrite"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/spanner/pricing"
	"github.com/spanbench/spanbench/spanner/runcost"
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
		recordEstimate(run, c, from, runcost.Estimate(c, run, r.now()), r.now())
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
	cost := &v1alpha1.RunCost{Currency: c.Currency(), Catalog: from, Estimate: guardrails.StatusFigure(e.Total),
		Holding: v1alpha1.CostHolding(e.Held.Holding), Summary: summary(e.Total, true), Notes: capNotes(e.Notes)}
	if e.Held.Holding == pricing.Ephemeral {
		t := metav1.NewTime(now)
		cost.HeldFrom = &t
	}
	run.Status.Cost = cost
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
		out = append(out, statuswrite.Truncate(n, 512))
	}
	return out
}

// recordCost prices what a finished run held, once it is known (an
// Ephemeral instance's deletion, an Existing run's completion), into
// status.cost and the run's report. A run that held nothing (refused
// before its instance or its start) keeps its estimate alone. A price
// override that became unreadable leaves the cost unknown, with the
// reason: the run's outcome does not depend on its price.
func (r *BenchmarkRunReconciler) recordCost(ctx context.Context, run *v1alpha1.BenchmarkRun) error {
	cost := run.Status.Cost
	if cost == nil || cost.Total != nil {
		return nil
	}
	held, ok := heldOf(run)
	if !ok {
		return nil
	}
	c, from, err := r.Prices.CatalogOrNone(ctx)
	if err != nil {
		return err
	}
	e, perMillion := priceHeld(c, run, held)
	if c.Currency() != "" {
		cost.Currency = c.Currency()
	}
	cost.Catalog = statuswrite.Truncate(from, 256)
	cost.Holding = v1alpha1.CostHolding(held.Holding)
	cost.HeldFrom, cost.HeldTo = statuswrite.Time(held.From), statuswrite.Time(held.To)
	cost.Instance, cost.Storage, cost.Runners, cost.Total = guardrails.StatusFigure(e.Instance), guardrails.StatusFigure(e.Storage), guardrails.StatusFigure(e.Runners), guardrails.StatusFigure(e.Total)
	cost.PerMillionOperations = guardrails.StatusFigure(perMillion)
	cost.Summary = summary(e.Total, false)
	cost.Notes = capNotes(append([]string{held.Description()}, e.Notes...))
	if run.Status.Report == nil {
		return nil
	}
	if err := r.writeReportCost(ctx, run, held); runreport.APITrouble(err) {
		return err
	} else if err != nil {
		// The report is unreadable (its own condition says so); the
		// status holds the cost.
		cost.Notes = capNotes(append(cost.Notes, "not written into the report: "+statuswrite.Truncate(err.Error(), 256)))
	}
	return nil
}

// writeReportCost writes status.cost into the run's stored report.
func (r *BenchmarkRunReconciler) writeReportCost(ctx context.Context, run *v1alpha1.BenchmarkRun, held pricing.Held) error {
	doc, cm, err := r.serverFigures().RunReport(ctx, run)
	if err != nil {
		return err
	}
	doc.Cost = reportCost(run.Status.Cost, held)
	return r.serverFigures().UpdateReport(ctx, cm, run, doc)
}

// heldOf is what the run held and for how long: an Ephemeral instance from
// the manager's first request for it to its deletion, an Existing
// instance for the run's window. ok is false until that is known, and for
// a run that held nothing.
func heldOf(run *v1alpha1.BenchmarkRun) (pricing.Held, bool) {
	st := &run.Status
	pu := int64(run.Spec.Target.Instance.Capacity())
	if t := st.Target; t != nil {
		switch {
		case t.ProcessingUnits != nil:
			pu = int64(*t.ProcessingUnits)
		case t.Nodes != nil:
			pu = int64(*t.Nodes) * pricing.ProcessingUnitsPerNode
		}
	}
	if run.Spec.Target.Instance.Mode == v1alpha1.InstanceEphemeral {
		t := st.Target
		if t == nil || t.DeletionTime == nil || st.Cost.HeldFrom == nil {
			return pricing.Held{}, false
		}
		return pricing.Held{Holding: pricing.Ephemeral, ProcessingUnits: pu, From: stored(st.Cost.HeldFrom), To: stored(t.DeletionTime)}, true
	}
	if st.StartTime == nil || st.CompletionTime == nil {
		return pricing.Held{}, false
	}
	return pricing.Held{Holding: pricing.Existing, ProcessingUnits: pu, From: stored(st.StartTime), To: stored(st.CompletionTime)}, true
}

// stored is t as the status stores it, to the second: a time set in this
// pass (the instance's deletion) and the same time read back from the API
// server then price alike, whichever pass prices the run first.
func stored(t *metav1.Time) time.Time { return t.Truncate(time.Second) }

// statusEditions maps the edition Spanner reports to the API's.
var statusEditions = map[string]pricing.Edition{
	"STANDARD": pricing.Edition(v1alpha1.EditionStandard), "ENTERPRISE": pricing.Edition(v1alpha1.EditionEnterprise),
	"ENTERPRISE_PLUS": pricing.Edition(v1alpha1.EditionEnterprisePlus),
}

// priceHeld prices held with the run's plan (the declared configuration;
// the edition Spanner reported when the spec names none), the runners for
// the run's window, and the cost of a million operations measured.
func priceHeld(c *pricing.Catalog, run *v1alpha1.BenchmarkRun, held pricing.Held) (pricing.Estimate, pricing.Money) {
	p := runcost.Plan(run)
	if t := run.Status.Target; p.Edition == "" && t != nil {
		p.Edition = statusEditions[t.Edition]
	}
	var runTime, window time.Duration
	if st := &run.Status; st.StartTime != nil && st.CompletionTime != nil {
		runTime = stored(st.CompletionTime).Sub(stored(st.StartTime))
		measuredFrom := stored(st.StartTime)
		if st.WarmUpEnd != nil {
			measuredFrom = stored(st.WarmUpEnd)
		}
		window = stored(st.StartTime).Add(run.Spec.Workload.TotalDuration()).Sub(measuredFrom)
	}
	e := pricing.Price(c, p, held, runTime)
	var ops int64
	if o := run.Status.Overall; o != nil {
		ops = o.Count
	}
	return e, pricing.PerMillionOps(pricing.WindowShare(e.Total, window, held.Duration()), ops)
}

// reportCost is the status's cost as the report's section.
func reportCost(c *v1alpha1.RunCost, held pricing.Held) *result.Cost {
	fig := func(f *v1alpha1.CostFigure) result.CostFigure {
		if f == nil {
			return result.CostFigure{Unknown: "not computed"}
		}
		return result.CostFigure{Amount: f.Amount, Unknown: f.UnknownReason}
	}
	return &result.Cost{Currency: c.Currency, Catalog: c.Catalog, Holding: string(c.Holding), HeldFrom: held.From, HeldTo: held.To,
		ProcessingUnits: held.ProcessingUnits, Estimate: fig(c.Estimate), Instance: fig(c.Instance), Storage: fig(c.Storage),
		Runners: fig(c.Runners), Total: fig(c.Total), PerMillionOperations: fig(c.PerMillionOperations), Notes: c.Notes}
}
