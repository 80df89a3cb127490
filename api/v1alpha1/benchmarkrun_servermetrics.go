package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ConditionServerMetricsCollected says whether Cloud Monitoring's figures
// of the run (status.serverMetrics) were read: Unknown while the window's
// last minute is not yet published, True once read, False when they
// cannot be (the emulator, the collection off, a missing permission, a
// failure). It never fails the run.
const ConditionServerMetricsCollected = "ServerMetricsCollected"

// Reasons of ServerMetricsCollected.
const (
	// ReasonMetricsPending: the window's last minute is read 180 s after it
	// ends, when Cloud Monitoring has it.
	ReasonMetricsPending = "Pending"
	// ReasonMetricsCollected: status.serverMetrics holds the figures.
	ReasonMetricsCollected = "Collected"
	// ReasonMetricsNotAvailableOnEmulator: the emulator has no Cloud
	// Monitoring metrics.
	ReasonMetricsNotAvailableOnEmulator = "NotAvailableOnEmulator"
	// ReasonMetricsDisabled: the manager runs with --server-metrics=false,
	// or could not open its Cloud Monitoring client.
	ReasonMetricsDisabled = "Disabled"
	// ReasonMetricsFailed: reading Cloud Monitoring failed; the message
	// says how.
	ReasonMetricsFailed = "Failed"
)

// PermissionDenied (ReasonPermissionDenied) is the fourth reason: the
// manager's identity lacks roles/monitoring.viewer.

// WarmUpSignal names the signal that ended a run's warm-up.
// +kubebuilder:validation:Enum=Client;Server
type WarmUpSignal string

// The signals.
const (
	// WarmUpSignalClient: the client's throughput and p99 settled last (or
	// the server's never did); status.warmUpEnd holds.
	WarmUpSignalClient WarmUpSignal = "Client"
	// WarmUpSignalServer: the server's request rate and p99 settled after
	// status.warmUpEnd; the run's figures include server warm-up minutes.
	WarmUpSignalServer WarmUpSignal = "Server"
)

// ServerMetricsStatus is what Cloud Monitoring says about the run's
// instance and database, read once the window's minutes are published.
// docs/server-stats.md explains each figure, its delay and accuracy.
type ServerMetricsStatus struct {
	// windowStart is the start of the interval asked of Cloud Monitoring:
	// the run's first whole minute.
	// +optional
	WindowStart *metav1.Time `json:"windowStart,omitempty"`

	// windowEnd is the end of the interval asked: the run's last whole
	// minute's end.
	// +optional
	WindowEnd *metav1.Time `json:"windowEnd,omitempty"`

	// measuredFrom is the start of the figures' first minute, the first
	// whole minute after the warm-up.
	// +optional
	MeasuredFrom *metav1.Time `json:"measuredFrom,omitempty"`

	// alignment is the alignment period asked: 1m0s, Spanner's sampling
	// period.
	// +optional
	Alignment *metav1.Duration `json:"alignment,omitempty"`

	// cpu is the instance's CPU utilization per priority and region (one
	// region for a regional config, each region for a multi-region one).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	CPU []ServerCPU `json:"cpu,omitempty"`

	// latency is the database's server latency per API method.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Latency []ServerMethodLatency `json:"latency,omitempty"`

	// requests counts the database's API requests per status over the
	// measured minutes.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Requests []ServerRequestCount `json:"requests,omitempty"`

	// warmUp is the server's warm-up signal: when its request rate and p99
	// settled, and which signal ended the warm-up.
	// +optional
	WarmUp *ServerWarmUp `json:"warmUp,omitempty"`

	// notes say what limits the figures.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=256
	Notes []string `json:"notes,omitempty"`
}

// ServerCPU is the CPU utilization of one priority in one region.
type ServerCPU struct {
	// priority is Spanner's task priority: high, medium or low.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=16
	Priority string `json:"priority"`

	// location is the region the figure is for.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Location string `json:"location,omitempty"`

	// meanPercent is the mean of the minute means, in percent of the
	// region's compute capacity, as a decimal string such as "52.3".
	// +optional
	// +kubebuilder:validation:MaxLength=24
	// +kubebuilder:validation:Pattern=`^[0-9]+([.][0-9]+)?$`
	MeanPercent string `json:"meanPercent,omitempty"`

	// maxPercent is the largest minute mean, in percent.
	// +optional
	// +kubebuilder:validation:MaxLength=24
	// +kubebuilder:validation:Pattern=`^[0-9]+([.][0-9]+)?$`
	MaxPercent string `json:"maxPercent,omitempty"`
}

// ServerMethodLatency is the server latency of one API method.
type ServerMethodLatency struct {
	// method is the API method, such as ExecuteSql, StreamingRead, Commit.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Method string `json:"method"`

	// count is the number of requests the percentiles are of.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Count int64 `json:"count,omitempty"`

	// p50 is the median, such as 4.211ms, interpolated within Cloud
	// Monitoring's buckets.
	// +optional
	P50 *metav1.Duration `json:"p50,omitempty"`

	// p99 is the 99th percentile, such as 12.5ms, interpolated within the
	// buckets.
	// +optional
	P99 *metav1.Duration `json:"p99,omitempty"`
}

// ServerRequestCount is the number of API requests that ended with one
// status.
type ServerRequestCount struct {
	// status is the gRPC status the server gave, such as OK or ABORTED.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	Status string `json:"status"`

	// count is the number of requests that ended with this status over the
	// run's measured minutes.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Count int64 `json:"count,omitempty"`
}

// ServerWarmUp is when the server's load settled.
type ServerWarmUp struct {
	// settled is false when the server's request rate and p99 never held
	// steady for the warm-up rule's window.
	// +optional
	Settled *bool `json:"settled,omitempty"`

	// settledAt is when the server's first steady minute began.
	// +optional
	SettledAt *metav1.Time `json:"settledAt,omitempty"`

	// endedBy is the signal that settled last, Client or Server.
	// +optional
	EndedBy WarmUpSignal `json:"endedBy,omitempty"`

	// cutIntervals is how many of the run's intervals after the client's
	// warm-up the server's later end cut from its figures (the report's
	// warmUp.serverIntervals; status.warmUpEnd is then the server's end).
	// Absent when it cut none.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1048576
	CutIntervals *int32 `json:"cutIntervals,omitempty"`
}
