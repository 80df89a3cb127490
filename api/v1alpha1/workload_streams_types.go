package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StreamSpec is one load stream of a run: its own operation mix, load,
// window within the run and runner pods, measured on its own. A workload
// without streams is one implicit stream of its operations and load.
// +kubebuilder:validation:XValidation:rule="!has(self.iterations) || has(self.load.concurrency)",message="iterations: a batch stream runs a fixed number of iterations with load.concurrency workers; set load.concurrency",fieldPath=".iterations"
// +kubebuilder:validation:XValidation:rule="!(has(self.load.steps) && has(self.duration))",message="duration: set the stream's duration, or load.steps (whose durations add up to the stream's), not both",fieldPath=".duration"
type StreamSpec struct {
	// name identifies the stream in results, metrics and status: a DNS
	// label of at most 40 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// operations is the stream's mix: operations of workload.operations,
	// by name, each chosen with probability weight / sum of the stream's
	// weights. An operation may run in several streams.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(o, self.exists_one(p, p.name == o.name))",message="streams.operations: each operation appears at most once in a stream"
	Operations []StreamOperation `json:"operations"`

	// load is the stream's own load: an open-loop rate, steps or ramp, or a
	// closed-loop concurrency, across the runner pods the stream runs on.
	// A capacity search is the run's load only (workload.load.search).
	// +required
	// +kubebuilder:validation:XValidation:rule="!has(self.search)",message="streams.load.search: a capacity search is the run's load (workload.load.search), not a stream's",fieldPath=".search"
	Load LoadSpec `json:"load"`

	// iterations makes the stream a batch: its load.concurrency workers run
	// this many operations in all (across its runner pods), then the stream
	// ends and its wall time is recorded. Only with load.concurrency.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000000
	Iterations *int64 `json:"iterations,omitempty"`

	// startOffset is when the stream starts, after the run's start, such
	// as 5m. Default 0s. It must be within the run's duration.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self) >= duration('0s') && duration(self) <= duration('168h')",message="streams.startOffset: must be a duration from 0s to 168h, such as 5m"
	StartOffset *metav1.Duration `json:"startOffset,omitempty"`

	// duration is how long the stream runs, such as 10m. Default: until
	// the end of the run (or load.steps' sum). startOffset plus duration
	// must not pass the run's end.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self) > duration('0s') && duration(self) <= duration('168h')",message="streams.duration: must be a positive duration of at most 168h, such as 10m"
	Duration *metav1.Duration `json:"duration,omitempty"`

	// runners pins the stream to these runner pod indexes (0 to
	// runners.count-1); the stream's rate, concurrency and iterations are
	// shared among them. Default: every runner pod.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:Minimum=0
	// +kubebuilder:validation:items:Maximum=999
	Runners []int32 `json:"runners,omitempty"`
}

// StreamOperation is one operation of a stream's mix.
type StreamOperation struct {
	// name is the name of an operation of workload.operations (its
	// explicit name, or its type in kebab case, such as read-keys).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9-]*$`
	Name string `json:"name"`

	// weight is the operation's share of the stream's mix, at least 1.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000
	Weight int32 `json:"weight"`
}
