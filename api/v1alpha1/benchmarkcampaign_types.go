package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConcurrencyPolicy says what happens when an iteration is due while the
// previous one still runs. The values are CronJob's.
// +kubebuilder:validation:Enum=Allow;Forbid;Replace
type ConcurrencyPolicy string

// The concurrency policies.
const (
	// ConcurrencyAllow starts the new iteration beside the running one.
	ConcurrencyAllow ConcurrencyPolicy = "Allow"
	// ConcurrencyForbid skips the new iteration (recorded as Missed).
	ConcurrencyForbid ConcurrencyPolicy = "Forbid"
	// ConcurrencyReplace cancels the running iteration and starts the new one.
	ConcurrencyReplace ConcurrencyPolicy = "Replace"
)

// RunOrder is the order in which an iteration's runs are started.
// +kubebuilder:validation:Enum=Interleaved;Randomized;Sequential
type RunOrder string

// The run orders.
const (
	// OrderInterleaved runs one repetition of every cell, then the next:
	// A B A B, so that drift over the time of day falls on every cell alike.
	OrderInterleaved RunOrder = "Interleaved"
	// OrderRandomized shuffles all runs with a seeded random source.
	OrderRandomized RunOrder = "Randomized"
	// OrderSequential runs all repetitions of a cell, then the next cell.
	OrderSequential RunOrder = "Sequential"
)

// CampaignStatistic is what a comparison reads from each run's merged
// result for one operation.
// +kubebuilder:validation:Enum=Throughput;P50;P90;P99;P999;ErrorRate;ServerCPUPerOp;TpmC;ServerHighPriorityCPU;ServerLatencyP99;ServerQueryP99;CostPerMillionOps;Capacity;CapacityPerNode;CapacityRowsPerNode
type CampaignStatistic string

// The statistics a comparison can read. Percentiles are read from the run's
// merged latency histogram, never averaged.
const (
	StatisticThroughput CampaignStatistic = "Throughput"
	StatisticP50        CampaignStatistic = "P50"
	StatisticP90        CampaignStatistic = "P90"
	StatisticP99        CampaignStatistic = "P99"
	StatisticP999       CampaignStatistic = "P999"
	// StatisticErrorRate is failed operations over all finished ones, in
	// percent (stats.ErrorRate).
	StatisticErrorRate CampaignStatistic = "ErrorRate"
	// StatisticServerCPUPerOp is Spanner's CPU time per logical operation,
	// in microseconds, from its statistics tables (docs/server-stats.md):
	// one value per run, so it is compared run by run and needs two or
	// more runs per cell; runs of the emulator, or whose statistics were
	// not collected, have none.
	StatisticServerCPUPerOp CampaignStatistic = "ServerCPUPerOp"
	// StatisticTpmC is a TPCC run's New-Order transactions per minute
	// after the warm-up (the result's tpcc.tpmC), higher is better. It is
	// read for the workload's NewOrder operation; a run whose consistency
	// checks failed has no tpmC to compare.
	StatisticTpmC CampaignStatistic = "TpmC"
	// StatisticServerHighPriorityCPU is the instance's high-priority CPU
	// utilization in one region, in percent of the region's capacity: the
	// mean of the run's measured minutes from Cloud Monitoring
	// (docs/server-stats.md). The metric's operations name regions (Cloud
	// Monitoring's location, such as asia-northeast1, the leader region of
	// asia1); one value per run, compared run by run.
	StatisticServerHighPriorityCPU CampaignStatistic = "ServerHighPriorityCPU"
	// StatisticServerLatencyP99 is Spanner's server latency p99 of one API
	// method, in microseconds, over the run's measured minutes from Cloud
	// Monitoring. The metric's operations name API methods (such as
	// Commit, ExecuteSql, Read); one value per run, compared run by run.
	StatisticServerLatencyP99 CampaignStatistic = "ServerLatencyP99"
	// StatisticServerQueryP99 is Spanner's server latency p99 per
	// execution of one operation's queries, in microseconds, from the
	// merged latency histograms of its statistics tables
	// (docs/server-stats.md): one value per run, compared run by run like
	// ServerCPUPerOp. Reads have no latency histogram, so a read's row is
	// inconclusive and says so.
	StatisticServerQueryP99 CampaignStatistic = "ServerQueryP99"
	// StatisticCostPerMillionOps is the run's cost per million operations
	// of its measured window, in its price catalog's currency (the
	// report's cost section, docs/cost.md), lower is better: one value per
	// run, the same for each operation named, compared run by run; a run
	// without a price has none.
	StatisticCostPerMillionOps CampaignStatistic = "CostPerMillionOps"
	// StatisticCapacity is a capacity search's capacity (the highest rate
	// that met its SLO, in operations per second; workload.load.search),
	// higher is better: one value per run, compared run by run, so it
	// needs two or more runs per cell (repetitions of a search are
	// independent samples of the capacity). Its row is named
	// "search" (the search covers the whole workload).
	StatisticCapacity CampaignStatistic = "Capacity"
	// StatisticCapacityPerNode is the capacity per 1,000 processing units
	// (one node), compared like Capacity; instances of different sizes
	// compare on it.
	StatisticCapacityPerNode CampaignStatistic = "CapacityPerNode"
	// StatisticCapacityRowsPerNode is the capacity per node in rows per
	// second: CapacityPerNode times the rows each successful operation of
	// the run read or wrote on average. It compares searches whose
	// operations carry different numbers of rows (an Insert's rows: a
	// batch per commit), where operations per second do not: a batch of
	// 100 rows at a quarter of the commits is 25 times the rows.
	StatisticCapacityRowsPerNode CampaignStatistic = "CapacityRowsPerNode"
)

// MetricDirection says which way a metric gets better.
// +kubebuilder:validation:Enum=LowerIsBetter;HigherIsBetter
type MetricDirection string

// The directions.
const (
	LowerIsBetter  MetricDirection = "LowerIsBetter"
	HigherIsBetter MetricDirection = "HigherIsBetter"
)

// CampaignVerdict is the one-word answer of a comparison row, an iteration
// or the campaign.
// +kubebuilder:validation:Enum=Improved;Neutral;Regressed;Inconclusive;Invalid
type CampaignVerdict string

// The verdicts, the same words as package stats uses.
const (
	VerdictImproved     CampaignVerdict = "Improved"
	VerdictNeutral      CampaignVerdict = "Neutral"
	VerdictRegressed    CampaignVerdict = "Regressed"
	VerdictInconclusive CampaignVerdict = "Inconclusive"
	// VerdictInvalid: a run's report failed the checks the run's own
	// aggregation applies, so nothing is claimed from it; the row's
	// reason names the run and the check.
	VerdictInvalid CampaignVerdict = "Invalid"
)

// IterationOutcome is where an iteration stands.
// +kubebuilder:validation:Enum=Running;Succeeded;Failed;Missed
type IterationOutcome string

// The iteration outcomes.
const (
	IterationRunning   IterationOutcome = "Running"
	IterationSucceeded IterationOutcome = "Succeeded"
	IterationFailed    IterationOutcome = "Failed"
	// IterationMissed is an iteration that did not start before its
	// startingDeadlineSeconds passed, or that Forbid skipped.
	IterationMissed IterationOutcome = "Missed"
)

// Condition types of a BenchmarkCampaign. Ready, Reconciling and Stalled
// follow kstatus, so Flux and Argo CD read the campaign's health.
const (
	// CampaignReady is True when the campaign is valid and its last
	// iteration (if any) completed.
	CampaignReady = "Ready"
	// CampaignReconciling is True while an iteration runs.
	CampaignReconciling = "Reconciling"
	// CampaignStalled is True when the campaign cannot proceed without a
	// change to its spec (a cell that is invalid as a run, a bad schedule).
	CampaignStalled = "Stalled"
	// CampaignRegressed is True when the latest comparison holds a
	// Regressed row, or the trend found an unacknowledged change point in
	// the bad direction among the latest iterations.
	CampaignRegressed = "Regressed"
	// CampaignHistoryReady is True when the last ended iteration's summary
	// was saved and every history entry read; False names the ConfigMap
	// and what is wrong with it (the trend then reads the other entries).
	CampaignHistoryReady = "HistoryReady"
)

// Labels a campaign puts on its runs.
const (
	LabelCampaign   = "spanbench.io/campaign"
	LabelIteration  = "spanbench.io/iteration"
	LabelVariant    = "spanbench.io/variant"
	LabelRepetition = "spanbench.io/repetition"
)

// BenchmarkCampaignSpec is a set of variants of one BenchmarkRun, run
// together and compared with a baseline, once or on a schedule.
// +kubebuilder:validation:XValidation:rule="!has(self.timeZone) || has(self.schedule)",message="timeZone: only meaningful with a schedule"
// +kubebuilder:validation:XValidation:rule="!has(self.startingDeadlineSeconds) || has(self.schedule)",message="startingDeadlineSeconds: only meaningful with a schedule"
// +kubebuilder:validation:XValidation:rule="!has(self.baseline) || has(self.matrix)",message="baseline: names a cell of the matrix, and there is no matrix"
// +kubebuilder:validation:XValidation:rule="!has(self.baseline) || self.baseline.all(a, self.matrix.axes.exists(x, x.name == a && x.values.exists(v, v.label == self.baseline[a])))",message="baseline: every key must name an axis of the matrix and every value one of that axis's labels"
type BenchmarkCampaignSpec struct {
	// schedule is when iterations start, in cron syntax ("0 2 * * *") or a
	// macro (@daily). Absent: one iteration per change of the spec's
	// generation, and one per new runNow.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.matches('^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|[^ ]+( +[^ ]+){4})$')",message="schedule: must be five cron fields (minute hour day-of-month month day-of-week) or a macro such as @daily"
	// +kubebuilder:validation:XValidation:rule="!self.contains('TZ=')",message="schedule: set the time zone with timeZone, not TZ= or CRON_TZ="
	Schedule string `json:"schedule,omitempty"`

	// timeZone is the IANA time zone of the schedule, such as Asia/Tokyo.
	// Default: the manager's local time zone (UTC in its image).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$')",message="timeZone: must be an IANA time zone name such as Europe/Paris"
	TimeZone *string `json:"timeZone,omitempty"`

	// startingDeadlineSeconds is how late a scheduled iteration may still
	// start. A later one is recorded as Missed, and the next one is awaited;
	// there is no limit on how many may be missed.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`

	// concurrencyPolicy says what happens when an iteration is due while
	// the previous one still runs: Allow, Forbid (the default: skip it,
	// recorded as Missed) or Replace. It is about iterations; two runs never
	// share a database at once whatever it says.
	// +optional
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`

	// suspend stops new iterations from starting; a running one finishes.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// successfulIterationsHistoryLimit is how many succeeded iterations keep
	// their runs and reports. Older ones are pruned to a compact summary
	// that the trend keeps reading. Default 3.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	SuccessfulIterationsHistoryLimit *int32 `json:"successfulIterationsHistoryLimit,omitempty"`

	// failedIterationsHistoryLimit is how many failed iterations keep their
	// runs, for diagnosis. Default 1.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	FailedIterationsHistoryLimit *int32 `json:"failedIterationsHistoryLimit,omitempty"`

	// runNow is a free-form token: each new value starts one iteration now.
	// A GitOps user re-runs a campaign by committing a new value (a date,
	// a commit hash).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	RunNow string `json:"runNow,omitempty"`

	// template is the run every cell starts from.
	// +required
	Template BenchmarkRunTemplate `json:"template"`

	// matrix spans the variants. Absent: one cell, the template itself,
	// which the trend still watches.
	// +optional
	Matrix *MatrixSpec `json:"matrix,omitempty"`

	// baseline names the cell the others are compared with, by axis and
	// value label, such as {api: read}. It must name exactly one cell.
	// Default: the first value of every axis.
	// +optional
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=8
	Baseline map[string]AxisLabel `json:"baseline,omitempty"`

	// repetitions is the number of runs of each cell per iteration. With
	// one, a comparison bootstraps over the runs' measurement intervals,
	// which cannot see run-to-run noise; five or more give an exact
	// interval. Default 1.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=30
	Repetitions *int32 `json:"repetitions,omitempty"`

	// order is the order the runs of an iteration start in: Interleaved
	// (the default: A B A B, so drift over the day falls on every cell
	// alike), Randomized (with seed) or Sequential (A A B B).
	// +optional
	Order RunOrder `json:"order,omitempty"`

	// seed seeds the Randomized order, so that an iteration's order can be
	// reproduced. Default 1.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Seed *int64 `json:"seed,omitempty"`

	// maxParallel is how many runs of an iteration may run at once. Two
	// runs never use the same database at once, whatever it says. Default 1.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	MaxParallel *int32 `json:"maxParallel,omitempty"`

	// comparison says what is compared and what counts as a change.
	// +optional
	Comparison ComparisonSpec `json:"comparison,omitempty"`

	// trend says how the series of iterations is watched for change points.
	// +optional
	Trend TrendSpec `json:"trend,omitempty"`
}

// BenchmarkRunTemplate is the run every cell of a campaign starts from.
type BenchmarkRunTemplate struct {
	// metadata holds the labels and annotations every run of the campaign
	// carries, besides the spanbench.io/ ones the campaign sets.
	// +optional
	Metadata RunTemplateMetadata `json:"metadata,omitempty"`

	// spec is the run. Each cell applies its axis values to a copy.
	// +required
	Spec BenchmarkRunSpec `json:"spec"`
}

// RunTemplateMetadata is what a campaign's runs carry from the template.
type RunTemplateMetadata struct {
	// labels are put on every run.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	Labels map[string]string `json:"labels,omitempty"`

	// annotations are put on every run.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	Annotations map[string]string `json:"annotations,omitempty"`
}

// MatrixSpec spans a campaign's cells: the cartesian product of its axes,
// with zipped axes advanced together, less the excluded cells.
// +kubebuilder:validation:XValidation:rule="!has(self.zip) || self.zip.all(z, z.all(a, self.axes.exists(x, x.name == a)))",message="zip: every entry must name an axis of the matrix"
// +kubebuilder:validation:XValidation:rule="!has(self.zip) || self.zip.all(z, z.all(a, self.axes.all(x, x.name != a || self.axes.all(y, y.name != z[0] || size(y.values) == size(x.values)))))",message="zip: zipped axes must have the same number of values"
// +kubebuilder:validation:XValidation:rule="!has(self.zip) || self.zip.all(z, z.all(a, self.zip.filter(w, w.exists(b, b == a)).size() == 1))",message="zip: an axis may be in one zip group only"
// +kubebuilder:validation:XValidation:rule="!has(self.exclude) || self.exclude.all(e, e.all(a, self.axes.exists(x, x.name == a && x.values.exists(v, v.label == e[a]))))",message="exclude: every key must name an axis and every value one of that axis's labels"
type MatrixSpec struct {
	// axes are the dimensions of the matrix. Each sets one field of the
	// run spec to each of its values in turn.
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	Axes []MatrixAxis `json:"axes"`

	// zip lists groups of axes advanced together instead of crossed: a
	// group of two axes of three values each gives three cells, not nine.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:items:MinItems=2
	// +kubebuilder:validation:items:MaxItems=8
	Zip [][]AxisName `json:"zip,omitempty"`

	// exclude drops cells: each entry maps axis names to value labels, and
	// drops every cell that has all of them.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinProperties=1
	// +kubebuilder:validation:items:MaxProperties=8
	Exclude []map[string]AxisLabel `json:"exclude,omitempty"`
}

// AxisName names an axis of a campaign's matrix.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=20
type AxisName string

// AxisLabel names a value of an axis.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=20
type AxisLabel string

// MatrixAxis is one dimension of a campaign's matrix. With a path, every
// value sets it (value); without one, no value has a value, only patches.
// CEL cannot see a field of any JSON type (value), so the admission
// webhook checks this rule, with BenchmarkCampaign.Validate.
type MatrixAxis struct {
	// name names the axis in baseline, zip and exclude, and in the runs'
	// spanbench.io/variant label.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=20
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// path is the field of the run spec the axis sets, in kustomize's field
	// path syntax: dot-separated field names, and [key=value] to pick a
	// list element, such as target.instance.config or
	// workload.operations.[name=read].api. Missing fields on the way are
	// created; a missing list element is an error, never appended. Absent,
	// the axis's values change the run spec through their patches only.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('spec.')",message="path: is relative to the run spec; drop the leading spec."
	Path string `json:"path,omitempty"`

	// values are the values the axis takes, each with a label.
	// +required
	// +listType=map
	// +listMapKey=label
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	Values []AxisValue `json:"values"`
}

// AxisValue is one value of an axis.
type AxisValue struct {
	// label names the value in cell names, baseline, exclude and the runs'
	// labels, such as sql or 6n.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=20
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Label string `json:"label"`

	// value is what the axis's path is set to: a string, number, boolean,
	// list or object, as in the run spec. Required when the axis has a
	// path, absent otherwise.
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitzero"`

	// strategicMergePatch is a strategic-merge patch of the run spec (an
	// object, relative to the run spec), applied after the path's value,
	// for changes one path cannot express: lists of objects with a name
	// (operations, tables) merge by name, and an element with
	// "$patch: delete" is removed. Merged as kustomize merges
	// (sigs.k8s.io/kustomize/kyaml).
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	StrategicMergePatch *apiextensionsv1.JSON `json:"strategicMergePatch,omitempty"`

	// jsonPatch is a JSON patch (RFC 6902) of the run spec, applied after
	// the strategic-merge patch: its paths are JSON pointers into the run
	// spec, such as /workload/operations/- to append an operation.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	JSONPatch []JSONPatchOperation `json:"jsonPatch,omitempty"`
}

// JSONPatchOperation is one operation of a JSON patch (RFC 6902). value is
// required by add, replace and test, and only by them (checked at
// admission by the webhook: CEL cannot see value).
// +kubebuilder:validation:XValidation:rule="(self.op == 'move' || self.op == 'copy') == has(self.from)",message="from: required by move and copy, and only by them"
type JSONPatchOperation struct {
	// op is the RFC 6902 operation: add, remove, replace, move, copy or
	// test.
	// +required
	Op JSONPatchOp `json:"op"`

	// path is a JSON pointer into the run spec (without /spec), such as
	// /workload/load/rate or /workload/operations/-.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/') && !self.startsWith('/spec/')",message="path: a JSON pointer into the run spec, such as /workload/load/rate (no /spec prefix)"
	Path string `json:"path"`

	// from is the pointer move and copy take the value from.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/') && !self.startsWith('/spec/')",message="from: a JSON pointer into the run spec, such as /workload/load/rate (no /spec prefix)"
	From string `json:"from,omitempty"`

	// value is what add and replace put at path, and what test expects.
	// +optional
	Value *apiextensionsv1.JSON `json:"value,omitempty"`
}

// JSONPatchOp is a JSON patch operation.
// +kubebuilder:validation:Enum=add;remove;replace;move;copy;test
type JSONPatchOp string

// ComparisonSpec says what a campaign compares and what counts as a change.
type ComparisonSpec struct {
	// metrics are the statistics compared, per operation. Default: P50 and
	// P99 (lower is better) and Throughput (higher is better) of every
	// operation.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Metrics []MetricSpec `json:"metrics,omitempty"`

	// minEffect is the smallest relative change that counts as one, as a
	// percentage such as "5%". A smaller difference is never called a
	// regression, however sure. Default "5%".
	// +optional
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9]{1,2}([.][0-9]{1,2})?%$')",message="minEffect: must be a percentage from 0% to 99.99%, such as 5%"
	MinEffect string `json:"minEffect,omitempty"`

	// confidence is the confidence level of the intervals, as a percentage
	// such as "95%". Default "95%".
	// +optional
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9]{1,2}([.][0-9]{1,2})?%$') && self != '0%'",message="confidence: must be a percentage above 0% and below 100%, such as 95%"
	Confidence string `json:"confidence,omitempty"`
}

// MetricSpec is one statistic compared for some operations.
type MetricSpec struct {
	// statistic is what is read from each run: Throughput, a latency
	// percentile (P50, P90, P99, P999) of the run's merged histogram, or
	// ErrorRate (failed operations over all finished ones, in percent),
	// ServerCPUPerOp (Spanner's CPU per operation), ServerQueryP99
	// (Spanner's server latency p99 of an operation's queries), TpmC (a
	// TPCC run's New-Order transactions per minute, for its NewOrder
	// operation), or one of Cloud Monitoring's figures of the run:
	// ServerHighPriorityCPU (a region's high-priority CPU utilization,
	// percent) or ServerLatencyP99 (an API method's server latency p99),
	// CostPerMillionOps (the run's cost per million operations, in its
	// price catalog's currency), or a capacity search's Capacity,
	// CapacityPerNode (operations per second) or CapacityRowsPerNode (rows
	// per second per node).
	// +required
	Statistic CampaignStatistic `json:"statistic"`

	// operations are the workload operations (by name) compared on this
	// statistic; for ServerHighPriorityCPU the regions (such as
	// asia-northeast1), for ServerLatencyP99 the API methods (such as
	// Commit). Default: every operation, region or method the baseline's
	// runs have.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=63
	Operations []string `json:"operations,omitempty"`

	// direction says which way is better. Default: HigherIsBetter for
	// Throughput and TpmC, LowerIsBetter for latencies, ErrorRate,
	// ServerCPUPerOp, ServerQueryP99, ServerHighPriorityCPU and
	// ServerLatencyP99.
	// +optional
	Direction MetricDirection `json:"direction,omitempty"`
}

// TrendSpec says how a campaign watches its series of iterations.
type TrendSpec struct {
	// iterations is how many past iterations the history keeps (their
	// summaries, within 16 MiB) and the trend analyses. Default 30.
	// +optional
	// +kubebuilder:validation:Minimum=6
	// +kubebuilder:validation:Maximum=500
	Iterations *int32 `json:"iterations,omitempty"`

	// latest is how many of the most recent iterations a change point in
	// the bad direction must lie among to set Regressed. Default 5.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=500
	Latest *int32 `json:"latest,omitempty"`

	// window is the number of consecutive iterations E-divisive analyses
	// together. Default 50.
	// +optional
	// +kubebuilder:validation:Minimum=6
	// +kubebuilder:validation:Maximum=500
	Window *int32 `json:"window,omitempty"`

	// significance is the permutation p-value a change point must reach,
	// as a percentage. Default "5%".
	// +optional
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9]{1,2}([.][0-9]{1,2})?%$') && self != '0%'",message="significance: must be a percentage above 0% and below 100%, such as 5%"
	Significance string `json:"significance,omitempty"`

	// minMagnitude is the smallest change of the mean reported as a change
	// point, as a percentage. Default "5%".
	// +optional
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9]{1,2}([.][0-9]{1,2})?%$')",message="minMagnitude: must be a percentage from 0% to 99.99%, such as 5%"
	MinMagnitude string `json:"minMagnitude,omitempty"`

	// acknowledged are known, accepted changes that must stop alerting.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Acknowledged []Acknowledgement `json:"acknowledged,omitempty"`
}

// Acknowledgement accepts a change point so that it stops setting
// Regressed.
type Acknowledgement struct {
	// iteration is the name of the iteration where the new level starts.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Iteration string `json:"iteration"`

	// variant limits the acknowledgement to one cell's series. Default:
	// every cell.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Variant string `json:"variant,omitempty"`

	// metric limits the acknowledgement to one metric's series, named as
	// in the comparison table (such as "read p99 µs" or "read ops/s"). Default: every metric.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Metric string `json:"metric,omitempty"`

	// reason says why the change is accepted.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Reason string `json:"reason"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=bc;campaign,categories=spanbench
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`,description="When iterations start (cron)"
// +kubebuilder:printcolumn:name="Suspended",type=boolean,JSONPath=`.spec.suspend`,description="Whether new iterations are held"
// +kubebuilder:printcolumn:name="Last Run",type=date,JSONPath=`.status.lastScheduleTime`,description="When the last iteration was scheduled"
// +kubebuilder:printcolumn:name="Next Run",type=string,format=date-time,JSONPath=`.status.nextScheduleTime`,description="When the next iteration is due"
// +kubebuilder:printcolumn:name="Iteration",type=string,JSONPath=`.status.progress.iteration`,description="The latest iteration that ran",priority=1
// +kubebuilder:printcolumn:name="Run",type=string,JSONPath=`.status.progress.summary`,description="Runs of the latest iteration started, of its runs"
// +kubebuilder:printcolumn:name="Verdict",type=string,JSONPath=`.status.verdict`,description="The latest comparison's and trend's verdict"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`,priority=1
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name: a BenchmarkCampaign name must be at most 63 lower-case letters, digits and '-', start with a letter and end with a letter or digit, so that its runs can be named after it"

// BenchmarkCampaign runs variants of a BenchmarkRun together, once or on a
// schedule, and compares each with a baseline with stated confidence.
type BenchmarkCampaign struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the campaign. Edits apply from the next iteration.
	// +required
	Spec BenchmarkCampaignSpec `json:"spec"`

	// status is what the controller observed and concluded.
	// +optional
	Status BenchmarkCampaignStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// BenchmarkCampaignList is a list of BenchmarkCampaigns.
type BenchmarkCampaignList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the BenchmarkCampaigns.
	// +required
	Items []BenchmarkCampaign `json:"items"`
}

func init() {
	SchemeBuilder.Register(&BenchmarkCampaign{}, &BenchmarkCampaignList{})
}
