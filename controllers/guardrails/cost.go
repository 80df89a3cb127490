package guardrails

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/statuswrite"
	"github.com/spanbench/spanbench/spanner/pricing"
)

// PriceOverrideKey is the key of the price override in the operator's
// ConfigMap (--price-catalog-configmap): a file in the catalog's format
// (docs/cost.md).
const PriceOverrideKey = "prices.yaml"

// PriceSource is the catalog runs are priced with: the embedded one, with
// the operator's override from a ConfigMap applied when one is named. The
// ConfigMap is read for each estimate, so that a corrected override
// applies to the next run without restarting the manager.
type PriceSource struct {
	// Base is the catalog the override applies to; nil is the embedded
	// one (pricing.Default).
	Base *pricing.Catalog
	// Reader reads the ConfigMap (the manager's API reader: its cache holds
	// only the runs' own ConfigMaps).
	Reader client.Reader
	// ConfigMap names the override; empty for none.
	ConfigMap types.NamespacedName
}

// CatalogError is an override that cannot be used: missing or invalid.
// Nothing is priced with it, and so nothing is created for a run it would
// price.
type CatalogError struct{ Err error }

func (e *CatalogError) Error() string { return e.Err.Error() }
func (e *CatalogError) Unwrap() error { return e.Err }

// Catalog returns the catalog and a line saying where it comes from. A
// missing or invalid override is a *CatalogError naming the entry; other
// errors (the API server unreachable) pass.
func (s PriceSource) Catalog(ctx context.Context) (*pricing.Catalog, string, error) {
	base := s.Base
	if base == nil {
		var err error
		if base, err = pricing.Default(); err != nil {
			return nil, "", &CatalogError{err}
		}
	}
	from := fmt.Sprintf("embedded catalog taken %s", base.TakenOn())
	if s.ConfigMap.Name == "" {
		return base, from, nil
	}
	cm := &corev1.ConfigMap{}
	if err := s.Reader.Get(ctx, s.ConfigMap, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, "", &CatalogError{fmt.Errorf("the price override ConfigMap %s does not exist (--price-catalog-configmap)", s.ConfigMap)}
		}
		return nil, "", fmt.Errorf("reading the price override ConfigMap %s: %w", s.ConfigMap, err)
	}
	data, ok := cm.Data[PriceOverrideKey]
	if !ok {
		return nil, "", &CatalogError{fmt.Errorf("the price override ConfigMap %s has no key %s (--price-catalog-configmap)", s.ConfigMap, PriceOverrideKey)}
	}
	c, err := pricing.Override(base, []byte(data))
	if err != nil {
		return nil, "", &CatalogError{fmt.Errorf("ConfigMap %s, key %s: %w", s.ConfigMap, PriceOverrideKey, err)}
	}
	return c, fmt.Sprintf("override %s (taken %s) over the %s", s.ConfigMap, c.TakenOn(), from), nil
}

// CatalogOrNone is Catalog for figures that are recorded, not enforced
// (a finished run's cost, a campaign's estimate): an unusable override
// gives a catalog that prices nothing, so that every figure says unknown
// with the override's error as the source, instead of failing. Other
// errors (the API server) pass.
func (s PriceSource) CatalogOrNone(ctx context.Context) (*pricing.Catalog, string, error) {
	c, from, err := s.Catalog(ctx)
	var bad *CatalogError
	if errors.As(err, &bad) {
		return &pricing.Catalog{}, "none: " + err.Error(), nil
	}
	return c, from, err
}

// CostLimits are the operator's caps in money. The zero value caps
// nothing: the demo runs on an unpriced catalog and must not be refused.
type CostLimits struct {
	// MaxRunCost caps a run's estimate (--max-run-cost).
	MaxRunCost pricing.Limit
	// MaxIterationCost caps the estimate of a campaign iteration: every
	// run it starts (--max-iteration-cost).
	MaxIterationCost pricing.Limit
	// MaxMonthlyCost caps a campaign's projected 30 days at its schedule,
	// checked at admission (--max-monthly-cost).
	MaxMonthlyCost pricing.Limit
}

// CheckRun holds a run's estimate to MaxRunCost: "" when it passes, else
// the condition's reason and a message naming the figure and the flag. An
// unknown estimate under a cap is refused (CostUnknown): the cap cannot be
// checked, and an unpriced run passing it would make the cap decorative.
func (l CostLimits) CheckRun(estimate pricing.Money) (reason, msg string) {
	return check(l.MaxRunCost, estimate, "the run's estimated cost", "--max-run-cost")
}

// CheckIteration holds a campaign iteration's estimate to
// MaxIterationCost, as CheckRun does a run's.
func (l CostLimits) CheckIteration(estimate pricing.Money) (reason, msg string) {
	return check(l.MaxIterationCost, estimate, "the iteration's estimated cost", "--max-iteration-cost")
}

// CheckMonthly holds a campaign's projected month to MaxMonthlyCost.
func (l CostLimits) CheckMonthly(projection pricing.Money) (reason, msg string) {
	return check(l.MaxMonthlyCost, projection, "the campaign's projected cost for 30 days", "--max-monthly-cost")
}

func check(l pricing.Limit, m pricing.Money, what, flag string) (reason, msg string) {
	why := l.Check(m)
	switch {
	case why == "":
		return "", ""
	case !m.Known():
		return v1alpha1.ReasonCostUnknown, fmt.Sprintf("%s %s; a cap that cannot be checked refuses (%s; price the configuration with an override, or lift the cap)", what, why, flag)
	}
	return v1alpha1.ReasonCostLimitExceeded, fmt.Sprintf("%s %s (%s)", what, why, flag)
}

// StatusFigure is a Money as a status carries it: an amount, or why it is
// unknown (never an amount of 0).
func StatusFigure(m pricing.Money) *v1alpha1.CostFigure {
	if !m.Known() {
		return &v1alpha1.CostFigure{UnknownReason: statuswrite.Shorten(m.Reason(), statuswrite.MaxProblemBytes)}
	}
	return &v1alpha1.CostFigure{Amount: m.Decimal()}
}
