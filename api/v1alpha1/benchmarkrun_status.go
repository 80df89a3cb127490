package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Condition types of a BenchmarkRun. The first four are gates the run passes
// in order; each turns True once and stays True (RunnersReady records that
// the start barrier was released, not that the pods are still running).
// While a gate is not yet passed it is False (or absent) with a progress
// reason, such as Provisioning or RunnersNotReady, and a message saying what
// it waits for. Succeeded is the outcome: absent until the run ends, then
// True (reason Completed or PartialResults) or False with the reason of the
// failure. `kubectl wait --for=condition=Succeeded` waits for a good run;
// `--for=condition=Succeeded=false` for a failed one.
const (
	// ConditionTargetReady is True when the instance exists (created, for an
	// Ephemeral instance), and the database and the workload's schema are in
	// place and reachable.
	ConditionTargetReady = "TargetReady"
	// ConditionDatasetLoaded is True when the database holds the dataset the
	// spec describes, preloaded by this run or found matching.
	ConditionDatasetLoaded = "DatasetLoaded"
	// ConditionRunnersReady is True once every runner pod was ready and the
	// start barrier released them at one common start time
	// (status.startTime).
	ConditionRunnersReady = "RunnersReady"
	// ConditionLoadCompleted is True when every runner has stopped sending
	// and written its shard result.
	ConditionLoadCompleted = "LoadCompleted"
	// ConditionSucceeded is the run's outcome: True when the merged results
	// are in the status and the report, False when the run failed.
	ConditionSucceeded = "Succeeded"
	// ConditionSplitPointsApplied is set only when spec.target.splitPoints
	// asks for a pre-split database: True when the split points were added,
	// False (reason SplitPointsSkipped) when the endpoint has no
	// AddSplitPoints, such as the emulator; the run goes on either way. It
	// is not a gate and does not drive the phase.
	ConditionSplitPointsApplied = "SplitPointsApplied"
	// ConditionReadsFoundNothing is a warning set at aggregation, True
	// (reason MostReadsNotFound) when most reads of keys expected to exist
	// found no row: the figures then measure empty reads, typically stale
	// reads of a snapshot older than the dataset. It is absent otherwise,
	// is not a gate and does not drive the phase.
	ConditionReadsFoundNothing = "ReadsFoundNothing"
	// ConditionBatchCutShort is a warning set at aggregation, True (reason
	// WindowEnded) when a batch stream's window ended before its
	// iterations did: it ran fewer operations than asked and has no wall
	// time. The message names each such stream. It is absent otherwise,
	// is not a gate and does not drive the phase.
	ConditionBatchCutShort = "BatchCutShort"
	// ConditionDatabaseClaimed says whether the run holds its database:
	// one run at a time uses a database, cluster-wide (the project,
	// instance and database, and the emulator's address for an emulator
	// run). True (reason DatabaseClaimed) from when the run got it until it
	// ended and let go of its instance, then False (reason
	// DatabaseReleased); False (reason DatabaseInUse) while another active
	// run holds it, the message naming that run: the run is Pending and
	// waits. It is not a gate.
	ConditionDatabaseClaimed = "DatabaseClaimed"
)

// MostReadsNotFoundPercent is the share of not-found reads, among reads of
// keys expected to exist, above which ReadsFoundNothing is set.
const MostReadsNotFoundPercent = 50

// Condition reasons. Progress reasons go with a False gate that is still
// being worked on; positive reasons with a True condition; failure reasons
// with Succeeded=False (and, where it applies, with the gate that failed).
const (
	// ReasonProvisioning: TargetReady is False while the instance, database
	// or schema is being created or checked.
	ReasonProvisioning = "Provisioning"
	// ReasonLoading: DatasetLoaded is False while rows are being preloaded.
	ReasonLoading = "Loading"
	// ReasonRunnersNotReady: RunnersReady is False while runner pods are
	// scheduled, pull their image and start; the message counts them.
	ReasonRunnersNotReady = "RunnersNotReady"
	// ReasonRunning: LoadCompleted is False while the runners send load.
	ReasonRunning = "Running"

	// ReasonTargetAvailable: TargetReady is True.
	ReasonTargetAvailable = "TargetAvailable"
	// ReasonDatasetReady: DatasetLoaded is True.
	ReasonDatasetReady = "DatasetReady"
	// ReasonAllRunnersReady: RunnersReady is True.
	ReasonAllRunnersReady = "AllRunnersReady"
	// ReasonShardsReported: LoadCompleted is True; results are being merged.
	ReasonShardsReported = "ShardsReported"
	// ReasonCompleted: Succeeded is True with results from every runner.
	ReasonCompleted = "Completed"
	// ReasonPartialResults: Succeeded is True, but some runners' shard
	// results are missing; status.partial is true and the figures cover only
	// the runners that reported. Do not compare them with complete runs.
	ReasonPartialResults = "PartialResults"

	// ReasonTargetUnreachable: the instance or database could not be reached
	// or does not exist (Existing mode).
	ReasonTargetUnreachable = "TargetUnreachable"
	// ReasonPermissionDenied: Spanner refused the credentials the manager or
	// the runners use.
	ReasonPermissionDenied = "PermissionDenied"
	// ReasonLimitExceeded: the spec asks for more than the operator allows
	// (its caps on runners, nodes, processing units, run duration, the
	// lifetime of an Ephemeral instance, or its allowed instance
	// configurations). Nothing was created.
	ReasonLimitExceeded = "LimitExceeded"
	// ReasonEndpointNotAllowed: spec.target.emulatorHost is not among the
	// emulator addresses the manager may dial (--allowed-emulator-hosts).
	// Nothing was dialed.
	ReasonEndpointNotAllowed = "EndpointNotAllowed"
	// ReasonQuotaExceeded: Spanner refused for lack of quota (nodes or
	// processing units in the project and region); ask for more quota or a
	// smaller instance. Nothing paid for is left behind.
	ReasonQuotaExceeded = "QuotaExceeded"
	// ReasonInstanceConfigNotFound: the Ephemeral instance's configuration
	// does not exist in the project (gcloud spanner instance-configs list).
	ReasonInstanceConfigNotFound = "InstanceConfigNotFound"
	// ReasonInstanceNotOwned: an instance named spec.target.instance.name
	// exists but was not created for this run, so an Ephemeral run will
	// neither use nor delete it; choose another name or mode Existing.
	ReasonInstanceNotOwned = "InstanceNotOwned"
	// ReasonInstanceNotReady: the instance was not READY within
	// spec.deadlines.prepare. An Ephemeral instance is deleted.
	ReasonInstanceNotReady = "InstanceNotReady"
	// ReasonDatabaseInUse: another active run (named in the message) holds
	// the run's database. DatabaseClaimed is False with it while the run
	// waits; a run no campaign controls fails with it (Succeeded=False)
	// when spec.deadlines.prepare passes before the database is free,
	// while a campaign's run waits as long as it takes. Nothing was
	// created for the run.
	ReasonDatabaseInUse = "DatabaseInUse"
	// ReasonDatabaseClaimed: DatabaseClaimed is True.
	ReasonDatabaseClaimed = "DatabaseClaimed"
	// ReasonDatabaseReleased: DatabaseClaimed is False because the run
	// ended and let go of its database.
	ReasonDatabaseReleased = "DatabaseReleased"
	// ReasonDatabaseBusy: the database stayed busy (being created, restored
	// or changing its schema) until spec.deadlines.prepare.
	ReasonDatabaseBusy = "DatabaseBusy"
	// ReasonDialectMismatch: the database exists in the other SQL dialect
	// than spec.target.dialect asks for. spanbench never converts a
	// database: set the dialect it has, or use another database.
	ReasonDialectMismatch = "DialectMismatch"
	// ReasonDatasetMismatch: the database holds another dataset (schema or
	// row count) and spec.workload.dataset.reload is false.
	ReasonDatasetMismatch = "DatasetMismatch"
	// ReasonDatasetLoadFailed: preloading the dataset failed.
	ReasonDatasetLoadFailed = "DatasetLoadFailed"
	// ReasonLoaderRetried (an event) says the loader Job started a failed
	// loader pod again, and where the new attempt resumed its slice.
	ReasonLoaderRetried = "LoaderRetried"
	// ReasonRunnerImagePullFailed: a runner pod cannot pull its image.
	ReasonRunnerImagePullFailed = "RunnerImagePullFailed"
	// ReasonRunnersUnschedulable: a runner pod cannot be scheduled (no node
	// matches its region, zone, selector or resources).
	ReasonRunnersUnschedulable = "RunnersUnschedulable"
	// ReasonNameConflict: an object the run needs (named after the run)
	// already exists and does not belong to it; spanbench never takes one
	// over.
	ReasonNameConflict = "NameConflict"
	// ReasonRunnerFailed: a runner pod failed before writing its shard
	// result and no partial result could be made.
	ReasonRunnerFailed = "RunnerFailed"
	// ReasonDeadlineExceeded: a stage overran its spec.deadlines entry; the
	// message names the stage.
	ReasonDeadlineExceeded = "DeadlineExceeded"
	// ReasonResultInvalid: shard results could not be read or merged (wrong
	// schema version, another spec, corrupt histograms).
	ReasonResultInvalid = "ResultInvalid"

	// ReasonMostReadsNotFound: ReadsFoundNothing is True; the message gives
	// the counts.
	ReasonMostReadsNotFound = "MostReadsNotFound"

	// ReasonWindowEnded: BatchCutShort is True; the message names the
	// streams and their iterations.
	ReasonWindowEnded = "WindowEnded"

	// ReasonSplitPointsAdded: SplitPointsApplied is True.
	ReasonSplitPointsAdded = "SplitPointsAdded"
	// ReasonSplitPointsSkipped: SplitPointsApplied is False because the
	// endpoint does not implement AddSplitPoints (the emulator); the message
	// says so and the run goes on without a pre-split database.
	ReasonSplitPointsSkipped = "SplitPointsSkipped"
)

// BenchmarkRunPhase is a one-word summary of a run for printer columns. It
// is derived from the conditions (see DerivePhase) and never drives logic.
// +kubebuilder:validation:Enum=Pending;Preparing;Loading;WaitingForRunners;Running;Aggregating;Succeeded;Failed
type BenchmarkRunPhase string

const (
	// PhasePending: the controller has not acted on the run yet (no
	// conditions), or the run waits for its database, which another run
	// holds (DatabaseClaimed False, reason DatabaseInUse).
	PhasePending BenchmarkRunPhase = "Pending"
	// PhasePreparing: TargetReady is not True yet.
	PhasePreparing BenchmarkRunPhase = "Preparing"
	// PhaseLoading: TargetReady is True, DatasetLoaded not yet.
	PhaseLoading BenchmarkRunPhase = "Loading"
	// PhaseWaitingForRunners: DatasetLoaded is True, RunnersReady not yet.
	PhaseWaitingForRunners BenchmarkRunPhase = "WaitingForRunners"
	// PhaseRunning: RunnersReady is True, LoadCompleted not yet.
	PhaseRunning BenchmarkRunPhase = "Running"
	// PhaseAggregating: LoadCompleted is True, Succeeded not set yet.
	PhaseAggregating BenchmarkRunPhase = "Aggregating"
	// PhaseSucceeded: Succeeded is True.
	PhaseSucceeded BenchmarkRunPhase = "Succeeded"
	// PhaseFailed: Succeeded is False.
	PhaseFailed BenchmarkRunPhase = "Failed"
)

// Endpoint says whether a run measured Cloud Spanner or the emulator.
// +kubebuilder:validation:Enum=Spanner;Emulator
type Endpoint string

const (
	// EndpointSpanner is Cloud Spanner.
	EndpointSpanner Endpoint = "Spanner"
	// EndpointEmulator is the Cloud Spanner emulator: latencies and
	// throughput are not comparable with Cloud Spanner's.
	EndpointEmulator Endpoint = "Emulator"
)

// BenchmarkRunStatus is what the controller observed and measured. The
// figures (operations, overall) are exact: merged from every runner's HDR
// histograms, never averaged, and exclude the warm-up.
type BenchmarkRunStatus struct {
	// conditions are the run's stage gates (TargetReady, DatasetLoaded,
	// RunnersReady, LoadCompleted) and its outcome (Succeeded).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the metadata.generation the status describes.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// phase is a one-word summary for `kubectl get`, derived from the
	// conditions: Pending, Preparing, Loading, WaitingForRunners, Running,
	// Aggregating, Succeeded or Failed. Automation should read conditions.
	// +optional
	Phase BenchmarkRunPhase `json:"phase,omitempty"` //nolint:kubeapilinter // nophase: derived from the conditions for printer columns only, as the design allows; conditions are the API.

	// startTime is the common start time the start barrier gave every
	// runner: the intended time of the first request.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// completionTime is when the run ended, successfully or not.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// target is the Spanner instance and database as the manager found or
	// created them, read through the admin API.
	// +optional
	Target *TargetStatus `json:"target,omitempty"`

	// dataset is the preloaded dataset: its schema, size, and the progress
	// of its load.
	// +optional
	Dataset *DatasetStatus `json:"dataset,omitempty"`

	// startSkew is the spread of the runners' actual start times (latest
	// minus earliest), such as 3.2ms. A large skew means the runners did not
	// load the target together at first.
	// +optional
	StartSkew *metav1.Duration `json:"startSkew,omitempty"`

	// warmUpEnd is when the warm-up ended: results count requests intended
	// from then on. Equal to startTime when there is no warm-up.
	// +optional
	WarmUpEnd *metav1.Time `json:"warmUpEnd,omitempty"`

	// warmUpStable is false when an Auto warm-up reached its max without
	// throughput and p99 settling: the figures may still include warm-up
	// effects.
	// +optional
	WarmUpStable *bool `json:"warmUpStable,omitempty"`

	// operations are the results per operation of the mix, after the
	// warm-up.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Operations []OperationResult `json:"operations,omitempty"`

	// overall merges every operation's results.
	// +optional
	Overall *ResultFigures `json:"overall,omitempty"`

	// progress is how far the run's load is and how it is going, for
	// `kubectl get` (the Progress, Achieved, P99 and Errors columns): live
	// figures while it runs, from the runners' reports of their last
	// complete interval, written at most once per live period (every
	// interval or 10 s, whichever is longer); the final results, from
	// overall, in the same write that sets overall.
	// +optional
	Progress *RunProgress `json:"progress,omitempty"`

	// streams are a streams run's results per stream
	// (spec.workload.streams), each measured from the stream's own start
	// and after its own warm-up, with a batch stream's wall time; absent
	// for a run without streams. operations and overall merge every
	// stream's.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	Streams []StreamResult `json:"streams,omitempty"`

	// environment is what the results depend on besides the spec.
	// +optional
	Environment *RunEnvironment `json:"environment,omitempty"`

	// report locates the full merged result document (time series,
	// histograms, service times, resolved spec).
	// +optional
	Report *ReportReference `json:"report,omitempty"`

	// partial is true when some runners' shard results are missing and the
	// figures cover only the runners that reported.
	// +optional
	Partial bool `json:"partial,omitempty"`

	// serverMetrics are Cloud Monitoring's figures of the run's instance and
	// database (condition ServerMetricsCollected).
	// +optional
	ServerMetrics *ServerMetricsStatus `json:"serverMetrics,omitempty"`
	// serverStats says which of Spanner's statistics minutes the figures in
	// operations[].server cover, once collected.
	// +optional
	ServerStats *ServerStatsSummary `json:"serverStats,omitempty"`

	// tpcc is a TPCC run's tpmC, executed mix and consistency checks.
	// +optional
	TPCC *TPCCStatus `json:"tpcc,omitempty"`

	// cost is the run's cost in Cloud Spanner prices: the estimate made
	// before anything was created, and what the run held once it ended.
	// +optional
	Cost *RunCost `json:"cost,omitempty"`

	// search is a capacity search's step table and, once it ended, its
	// capacity (spec.workload.load.search).
	// +optional
	Search *SearchStatus `json:"search,omitempty"`
}

// OperationResult is the result of one operation of the mix.
type OperationResult struct {
	// name is the operation's name in spec.workload.operations.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	Name string `json:"name"`

	// type is the operation's type (spec.workload.operations[].type), such
	// as Read or Insert.
	// +optional
	Type OperationType `json:"type,omitempty"`

	// requestTag is the request and transaction tag the runners sent with
	// this operation (RequestTag: spanbench/<run>/<operation>, shortened
	// with a hash of the run to stay unique within Spanner's 50
	// characters): the key that joins these figures to Spanner's own
	// statistics (SPANNER_SYS.*_STATS_* tables' REQUEST_TAG and
	// TRANSACTION_TAG).
	// +optional
	// +kubebuilder:validation:MaxLength=50
	RequestTag string `json:"requestTag,omitempty"`

	// gfeLatency is the time this operation's RPCs spent in Google's
	// front end and behind it (Spanner), from the server-timing header of
	// Cloud Spanner's responses, summed over an operation's RPCs, for
	// successful operations after the warm-up. latency minus gfeLatency is
	// the network and the client. When no response carried the header
	// (the emulator never sets it) it has no percentiles and notAvailable
	// says so: not available is never zero.
	// +optional
	GFELatency *GFELatency `json:"gfeLatency,omitempty"`

	ResultFigures `json:",inline"`

	// server are Spanner's own figures for this operation from its
	// statistics tables (SPANNER_SYS), per logical operation; absent until
	// they are collected (condition ServerStatsCollected), and when they
	// are not (the emulator, no permission).
	// +optional
	Server *ServerOperationFigures `json:"server,omitempty"`
}

// StreamResult is the result of one load stream of a streams run.
type StreamResult struct {
	// name is the stream's name in spec.workload.streams.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	Name string `json:"name"`

	// startTime is the stream's intended start: the run's start plus its
	// startOffset.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// wallTime is a batch stream's (iterations) wall time, such as 4m12.5s:
	// from its earliest runner's first send to its latest runner's last
	// return. Absent for other streams, and when the stream's window ended
	// before a runner finished its share of the batch.
	// +optional
	WallTime *metav1.Duration `json:"wallTime,omitempty"`

	// operations are the stream's results per operation of its mix.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Operations []StreamOperationResult `json:"operations,omitempty"`

	// overall merges the stream's operations' results; missed counts the
	// stream's sends that its in-flight cap prevented.
	// +optional
	Overall *ResultFigures `json:"overall,omitempty"`
}

// StreamOperationResult is one operation's result within a stream.
type StreamOperationResult struct {
	// name is the operation's name in spec.workload.operations.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	Name string `json:"name"`

	ResultFigures `json:",inline"`
}

// GFELatency summarises an operation's GFE latency from its merged
// histogram, as durations with microsecond resolution, or says why there
// is none.
type GFELatency struct {
	// count is the number of successful operations whose responses carried
	// the GFE's timing; at most the operation's count.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Count int64 `json:"count,omitempty"`

	// p50 is the median latency, such as 4.211ms.
	// +optional
	P50 *metav1.Duration `json:"p50,omitempty"`

	// p99 is the 99th percentile, such as 12.5ms.
	// +optional
	P99 *metav1.Duration `json:"p99,omitempty"`

	// notAvailable says why there are no percentiles, such as "GFE latency
	// not available on the emulator".
	// +optional
	// +kubebuilder:validation:MaxLength=128
	NotAvailable string `json:"notAvailable,omitempty"`
}

// ResultFigures are the measured figures of one operation or of all.
type ResultFigures struct {
	// count is the number of successful operations after the warm-up.
	// Failures are counted in errors.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Count int64 `json:"count,omitempty"`

	// throughput is successful operations per second after the warm-up, as
	// a decimal string with one fractional digit, such as "812.4" (the API
	// carries no floating-point numbers).
	// +optional
	// +kubebuilder:validation:MaxLength=24
	// +kubebuilder:validation:Pattern=`^[0-9]+([.][0-9]+)?$`
	Throughput string `json:"throughput,omitempty"`

	// latency summarises the latency of successful operations, measured
	// from each request's intended send time (no coordinated omission).
	// +optional
	Latency *LatencySummary `json:"latency,omitempty"`

	// notFound is the number of reads, after the warm-up, of keys expected
	// to exist (point reads, key lists, scans of loaded key ranges) that
	// found no row. They count neither in count nor in errors.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NotFound int64 `json:"notFound,omitempty"`

	// errors is the number of failed operations after the warm-up.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Errors int64 `json:"errors,omitempty"`

	// errorsByCode counts failed operations by gRPC status code name, such
	// as DeadlineExceeded or ResourceExhausted.
	// +optional
	// +kubebuilder:validation:MaxProperties=20
	ErrorsByCode map[string]int64 `json:"errorsByCode,omitempty"` //nolint:kubeapilinter // nomaps: status-only counts keyed by a gRPC code name, one writer; a list would read worse and merge no better.

	// retries counts read-write transaction attempts beyond the first
	// (aborted by Spanner and retried by the client).
	// +optional
	// +kubebuilder:validation:Minimum=0
	Retries int64 `json:"retries,omitempty"`

	// missed counts sends that were due but not made because
	// load.maxInFlight requests were already in flight, in the measured
	// window (after the warm-up) like every other figure here. A non-zero
	// value means the target rate was not offered in full.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Missed int64 `json:"missed,omitempty"`
}

// LatencySummary holds exact percentiles of merged histograms, as durations
// with microsecond resolution, such as 4.211ms.
type LatencySummary struct {
	// p50 is the median latency, such as 4.211ms.
	// +optional
	P50 *metav1.Duration `json:"p50,omitempty"`
	// p90 is the 90th percentile, such as 8.02ms.
	// +optional
	P90 *metav1.Duration `json:"p90,omitempty"`
	// p99 is the 99th percentile, such as 12.5ms.
	// +optional
	P99 *metav1.Duration `json:"p99,omitempty"`
	// p999 is the 99.9th percentile, such as 31.7ms.
	// +optional
	P999 *metav1.Duration `json:"p999,omitempty"`
	// max is the largest latency recorded, such as 250.3ms.
	// +optional
	Max *metav1.Duration `json:"max,omitempty"`
}

// RunEnvironment records what a result depends on besides the spec.
type RunEnvironment struct {
	// endpoint is Spanner or Emulator.
	// +optional
	Endpoint Endpoint `json:"endpoint,omitempty"`

	// spanbenchVersion is the runner build, such as v0.3.1.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	SpanbenchVersion string `json:"spanbenchVersion,omitempty"`

	// clientVersion is the Cloud Spanner Go client's module version.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	ClientVersion string `json:"clientVersion,omitempty"`

	// goVersion is the runners' Go runtime version.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	GoVersion string `json:"goVersion,omitempty"`

	// instanceConfig is the instance configuration as Spanner reported it,
	// such as regional-asia-northeast1.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	InstanceConfig string `json:"instanceConfig,omitempty"`

	// nodes is the instance's node count as Spanner reported it, when it is
	// sized in nodes.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Nodes *int32 `json:"nodes,omitempty"`

	// processingUnits is the instance's compute capacity as Spanner
	// reported it (1 node = 1000).
	// +optional
	// +kubebuilder:validation:Minimum=0
	ProcessingUnits *int32 `json:"processingUnits,omitempty"`

	// runners is the number of runners whose results were merged.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Runners int32 `json:"runners,omitempty"`

	// runnerRegion is the topology.kubernetes.io/region label of the nodes
	// the runner pods ran on, whatever spec.runners asked for; "mixed" when
	// they differ. Absent when it is not known: no runner pod was bound to
	// a node, or a runner's node has no region label.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	RunnerRegion string `json:"runnerRegion,omitempty"`
}

// ReportReference locates the full merged result document.
type ReportReference struct {
	// configMapName is the ConfigMap, in the run's namespace, that holds the
	// document.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ConfigMapName string `json:"configMapName"`

	// key is the ConfigMap key (data or binaryData) holding the document
	// when it is stored inline. A document too long for one ConfigMap is
	// stored in chunk ConfigMaps "<configMapName>-<k>" instead, which this
	// ConfigMap's data describe (resultBytes, resultSHA256, resultChunks;
	// docs/result-format.md, "Chunked results").
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
}

// RunnerRegionMixed is status.environment.runnerRegion when the runners ran
// in more than one region.
const RunnerRegionMixed = "mixed"

// RunProgress is a run's progress and figures at a glance: live while it
// runs, final once its results are merged.
type RunProgress struct {
	// live is true while the figures are the last complete interval's,
	// false once they are the run's final results (status.overall, after
	// the warm-up).
	// +required
	Live bool `json:"live"`

	// elapsed is the time of the load covered so far, such as 2m30s: the end
	// of the last complete interval every runner reported (live), or the
	// whole load (final).
	// +required
	Elapsed metav1.Duration `json:"elapsed"`

	// total is the length of the run's load, its warm-up included, such
	// as 10m0s.
	// +required
	Total metav1.Duration `json:"total"`

	// interval is the index, from the start, of the last complete
	// interval the live figures measure; absent when they are final.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Interval *int32 `json:"interval,omitempty"`

	// operations is the number of operations completed (successful, not
	// found and failed) in every runner so far (live), or after the
	// warm-up (final).
	// +optional
	// +kubebuilder:validation:Minimum=0
	Operations int64 `json:"operations,omitempty"`

	// errors is the number of failed operations so far (live), or after
	// the warm-up (final, status.overall.errors).
	// +optional
	// +kubebuilder:validation:Minimum=0
	Errors int64 `json:"errors,omitempty"`

	// throughput is the operations per second completed in the last
	// complete interval (live), or the successful ones per second after
	// the warm-up (final, status.overall.throughput); a decimal string
	// with one fractional digit.
	// +optional
	// +kubebuilder:validation:MaxLength=24
	// +kubebuilder:validation:Pattern=`^[0-9]+([.][0-9]+)?$`
	Throughput string `json:"throughput,omitempty"`

	// p99 is the 99th percentile latency, such as 12.5ms, of the successful
	// operations of the last complete interval, exact across runners (live),
	// or after the warm-up (final, status.overall.latency.p99).
	// +optional
	P99 *metav1.Duration `json:"p99,omitempty"`

	// summary is elapsed/total for the Progress column, such as
	// "2m10s/5m0s".
	// +optional
	// +kubebuilder:validation:MaxLength=48
	Summary string `json:"summary,omitempty"`

	// achieved is throughput for the Achieved column, such as "812.4/s
	// (live)"; "(live)" marks a live figure.
	// +optional
	// +kubebuilder:validation:MaxLength=48
	Achieved string `json:"achieved,omitempty"`

	// latency is p99 for the P99 column, such as "12.3ms (live)".
	// +optional
	// +kubebuilder:validation:MaxLength=48
	Latency string `json:"latency,omitempty"`

	// updateTime is when the manager last wrote live figures.
	// +optional
	UpdateTime *metav1.Time `json:"updateTime,omitempty"`
}
