package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Reasons of the cost guardrails (docs/cost.md). Nothing is created for a
// run refused with any of them.
const (
	// ReasonCostLimitExceeded: the run's estimated cost is above the
	// operator's --max-run-cost, or a campaign iteration's above its
	// --max-iteration-cost (the iteration is recorded Missed, none of its
	// runs created).
	ReasonCostLimitExceeded = "CostLimitExceeded"
	// ReasonCostUnknown: the operator caps the cost of a run or an
	// iteration (--max-run-cost, --max-iteration-cost) but the run's cost cannot be estimated (no price for
	// its configuration, no declared size): a cap that cannot be checked
	// does not let the run through.
	ReasonCostUnknown = "CostUnknown"
	// ReasonPriceCatalogInvalid: the operator's price override
	// (--price-catalog-configmap) is missing or does not validate; the
	// message names the entry and the field.
	ReasonPriceCatalogInvalid = "PriceCatalogInvalid"
)

// CostHolding says which time a run's instance cost charges.
// +kubebuilder:validation:Enum=Ephemeral;Existing
type CostHolding string

// The holdings.
const (
	// CostHoldingEphemeral: the run created its instance; it is charged
	// from creation to deletion, at least the hour Spanner bills for any
	// provisioned capacity.
	CostHoldingEphemeral CostHolding = "Ephemeral"
	// CostHoldingExisting: the instance was there before the run; the run
	// is charged its own window, start to completion.
	CostHoldingExisting CostHolding = "Existing"
)

// CostFigure is an amount of money in the enclosing cost's currency, or
// why it is unknown: a cost that cannot be computed is never zero.
type CostFigure struct {
	// amount is a decimal in the currency's units, such as 12.50 or
	// 0.000123; absent when unknown.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^-?[0-9]+\.[0-9]{2,6}$`
	Amount string `json:"amount,omitempty"`

	// unknownReason says why the amount is unknown (no price for the
	// configuration, no operations measured).
	// +optional
	// +kubebuilder:validation:MaxLength=512
	UnknownReason string `json:"unknownReason,omitempty"`
}

// RunCost is what a run costs in Cloud Spanner prices: the estimate the
// manager made from the spec before creating anything, and, once the run
// ended, what it held (docs/cost.md says what is and is not counted).
type RunCost struct {
	// currency is the ISO 4217 code of every amount, the price catalog's.
	// +optional
	// +kubebuilder:validation:MaxLength=3
	Currency string `json:"currency,omitempty"`

	// catalog says where the prices come from: the embedded catalog and the
	// date its figures were taken, or the operator's override.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Catalog string `json:"catalog,omitempty"`

	// estimate is the cost the manager estimated from the spec before it
	// created the instance, database or Jobs: the figure --max-run-cost is
	// held to. It assumes the deadlines' upper bound for the setup.
	// +optional
	Estimate *CostFigure `json:"estimate,omitempty"`

	// holding says which time the instance cost charges: Ephemeral
	// (creation to deletion) or Existing (the run's window).
	// +optional
	Holding CostHolding `json:"holding,omitempty"`

	// heldFrom is when the time charged starts: when the manager first
	// asked for the Ephemeral instance (recorded before the call, so the
	// cost errs high), or the run's start time (Existing).
	// +optional
	HeldFrom *metav1.Time `json:"heldFrom,omitempty"`

	// heldTo is when the time charged ends: the Ephemeral instance's
	// deletion, or the run's completion (Existing).
	// +optional
	HeldTo *metav1.Time `json:"heldTo,omitempty"`

	// instance is the compute: processing units × the hours held × the
	// price per node-hour / 1000.
	// +optional
	Instance *CostFigure `json:"instance,omitempty"`

	// storage is the loaded dataset's estimated bytes for the time held.
	// +optional
	Storage *CostFigure `json:"storage,omitempty"`

	// runners is the runner pods' CPU requests × the run's time × the
	// operator's price per vCPU-hour; unknown when none is given, and then
	// left out of total.
	// +optional
	Runners *CostFigure `json:"runners,omitempty"`

	// total is instance + storage (+ runners when priced).
	// +optional
	Total *CostFigure `json:"total,omitempty"`

	// perMillionOperations is the measured window's share of total divided
	// by the operations measured in it, × 1,000,000.
	// +optional
	PerMillionOperations *CostFigure `json:"perMillionOperations,omitempty"`

	// summary is the cost at a glance, for `kubectl get`: "USD 1.23",
	// "~USD 1.50" for an estimate, or "unknown".
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Summary string `json:"summary,omitempty"`

	// notes say what the figures assume.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=512
	Notes []string `json:"notes,omitempty"`
}

// CampaignCost is a campaign's estimated cost: one iteration of its
// current spec (every run of every cell and repetition, each estimated as
// the manager estimates a run) and, with a schedule, the iterations it
// starts in 30 days.
type CampaignCost struct {
	// currency is the ISO 4217 code of every amount, the price catalog's.
	// +optional
	// +kubebuilder:validation:MaxLength=3
	Currency string `json:"currency,omitempty"`

	// catalog says where the prices come from.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Catalog string `json:"catalog,omitempty"`

	// iterationEstimate is the estimated cost of one iteration: the figure
	// --max-iteration-cost is held to.
	// +optional
	IterationEstimate *CostFigure `json:"iterationEstimate,omitempty"`

	// iterationsPerMonth is how many iterations the schedule starts in the
	// 30 days from the estimate; absent without a schedule.
	// +optional
	// +kubebuilder:validation:Minimum=0
	IterationsPerMonth *int32 `json:"iterationsPerMonth,omitempty"`

	// monthlyProjection is iterationEstimate × iterationsPerMonth; absent
	// without a schedule. --max-monthly-cost holds it at admission.
	// +optional
	MonthlyProjection *CostFigure `json:"monthlyProjection,omitempty"`
}
