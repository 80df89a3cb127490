// Package v1alpha1 holds the bench.spanbench.io/v1alpha1 API: the BenchmarkRun
// kind (one execution of a workload against a Spanner target) and the
// workload model the load engine runs.
//
// +kubebuilder:object:generate=true
// +groupName=bench.spanbench.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the API group and version of spanbench's kinds.
	GroupVersion = schema.GroupVersion{Group: "bench.spanbench.io", Version: "v1alpha1"}

	// SchemeBuilder registers the kinds of this group version with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the kinds of this group version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
