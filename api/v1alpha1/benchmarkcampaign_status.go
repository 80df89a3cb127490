package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Bounds of a campaign's status, so that it stays far below the object size
// limit whatever the campaign's age.
const (
	// MaxStatusIterations bounds status.iterations (newest kept).
	MaxStatusIterations = 100
	// MaxComparisonRows bounds status.comparison.rows; the whole table is in
	// the iteration's report.
	MaxComparisonRows = 64
	// MaxStatusChangePoints bounds status.changePoints (newest kept).
	MaxStatusChangePoints = 32
	// MaxActiveRuns bounds status.active.
	MaxActiveRuns = 256
)

// BenchmarkCampaignStatus is what the controller observed and concluded.
type BenchmarkCampaignStatus struct {
	// conditions are Ready, Reconciling, Stalled and Regressed.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the spec generation the status describes.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// verdict is the campaign's one word: Regressed when the latest
	// comparison or the trend found a regression, else the latest
	// comparison's overall verdict.
	// +optional
	Verdict CampaignVerdict `json:"verdict,omitempty"`

	// lastScheduleTime is when the last iteration was scheduled.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`

	// lastSuccessfulTime is when the last iteration succeeded.
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`

	// nextScheduleTime is when the next iteration is due; absent without a
	// schedule or while suspended.
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`

	// cost is the current spec's estimated cost per iteration and, with a
	// schedule, for 30 days (docs/cost.md).
	// +optional
	Cost *CampaignCost `json:"cost,omitempty"`

	// lastRunNow is the last runNow token acted on.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	LastRunNow string `json:"lastRunNow,omitempty"`

	// active are the names of the campaign's runs not yet finished.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=63
	Active []string `json:"active,omitempty"`

	// iterations are the most recent iterations, newest last, at most 100.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	Iterations []IterationStatus `json:"iterations,omitempty"`

	// progress says which iteration the campaign is on and how many of its
	// runs have started, for `kubectl get` (the Iteration and Run
	// columns); it names the latest iteration that ran, and stays once it
	// ended until the next one starts.
	// +optional
	Progress *CampaignProgress `json:"progress,omitempty"`

	// comparison is the latest completed iteration's comparison table, at
	// most 64 rows; the whole table is in the iteration's report.
	// +optional
	Comparison *ComparisonStatus `json:"comparison,omitempty"`

	// changePoints are the change points the trend found, newest last, at
	// most 32.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	ChangePoints []ChangePointStatus `json:"changePoints,omitempty"`
}

// IterationStatus is one iteration of a campaign.
type IterationStatus struct {
	// name names the iteration: the campaign's name and the scheduled time.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// scheduledTime is when the iteration was due.
	// +required
	ScheduledTime metav1.Time `json:"scheduledTime"`

	// templateHash identifies the spec (template, matrix, comparison) the
	// iteration ran, so that a trend can tell a change of spec from a
	// change of the system.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	TemplateHash string `json:"templateHash,omitempty"`

	// outcome is Running, Succeeded, Failed or Missed.
	// +required
	Outcome IterationOutcome `json:"outcome"`

	// runs is the number of runs the iteration has.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Runs int32 `json:"runs,omitempty"`

	// succeeded is the number of its runs that succeeded.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Succeeded int32 `json:"succeeded,omitempty"`

	// failed is the number of its runs that failed.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Failed int32 `json:"failed,omitempty"`

	// verdict is the iteration's comparison verdict.
	// +optional
	Verdict CampaignVerdict `json:"verdict,omitempty"`

	// report is the ConfigMap holding the iteration's whole comparison
	// table and summaries.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Report string `json:"report,omitempty"`

	// cost is the sum of the iteration's runs' costs (status.cost.total,
	// in status.cost.currency), once each run that held an instance has
	// its cost; absent until then, and when its runs are gone.
	// +optional
	Cost *CostFigure `json:"cost,omitempty"`
}

// CampaignProgress is where a campaign's latest iteration is.
type CampaignProgress struct {
	// iteration names the iteration (status.iterations[].name).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Iteration string `json:"iteration"`

	// run is the number of the iteration's runs started so far: the run it
	// is on when they run one at a time.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Run int32 `json:"run,omitempty"`

	// runs is the number of runs the iteration has.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Runs int32 `json:"runs,omitempty"`

	// summary is run/runs for the Run column, such as "3/8".
	// +optional
	// +kubebuilder:validation:MaxLength=24
	Summary string `json:"summary,omitempty"`
}

// ComparisonStatus is one iteration's comparison table.
type ComparisonStatus struct {
	// iteration names the iteration compared.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Iteration string `json:"iteration"`

	// baseline names the baseline cell.
	// +required
	// +kubebuilder:validation:MaxLength=200
	Baseline string `json:"baseline"`

	// verdict is Regressed if any row is, else Improved if any row is,
	// else Neutral if every row is, else Inconclusive.
	// +required
	Verdict CampaignVerdict `json:"verdict"`

	// rows are the table's rows, at most 64: Invalid rows first, then
	// Regressed, Improved, Inconclusive and Neutral.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Rows []ComparisonRow `json:"rows,omitempty"`

	// omittedRows counts rows left out to respect the bound.
	// +optional
	// +kubebuilder:validation:Minimum=0
	OmittedRows int32 `json:"omittedRows,omitempty"`
}

// ComparisonRow is one row of a comparison table: a variant's metric
// against the baseline's. Numbers are decimal strings, as in a
// BenchmarkRun's status.
type ComparisonRow struct {
	// variant names the cell compared.
	// +required
	// +kubebuilder:validation:MaxLength=200
	Variant string `json:"variant"`

	// metric names the operation and statistic, such as "read p99 µs".
	// +required
	// +kubebuilder:validation:MaxLength=128
	Metric string `json:"metric"`

	// operation is the workload operation the row compares (the metric's
	// first part; the region or API method of a Cloud Monitoring
	// statistic), for tools that select rows, such as the manager's
	// Prometheus series.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Operation string `json:"operation,omitempty"`

	// statistic is what the row compares (the metric's second part), one
	// of spec.comparison's statistics, such as Throughput, P99 or ErrorRate.
	// +optional
	Statistic CampaignStatistic `json:"statistic,omitempty"`

	// baseline is the baseline's value, from its runs pooled (their
	// histograms merged, their counts summed), in the unit the metric ends
	// with (µs, ops/s, %, tpmC ...); "not collected" for a server
	// statistic its runs lack.
	// +required
	// +kubebuilder:validation:MaxLength=32
	Baseline string `json:"baseline"`

	// value is the variant's value, pooled and in the unit as baseline.
	// +required
	// +kubebuilder:validation:MaxLength=32
	Value string `json:"value"`

	// ratio is the estimate of variant / baseline.
	// +required
	// +kubebuilder:validation:MaxLength=32
	Ratio string `json:"ratio"`

	// low and high bound the ratio's confidence interval; absent when the
	// samples are too few for one.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	Low string `json:"low,omitempty"`

	// high is the interval's upper bound.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	High string `json:"high,omitempty"`

	// confidence is the interval's actual confidence, as a percentage.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	Confidence string `json:"confidence,omitempty"`

	// n is the sample sizes, baseline+variant: runs, or intervals for one
	// repetition.
	// +required
	// +kubebuilder:validation:MaxLength=32
	N string `json:"n"`

	// pValue is the two-sided p-value against no difference.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	PValue string `json:"pValue,omitempty"`

	// verdict is the row's verdict: Improved, Neutral, Regressed or
	// Inconclusive (docs/statistics.md), or Invalid when a run's report
	// failed the checks of the run's own aggregation (the iteration's
	// report says which run and check).
	// +required
	Verdict CampaignVerdict `json:"verdict"`
}

// ChangePointStatus is a change point found in a series of iterations.
type ChangePointStatus struct {
	// variant names the cell whose series changed.
	// +required
	// +kubebuilder:validation:MaxLength=200
	Variant string `json:"variant"`

	// metric names the series' operation and statistic.
	// +required
	// +kubebuilder:validation:MaxLength=128
	Metric string `json:"metric"`

	// iteration names the first iteration at the new level.
	// +required
	// +kubebuilder:validation:MaxLength=63
	Iteration string `json:"iteration"`

	// before and after are the series' means on either side.
	// +required
	// +kubebuilder:validation:MaxLength=32
	Before string `json:"before"`

	// after is the mean from the change point on.
	// +required
	// +kubebuilder:validation:MaxLength=32
	After string `json:"after"`

	// pValue is the permutation test's p-value.
	// +required
	// +kubebuilder:validation:MaxLength=32
	PValue string `json:"pValue"`

	// verdict is Regressed or Improved, by the metric's direction.
	// +required
	Verdict CampaignVerdict `json:"verdict"`

	// acknowledged is true when an acknowledgement covers the change.
	// +optional
	Acknowledged bool `json:"acknowledged,omitempty"`

	// recent is true when the new level starts among the latest
	// trend.latest points of its series, as of the last analysis. A recent,
	// unacknowledged Regressed change point sets the Regressed condition.
	// +optional
	Recent bool `json:"recent,omitempty"`
}
