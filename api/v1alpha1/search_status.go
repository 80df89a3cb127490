package v1alpha1

// SearchStatus is a capacity search's progress and outcome in a run's
// status (docs/capacity.md): the step table as the manager judged each
// step from the runners' merged histograms, and the capacity once known.
// Rates are decimal strings with one fractional digit (FormatThroughput):
// the API carries no floating-point numbers.
type SearchStatus struct {
	// maxSteps is the most steps the search may take (its worst case,
	// known at admission).
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxSteps int32 `json:"maxSteps,omitempty"`

	// slo is the SLO the steps are judged by, resolved (a Recommended CPU
	// bound as its figure, the default achieved condition added).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=512
	SLO []string `json:"slo,omitempty"`

	// steps are the steps judged so far, in order.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=512
	Steps []SearchStepStatus `json:"steps,omitempty"`

	// done says the search ended with a capacity it stands by; false
	// while it runs and when it stopped unfinished (reason OutOfTime).
	// +optional
	Done bool `json:"done,omitempty"`

	// reason is why the search ended: Resolved, ReachedMax, BelowFrom,
	// StepLimit, or OutOfTime when the next step would have ended after
	// the workload's duration.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Reason string `json:"reason,omitempty"`

	// capacity is the highest rate that passed, in operations per second,
	// once the search ended; with reason ReachedMax a lower bound.
	// +optional
	// +kubebuilder:validation:MaxLength=24
	// +kubebuilder:validation:Pattern=`^[0-9]+([.][0-9]+)?$`
	Capacity string `json:"capacity,omitempty"`

	// capacityPerNode is the capacity per 1,000 processing units (one
	// node); absent when the instance's size is not known (the emulator).
	// +optional
	// +kubebuilder:validation:MaxLength=24
	// +kubebuilder:validation:Pattern=`^[0-9]+([.][0-9]+)?$`
	CapacityPerNode string `json:"capacityPerNode,omitempty"`

	// firstFailing is the lowest rate that failed (confirmed), in
	// operations per second; absent when none did.
	// +optional
	// +kubebuilder:validation:MaxLength=24
	// +kubebuilder:validation:Pattern=`^[0-9]+([.][0-9]+)?$`
	FirstFailing string `json:"firstFailing,omitempty"`

	// failedConditions are the SLO conditions the deciding step of the
	// first failing rate failed.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=512
	FailedConditions []string `json:"failedConditions,omitempty"`

	// summary is the capacity as `kubectl get` shows it: "24.0/s",
	// ">=128.0/s" (max passed), "<2.0/s" (the first rate failed), or
	// empty until the search ends.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Summary string `json:"summary,omitempty"`
}

// SearchStepStatus is one step of a capacity search.
type SearchStepStatus struct {
	// offered is the step's rate, all runners together, in operations
	// per second.
	// +required
	// +kubebuilder:validation:MaxLength=24
	// +kubebuilder:validation:Pattern=`^[0-9]+([.][0-9]+)?$`
	Offered string `json:"offered"`

	// achieved is its successful operations per second over its measured
	// time.
	// +optional
	// +kubebuilder:validation:MaxLength=24
	// +kubebuilder:validation:Pattern=`^[0-9]+([.][0-9]+)?$`
	Achieved string `json:"achieved,omitempty"`

	// cpu is Spanner's high-priority CPU utilization over the step (the
	// highest region's), such as "41.3%"; absent where the target does not
	// report it (the emulator).
	// +optional
	// +kubebuilder:validation:MaxLength=16
	CPU string `json:"cpu,omitempty"`

	// figures are the SLO's figures, in the SLO's order.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Figures []SearchFigureStatus `json:"figures,omitempty"`

	// pass says every measured figure met its condition.
	// +required
	Pass bool `json:"pass"`
}

// SearchFigureStatus is one SLO condition's figure in one step.
type SearchFigureStatus struct {
	// condition is the SLO condition the figure is checked against, as
	// written in spec.workload.load.search.slo, such as "p99 <= 20ms".
	// +required
	// +kubebuilder:validation:MaxLength=512
	Condition string `json:"condition"`

	// value is the measured figure as a reader reads it: a duration for a
	// latency condition ("12.4ms"), a percentage with two decimals
	// otherwise ("0.10%"); absent where there is none (note says why).
	// baseValue holds it to 12 significant digits.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Value string `json:"value,omitempty"`

	// baseValue is the measured figure in its base unit, as a decimal
	// string with up to 12 significant digits and no exponent: seconds for
	// a latency condition ("0.0124"), a ratio otherwise ("0.00001" for
	// 0.001 %); absent where there is none. It is what Prometheus' series
	// spanbench_run_search_step_figure serves.
	// +optional
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[0-9]+([.][0-9]+)?$`
	BaseValue string `json:"baseValue,omitempty"`

	// note says why the figure has no value, where it has none: not
	// measured ("not reported by the target", the cpu condition on the
	// emulator; or why Cloud Monitoring's figure could not be had), or
	// failed for want of operations ("no successful operation").
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Note string `json:"note,omitempty"`

	// pass says the figure meets the condition; a figure not measured
	// neither passes nor fails the step.
	// +required
	Pass bool `json:"pass"`

	// measured is false where the figure could not be had (CPU on a
	// target that does not report it).
	// +required
	Measured bool `json:"measured"`
}

// ReasonSearchStalled fails a capacity search whose runners did not all
// report a step within protocol.SearchReportTimeout of its end: the
// manager cannot judge it, and a search never waits forever.
const ReasonSearchStalled = "SearchStalled"

// ReasonSearchEnded is the Normal event of a capacity search that ended
// (the runners then store their results): its capacity in the message.
const ReasonSearchEnded = "SearchEnded"
