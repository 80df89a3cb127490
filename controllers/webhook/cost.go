package webhook

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/clock"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/plan"
	"github.com/spanbench/spanbench/controllers/guardrails"
	"github.com/spanbench/spanbench/spanner/pricing"
	"github.com/spanbench/spanbench/spanner/runcost"
)

// Costs is the monthly bound a campaign is held to at admission
// (--max-monthly-cost): its schedule's iterations in 30 days × one
// iteration's estimate, priced as the manager prices runs. The zero value
// bounds nothing.
type Costs struct {
	Limits guardrails.CostLimits
	Prices guardrails.PriceSource
	// Clock is when the 30 days start; nil is the real clock.
	Clock clock.PassiveClock
}

// check refuses a scheduled campaign whose projected month is above the
// bound, or cannot be projected under it (an unknown price), naming the
// figure, the iterations and the flag, on spec.schedule. A campaign
// without a schedule runs on demand and has no month to project; each of
// its iterations is held to --max-iteration-cost when it starts.
func (k Costs) check(ctx context.Context, c *v1alpha1.BenchmarkCampaign) error {
	if !k.Limits.MaxMonthlyCost.Set() || c.Spec.Schedule == "" {
		return nil
	}
	cells, _, err := plan.Expand(&c.Spec)
	if err != nil {
		return err // Check, which runs first, refuses it already
	}
	sched, loc, err := plan.ParseSchedule(&c.Spec)
	if err != nil {
		return refuseSchedule(c, fmt.Sprintf("%v: the campaign's 30 days cannot be held to the operator's limit (--max-monthly-cost)", err))
	}
	catalog, _, err := k.Prices.Catalog(ctx)
	var bad *guardrails.CatalogError
	switch {
	case errors.As(err, &bad):
		return refuseSchedule(c, fmt.Sprintf("the price override cannot be used, so the campaign's 30 days cannot be held to the operator's limit (--max-monthly-cost): %v", err))
	case err != nil:
		return apierrors.NewInternalError(err)
	}
	now := time.Now()
	if k.Clock != nil {
		now = k.Clock.Now()
	}
	specs, names := make([]v1alpha1.BenchmarkRunSpec, len(cells)), make([]string, len(cells))
	for i := range cells {
		specs[i], names[i] = cells[i].Spec, cells[i].Name
	}
	iteration := runcost.EstimateIteration(catalog, specs, names, c.Spec.RepetitionCount(), now)
	month, n, err := pricing.Monthly(iteration, sched, loc, now)
	if err != nil {
		month = pricing.Unknown(err.Error())
	}
	if reason, msg := k.Limits.CheckMonthly(month); reason != "" {
		return refuseSchedule(c, fmt.Sprintf("%s: %d iterations in 30 days at %s each", msg, n, iteration))
	}
	return nil
}

// refuseSchedule is the API server's refusal of c, on spec.schedule.
func refuseSchedule(c *v1alpha1.BenchmarkCampaign, msg string) error {
	return apierrors.NewInvalid(v1alpha1.GroupVersion.WithKind("BenchmarkCampaign").GroupKind(), c.Name,
		field.ErrorList{field.Forbidden(field.NewPath("spec", "schedule"), msg)})
}
