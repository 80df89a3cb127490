package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkRunSpec describes one benchmark execution: the target, the
// workload, the runners and the stage deadlines. It cannot change once the
// run is created: a result must describe exactly the spec that produced it.
// The rule is on BenchmarkRun.spec, not on this type, so that a campaign's
// template (the same type) stays editable.
// +kubebuilder:validation:XValidation:rule="!has(self.target.splitPoints) || self.workload.type != 'TPCC'",message="target.splitPoints: split points are keys of YCSB's and Tweet's string ids; pre-splitting TPCC's warehouse-keyed tables is not built",fieldPath=".target.splitPoints"
// +kubebuilder:validation:XValidation:rule="!has(self.target.splitPoints) || self.workload.type == 'TPCC' || self.workload.type == 'Custom' || (has(self.target.splitPoints.keys) && size(self.target.splitPoints.keys) > 1000) || (has(self.target.splitPoints.count) && self.target.splitPoints.count > 1000) || (has(self.target.splitPoints.keys) ? size(self.target.splitPoints.keys) : has(self.target.splitPoints.count) ? self.target.splitPoints.count : 0) <= (has(self.workload.dataset) && has(self.workload.dataset.rows) ? self.workload.dataset.rows : 1000)",message="target.splitPoints: more split points than the dataset has rows (workload.dataset.rows, default 1000): a split would hold no row",fieldPath=".target.splitPoints"
// +kubebuilder:validation:XValidation:rule="!has(self.workload.streams) || self.workload.streams.all(s, !has(s.runners) || s.runners.all(i, i < (has(self.runners) && has(self.runners.replicas) ? self.runners.replicas : 1)))",message="workload.streams.runners: runner indexes must be below runners.replicas (default 1)",fieldPath=".workload.streams"
// +kubebuilder:validation:XValidation:rule="!has(self.workload.dataset) || !has(self.workload.dataset.maxRowsPerSecond) || self.workload.type == 'TPCC' || self.workload.type == 'Custom' || self.workload.dataset.maxRowsPerSecond < 1 || self.workload.dataset.maxRowsPerSecond > 100000000 || (has(self.workload.dataset.rows) && self.workload.dataset.rows < 0) || (has(self.deadlines) && has(self.deadlines.load) && (!self.deadlines.load.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || duration(self.deadlines.load) <= duration('0s') || duration(self.deadlines.load) > duration('168h'))) || (has(self.workload.dataset.rows) ? self.workload.dataset.rows : 1000) <= self.workload.dataset.maxRowsPerSecond * (has(self.deadlines) && has(self.deadlines.load) ? duration(self.deadlines.load).getSeconds() : 3600)",message="workload.dataset.maxRowsPerSecond: at this cap the dataset (workload.dataset.rows, default 1000) takes longer to load than deadlines.load (default 1h) allows; raise the cap or deadlines.load",fieldPath=".workload.dataset.maxRowsPerSecond"
type BenchmarkRunSpec struct {
	// target is the Spanner database to benchmark.
	// +required
	Target TargetSpec `json:"target"`

	// workload is what the runners send: schema, dataset, operation mix,
	// load profile, duration and warm-up.
	// +required
	Workload WorkloadSpec `json:"workload"`

	// runners are the pods that send the load. Each takes 1/replicas of the
	// rate.
	// +optional
	Runners RunnersSpec `json:"runners,omitempty"`

	// deadlines bound how long each stage of the run may take. A stage that
	// overruns its deadline fails the run with reason DeadlineExceeded (or a
	// more specific one, such as RunnerImagePullFailed).
	// +optional
	Deadlines DeadlinesSpec `json:"deadlines,omitempty"`
}

// RunnersSpec places and sizes the runner pods.
type RunnersSpec struct {
	// replicas is the number of runner pods. Default 1.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	Replicas *int32 `json:"replicas,omitempty"`

	// image overrides the manager's default runner image: an image
	// reference such as gcr.io/project/spanbench:v1 or
	// registry:5000/spanbench@sha256:<64 hex digits>. Its pods run
	// /spanbench-runner: a spanbench image of this release (which has it).
	// +optional
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^(([A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?([.][A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*(:[0-9]{1,5})?/)?[a-z0-9]+(([.]|_|__|-+)[a-z0-9]+)*(/[a-z0-9]+(([.]|_|__|-+)[a-z0-9]+)*)*(:[A-Za-z0-9_][-A-Za-z0-9_.]{0,127})?(@sha256:[a-f0-9]{64})?)?$`
	Image string `json:"image,omitempty"`

	// resources are each runner container's requests and limits of cpu,
	// memory and ephemeral-storage.
	// +optional
	Resources RunnerResources `json:"resources,omitempty"`

	// serviceAccountName is the runners' Kubernetes service account, bound
	// to a Google service account with Workload Identity. Default: the one
	// spanbench creates for the run.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$`
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// region places runners on nodes of this topology.kubernetes.io/region,
	// e.g. next to (or away from) the Spanner leader region. A label value.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$`
	Region string `json:"region,omitempty"`

	// zone places runners on nodes of this topology.kubernetes.io/zone. A
	// label value.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$`
	Zone string `json:"zone,omitempty"`

	// nodeSelector further restricts the runners' nodes: label keys (an
	// optional DNS-subdomain prefix of at most 253 characters and '/', then
	// a name of at most 63) and label values.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 317 && k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && k.indexOf('/') <= 253)",message="nodeSelector: keys must be label keys: an optional DNS-subdomain prefix (at most 253 characters) and '/', then at most 63 letters, digits, '-', '_' and '.'"
	NodeSelector map[string]LabelValue `json:"nodeSelector,omitempty"`

	// tolerations let runners onto tainted nodes.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Tolerations []Toleration `json:"tolerations,omitempty"` //nolint:kubeapilinter // arrayofstruct: a toleration of every taint has only operator Exists, so no one field is required (CEL checks the combinations).
}

// DeadlinesSpec bounds each stage of a run. Every field is a duration such
// as 90s, 15m or 1h30m, positive and at most 168h (a week).
type DeadlinesSpec struct {
	// prepare is how long the target may take to become ready: the instance
	// created (Ephemeral), the database and schema in place. Counted from the
	// run's creation. Default 15m.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self) > duration('0s') && duration(self) <= duration('168h')",message="deadlines.prepare: must be a positive duration of at most 168h, such as 15m"
	Prepare *metav1.Duration `json:"prepare,omitempty"`

	// load is how long preloading the dataset may take, counted from when the
	// target became ready. Default 1h.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self) > duration('0s') && duration(self) <= duration('168h')",message="deadlines.load: must be a positive duration of at most 168h, such as 1h"
	Load *metav1.Duration `json:"load,omitempty"`

	// runnersReady is how long the runner pods may take to be scheduled,
	// pull their image and become ready, counted from when the dataset was
	// loaded. Default 10m.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self) > duration('0s') && duration(self) <= duration('168h')",message="deadlines.runnersReady: must be a positive duration of at most 168h, such as 10m"
	RunnersReady *metav1.Duration `json:"runnersReady,omitempty"`

	// overrun is how long the load may run past the workload's duration
	// (runners draining in-flight requests and writing their shard results)
	// before the run fails. Default 5m.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self) > duration('0s') && duration(self) <= duration('168h')",message="deadlines.overrun: must be a positive duration of at most 168h, such as 5m"
	Overrun *metav1.Duration `json:"overrun,omitempty"`

	// aggregate is how long merging the shard results may take, counted from
	// when the last runner finished. Default 5m.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self) > duration('0s') && duration(self) <= duration('168h')",message="deadlines.aggregate: must be a positive duration of at most 168h, such as 5m"
	Aggregate *metav1.Duration `json:"aggregate,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=br;bench,categories=spanbench
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="Stage of the run, derived from the conditions"
// +kubebuilder:printcolumn:name="Loaded",type=integer,JSONPath=`.status.dataset.loaded`,description="Dataset rows loaded so far (while Loading), or in all"
// +kubebuilder:printcolumn:name="Rows",type=integer,JSONPath=`.status.dataset.rows`,description="Dataset rows in all",priority=1
// +kubebuilder:printcolumn:name="Load Rate",type=string,JSONPath=`.status.dataset.rowsPerSecond`,description="Dataset rows loaded per second, on average since loading began",priority=1
// +kubebuilder:printcolumn:name="Config",type=string,JSONPath=`.spec.target.instance.config`,description="Spanner instance configuration"
// +kubebuilder:printcolumn:name="Rate",type=integer,JSONPath=`.spec.workload.load.rate`,description="Target rate in operations per second (constant-rate runs)"
// +kubebuilder:printcolumn:name="Progress",type=string,JSONPath=`.status.progress.summary`,description="Time of the load covered so far, of its length"
// +kubebuilder:printcolumn:name="Achieved",type=string,JSONPath=`.status.progress.achieved`,description="Operations per second: of the last complete interval while running (live), after the warm-up once done"
// +kubebuilder:printcolumn:name="P99",type=string,JSONPath=`.status.progress.latency`,description="99th percentile latency: of the last complete interval while running (live), after the warm-up once done"
// +kubebuilder:printcolumn:name="Errors",type=integer,JSONPath=`.status.progress.errors`,description="Failed operations: so far while running, after the warm-up once done"
// +kubebuilder:printcolumn:name="Capacity",type=string,JSONPath=`.status.search.summary`,description="A capacity search's capacity in operations per second, once it ended"
// +kubebuilder:printcolumn:name="Cost",type=string,JSONPath=`.status.cost.summary`,description="The run's cost (~ an estimate), or unknown without a price"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Succeeded",type=string,JSONPath=`.status.conditions[?(@.type=="Succeeded")].status`,priority=1
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Succeeded")].reason`,priority=1
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 50 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name: a BenchmarkRun name must be at most 50 characters of lower-case letters, digits and '-', start with a letter and end with a letter or digit, so that its runner Job and Service can be named after it"

// BenchmarkRun is one execution of a workload against Spanner, with its
// merged, exact results in the status.
type BenchmarkRun struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the run. It is immutable once created.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec: immutable once the run is created; create a new BenchmarkRun to run with other settings"
	Spec BenchmarkRunSpec `json:"spec"`

	// status is what the controller observed and measured.
	// +optional
	Status BenchmarkRunStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// BenchmarkRunList is a list of BenchmarkRuns.
type BenchmarkRunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the BenchmarkRuns.
	// +required
	Items []BenchmarkRun `json:"items"`
}

func init() {
	SchemeBuilder.Register(&BenchmarkRun{}, &BenchmarkRunList{})
}
