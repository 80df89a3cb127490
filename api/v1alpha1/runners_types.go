package v1alpha1

import (
	"k8s.io/apimachinery/pkg/util/intstr"
)

// RunnerResources are a runner container's requests and limits: cpu,
// memory and ephemeral storage, each a bounded quantity. They are not
// corev1.ResourceRequirements on purpose: a resource.Quantity is parsed
// while the object is decoded, and some texts the Kubernetes quantity
// grammar allows (12 characters: "1e-999999999") take the parser minutes
// and gigabytes, in the manager's cache and in `spanbench run` alike. Here
// the schema refuses anything but short decimals with a fixed set of
// suffixes before Go ever parses them.
// The rules below compare requests with limits; they parse a quantity
// only when it is short and has no exponent (the pattern's quantities,
// and some it refuses on its own), never a text that would take the
// parser long.
// +kubebuilder:validation:XValidation:rule="!has(self.requests) || !has(self.limits) || !has(self.requests.cpu) || !has(self.limits.cpu) || !(type(self.requests.cpu) == int || (size(self.requests.cpu) <= 15 && !self.requests.cpu.contains('e') && !self.requests.cpu.contains('E') && isQuantity(self.requests.cpu))) || !(type(self.limits.cpu) == int || (size(self.limits.cpu) <= 15 && !self.limits.cpu.contains('e') && !self.limits.cpu.contains('E') && isQuantity(self.limits.cpu))) || quantity(string(self.requests.cpu)).compareTo(quantity(string(self.limits.cpu))) <= 0",message="requests.cpu: must not be more than limits.cpu",fieldPath=".requests.cpu"
// +kubebuilder:validation:XValidation:rule="!has(self.requests) || !has(self.limits) || !has(self.requests.memory) || !has(self.limits.memory) || !(type(self.requests.memory) == int || (size(self.requests.memory) <= 15 && !self.requests.memory.contains('e') && !self.requests.memory.contains('E') && isQuantity(self.requests.memory))) || !(type(self.limits.memory) == int || (size(self.limits.memory) <= 15 && !self.limits.memory.contains('e') && !self.limits.memory.contains('E') && isQuantity(self.limits.memory))) || quantity(string(self.requests.memory)).compareTo(quantity(string(self.limits.memory))) <= 0",message="requests.memory: must not be more than limits.memory",fieldPath=".requests.memory"
// +kubebuilder:validation:XValidation:rule="!has(self.requests) || !has(self.limits) || !has(self.requests.ephemeral__dash__storage) || !has(self.limits.ephemeral__dash__storage) || !(type(self.requests.ephemeral__dash__storage) == int || (size(self.requests.ephemeral__dash__storage) <= 15 && !self.requests.ephemeral__dash__storage.contains('e') && !self.requests.ephemeral__dash__storage.contains('E') && isQuantity(self.requests.ephemeral__dash__storage))) || !(type(self.limits.ephemeral__dash__storage) == int || (size(self.limits.ephemeral__dash__storage) <= 15 && !self.limits.ephemeral__dash__storage.contains('e') && !self.limits.ephemeral__dash__storage.contains('E') && isQuantity(self.limits.ephemeral__dash__storage))) || quantity(string(self.requests.ephemeral__dash__storage)).compareTo(quantity(string(self.limits.ephemeral__dash__storage))) <= 0",message="requests.ephemeral-storage: must not be more than limits.ephemeral-storage",fieldPath=".requests.ephemeral-storage"
type RunnerResources struct {
	// requests are what the scheduler reserves for each runner.
	// +optional
	Requests *ResourceQuantities `json:"requests,omitempty"`

	// limits cap what each runner may use.
	// +optional
	Limits *ResourceQuantities `json:"limits,omitempty"`
}

// ResourceQuantities are amounts of cpu, memory and ephemeral storage. A
// quantity is an integer or a string: cpu as cores ("2", "0.5", at most 3
// decimals) or millicores ("500m"); memory and ephemeral-storage as bytes
// ("1073741824") or with a suffix k, M, G, T, Ki, Mi, Gi or Ti ("512Mi",
// "1.5Gi"). No exponents, no signs, no P or E suffixes: every accepted
// text parses in microseconds and fits an int64 in milli-units.
type ResourceQuantities struct {
	// cpu is in cores or millicores, such as 500m or 2; at most 1000000
	// cores.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=12
	// +kubebuilder:validation:Pattern=`^([0-9]{1,6}([.][0-9]{1,3})?|[0-9]{1,9}m)$`
	// +kubebuilder:validation:XValidation:rule="type(self) == string || (self >= 0 && self <= 1000000)",message="cpu: an integer number of cores must be between 0 and 1000000"
	CPU *intstr.IntOrString `json:"cpu,omitempty"`

	// memory is in bytes, such as 512Mi or 2Gi.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:Pattern=`^([0-9]{1,15}|[0-9]{1,6}([.][0-9]{1,3})?(k|M|G|T|Ki|Mi|Gi|Ti))$`
	// +kubebuilder:validation:XValidation:rule="type(self) == string || (self >= 0 && self <= 2147483647)",message="memory: an integer number of bytes must be between 0 and 2147483647 (2Gi - 1); write larger amounts with a suffix, such as 4Gi"
	Memory *intstr.IntOrString `json:"memory,omitempty"`

	// ephemeral-storage is in bytes, such as 1Gi.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:Pattern=`^([0-9]{1,15}|[0-9]{1,6}([.][0-9]{1,3})?(k|M|G|T|Ki|Mi|Gi|Ti))$`
	// +kubebuilder:validation:XValidation:rule="type(self) == string || (self >= 0 && self <= 2147483647)",message="ephemeral-storage: an integer number of bytes must be between 0 and 2147483647 (2Gi - 1); write larger amounts with a suffix, such as 4Gi"
	EphemeralStorage *intstr.IntOrString `json:"ephemeral-storage,omitempty"` //nolint:kubeapilinter // jsontags: the resource's Kubernetes name, as in a pod's resources.
}

// TolerationOperator is how a toleration matches a taint's value.
// +kubebuilder:validation:Enum=Exists;Equal;""
type TolerationOperator string

// TaintEffect is the effect of a taint a toleration tolerates.
// +kubebuilder:validation:Enum=NoSchedule;PreferNoSchedule;NoExecute;""
type TaintEffect string

// Toleration lets runners onto nodes with a matching taint: the fields of
// a pod's toleration, each bounded and checked for syntax, so that a bad
// one is refused when the run is created, not when its Job is.
// +kubebuilder:validation:XValidation:rule="(has(self.key) && size(self.key) > 0) || (has(self.operator) && self.operator == 'Exists')",message="tolerations: a toleration without a key must use operator Exists"
// +kubebuilder:validation:XValidation:rule="!has(self.value) || size(self.value) == 0 || !has(self.operator) || self.operator == 'Equal'",message="tolerations: value must be empty when operator is Exists"
// +kubebuilder:validation:XValidation:rule="!has(self.tolerationSeconds) || (has(self.effect) && self.effect == 'NoExecute')",message="tolerations: tolerationSeconds applies only to effect NoExecute"
type Toleration struct {
	// key is the taint key matched, a label key; empty matches every key
	// (with operator Exists).
	// +optional
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^(([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$`
	// +kubebuilder:validation:XValidation:rule="self.indexOf('/') <= 253",message="tolerations.key: the prefix before '/' must be at most 253 characters"
	Key string `json:"key,omitempty"`

	// operator is Equal (default) or Exists.
	// +optional
	Operator TolerationOperator `json:"operator,omitempty"`

	// value is the taint value matched with operator Equal, a label value.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$`
	Value string `json:"value,omitempty"`

	// effect is the taint effect matched; empty matches all effects.
	// +optional
	Effect TaintEffect `json:"effect,omitempty"`

	// tolerationSeconds is how long a runner stays on a node after a
	// NoExecute taint is added, at most a week.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=604800
	TolerationSeconds *int64 `json:"tolerationSeconds,omitempty"`
}

// LabelValue is a Kubernetes label value: at most 63 characters of
// letters, digits, '-', '_' and '.', starting and ending with a letter or
// digit, or empty.
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:Pattern=`^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$`
type LabelValue string
