package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ConditionServerStatsCollected records the collection of Spanner's own
// statistics (SPANNER_SYS) of a succeeded run's operations, after the run
// (docs/server-stats.md). It is not a gate and never changes the run's
// outcome: a run succeeds when its client results are in, and this
// condition follows. False with ReasonServerStatsPending while the
// statistics minutes settle; True with ReasonServerStatsCollected once
// status.operations[].server holds the figures; False with one of the
// other reasons when they will not be collected. Absent on runs that did
// not succeed and on runs that ended before the manager collected.
const ConditionServerStatsCollected = "ServerStatsCollected"

// Reasons of ConditionServerStatsCollected.
const (
	// ReasonServerStatsPending: the run's last statistics minute has not
	// settled yet (its close plus the manager's settle time); the message
	// says when it is read. Non-terminal.
	ReasonServerStatsPending = "Pending"
	// ReasonServerStatsCollected: the figures are in
	// status.operations[].server, status.serverStats and the report.
	ReasonServerStatsCollected = "Collected"
	// ReasonNotAvailableOnEmulator: the run measured the emulator, which
	// has no SPANNER_SYS tables; nothing was read and nothing failed.
	ReasonNotAvailableOnEmulator = "NotAvailableOnEmulator"
	// ReasonNoWholeMinute: the run's measured window (after the warm-up)
	// holds no whole statistics minute, so there is nothing to read; runs
	// shorter than two minutes may not hold one.
	ReasonNoWholeMinute = "NoWholeMinute"
	// ReasonStatisticsNotFound: the database or its statistics tables do
	// not exist (the database was deleted after the run, or the tables are
	// not where the manager looks).
	ReasonStatisticsNotFound = "StatisticsNotFound"
	// ReasonServerStatsFailed: reading the statistics failed for another
	// reason, or kept failing until the manager gave up; the message says
	// which. The run's results are unaffected.
	ReasonServerStatsFailed = "Failed"
	// ReasonPartialResults (shared with Succeeded) on this condition: the
	// run's results are partial, so the client's counts miss operations
	// Spanner's statistics hold; nothing is read.
	//
	// ReasonPermissionDenied (shared with the run's failure reasons) on
	// this condition: the manager's identity may not read SPANNER_SYS
	// (needs spanner.databases.select, e.g. roles/spanner.databaseReader);
	// the run still succeeded, its server figures are "not collected:
	// PermissionDenied".
)

// ServerStatsSummary says which statistics were read for a run and what
// limits them.
type ServerStatsSummary struct {
	// source is where the figures come from: the statistics tables' prefix,
	// SPANNER_SYS. in production.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Source string `json:"source,omitempty"`

	// windowStart and windowEnd are the whole statistics minutes read: from
	// the first minute starting at or after the warm-up's end to the last
	// minute closing at or before the measurement's end. A minute that
	// holds warm-up or unmeasured traffic is never read.
	// +optional
	WindowStart *metav1.Time `json:"windowStart,omitempty"`

	// windowEnd is the end of the last whole minute read.
	// +optional
	WindowEnd *metav1.Time `json:"windowEnd,omitempty"`

	// minutes is how many whole statistics intervals were read: minutes,
	// or the intervals of the tables granularity names.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Minutes int32 `json:"minutes,omitempty"`

	// granularity is the statistics tables read: MINUTE (the *_TOP_MINUTE
	// tables, kept 6 hours), or 10MINUTE (kept 4 days) or HOUR (kept 30
	// days) when the collection came after the finer tables had dropped
	// the run. Coarser intervals hold fewer whole intervals of the window.
	// +optional
	// +kubebuilder:validation:Enum=MINUTE;"10MINUTE";HOUR
	Granularity string `json:"granularity,omitempty"`

	// apportionedOperations is how many of the client's operations were
	// spread over two minutes in proportion to time, because their
	// measurement interval straddled a minute's boundary (the one estimate
	// in the join; the rest are exact).
	// +optional
	// +kubebuilder:validation:Minimum=0
	ApportionedOperations int64 `json:"apportionedOperations,omitempty"`

	// collectionTime is when the statistics were read.
	// +optional
	CollectionTime *metav1.Time `json:"collectionTime,omitempty"`

	// notes are caveats of the collection: no whole minute in the window,
	// minutes older than Spanner keeps.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=256
	Notes []string `json:"notes,omitempty"`
}

// ServerOperationFigures are Spanner's own figures for one operation, per
// logical operation: summed over the minutes read and divided by the
// client's exact count of operations in the minutes that had a row. Decimal
// figures are strings with up to six significant digits (the API carries
// no floating-point numbers); durations have nanosecond resolution.
type ServerOperationFigures struct {
	// notCaptured is true when Spanner's TOP statistics tables held no row
	// of the operation's tags in any minute read and no sampled lock
	// request carried its transaction tag: its server figures are unknown
	// (the tables keep only each minute's costliest shapes), never zero.
	// The other fields are then absent.
	// +optional
	NotCaptured bool `json:"notCaptured,omitempty"`

	// notCapturedIn says, when set, which tags were looked for where and
	// not found, such as a transaction tag absent from TXN_STATS.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	NotCapturedIn string `json:"notCapturedIn,omitempty"`

	// coverage is the share of the client's operations that fell in minutes
	// where the operation had a row, such as "1" or "0.667": below 1, some
	// minutes lost the shape from the TOP table, and the per-operation
	// figures cover only the others.
	// +optional
	// +kubebuilder:validation:MaxLength=24
	// +kubebuilder:validation:Pattern=`^[0-9]+([.][0-9]+)?$`
	Coverage string `json:"coverage,omitempty"`

	// executions is Spanner's count of executions of the operation's reads
	// and queries (EXECUTION_COUNT), failed ones included.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Executions int64 `json:"executions,omitempty"`

	// executionsPerOperation is executions over the client's operations:
	// 1 for a query; for a read, the splits it touched (Spanner counts a
	// read once per split), such as "4".
	// +optional
	// +kubebuilder:validation:MaxLength=24
	// +kubebuilder:validation:Pattern=`^[0-9]+([.][0-9]+)?$`
	ExecutionsPerOperation string `json:"executionsPerOperation,omitempty"`

	// cpuPerOperation is Spanner's CPU time per logical operation, such as
	// 1.2ms (the sum of AVG_CPU_SECONDS × EXECUTION_COUNT over the client's
	// count): the per-split correction, so a read over four splits costs
	// four of its executions.
	// +optional
	CPUPerOperation *metav1.Duration `json:"cpuPerOperation,omitempty"`

	// cpuPerExecution is AVG_CPU_SECONDS weighted by executions, such as
	// 300µs: what the table says, per split for a read.
	// +optional
	CPUPerExecution *metav1.Duration `json:"cpuPerExecution,omitempty"`

	// latencyAvg is the server's average latency per execution, such as
	// 2.5ms (AVG_LATENCY_SECONDS weighted by executions); queries only, as
	// read statistics have no latency.
	// +optional
	LatencyAvg *metav1.Duration `json:"latencyAvg,omitempty"`

	// latencyP50 is the server's median latency per execution, such as 2ms,
	// read from Spanner's latency histograms (LATENCY_DISTRIBUTION) of the
	// intervals read, merged; queries only. Absent when no histogram was
	// captured (reads have none): not captured, not zero.
	// +optional
	LatencyP50 *metav1.Duration `json:"latencyP50,omitempty"`

	// latencyP99 is the server's 99th-percentile latency per execution, such
	// as 9.5ms, from the same merged histograms as latencyP50.
	// +optional
	LatencyP99 *metav1.Duration `json:"latencyP99,omitempty"`

	// rowsReturnedPerOperation is rows returned per logical operation.
	// +optional
	// +kubebuilder:validation:MaxLength=24
	// +kubebuilder:validation:Pattern=`^[0-9]+([.][0-9]+)?$`
	RowsReturnedPerOperation string `json:"rowsReturnedPerOperation,omitempty"`

	// rowsScannedPerOperation is rows scanned per logical operation
	// (queries only): against rowsReturnedPerOperation, how much a query
	// reads to return what it returns.
	// +optional
	// +kubebuilder:validation:MaxLength=24
	// +kubebuilder:validation:Pattern=`^[0-9]+([.][0-9]+)?$`
	RowsScannedPerOperation string `json:"rowsScannedPerOperation,omitempty"`

	// bytesPerOperation is bytes returned per logical operation.
	// +optional
	// +kubebuilder:validation:MaxLength=24
	// +kubebuilder:validation:Pattern=`^[0-9]+([.][0-9]+)?$`
	BytesPerOperation string `json:"bytesPerOperation,omitempty"`

	// transactionAttemptsPerOperation is read-write transaction attempts
	// (ATTEMPT_COUNT) per logical operation: above 1, retries.
	// +optional
	// +kubebuilder:validation:MaxLength=24
	// +kubebuilder:validation:Pattern=`^[0-9]+([.][0-9]+)?$`
	TransactionAttemptsPerOperation string `json:"transactionAttemptsPerOperation,omitempty"`

	// commitAbortRate is COMMIT_ABORT_COUNT over COMMIT_ATTEMPT_COUNT.
	// +optional
	// +kubebuilder:validation:MaxLength=24
	// +kubebuilder:validation:Pattern=`^[0-9]+([.][0-9]+)?$`
	CommitAbortRate string `json:"commitAbortRate,omitempty"`

	// commitLatencyAvg is the server's average commit latency, such as
	// 6.1ms (AVG_COMMIT_LATENCY_SECONDS weighted by commit attempts).
	// +optional
	CommitLatencyAvg *metav1.Duration `json:"commitLatencyAvg,omitempty"`

	// transactionLatencyP99 is the 99th percentile, such as 25ms, of the
	// read-write transactions' total latency per attempt (first operation
	// to commit or abort), from the merged TOTAL_LATENCY_DISTRIBUTION
	// histograms.
	// +optional
	TransactionLatencyP99 *metav1.Duration `json:"transactionLatencyP99,omitempty"`

	// lockWait is the operation's estimated lock wait, such as 1.5s, over
	// the intervals read: the LOCK_WAIT_SECONDS of each contended row range
	// whose sampled lock requests carry its transaction tag, apportioned by
	// its share of the samples (Spanner samples up to 20 requests a range,
	// waiters and holders alike). Absent when no sample carried its tag: no
	// contention seen or none sampled, not zero.
	// +optional
	LockWait *metav1.Duration `json:"lockWait,omitempty"`
}
