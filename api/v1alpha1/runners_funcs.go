package v1alpha1

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Bounds of spec.runners, as the schema's markers set them.
const (
	maxRunnerReplicas     = 1000
	maxNodeSelectorLabels = 32
	maxTolerations        = 32
	maxCPUCores           = 1_000_000
	maxTolerationSeconds  = 7 * 24 * 3600
	maxIntOrStringInt     = 1<<31 - 1
)

func (rs *RunnersSpec) validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, InRange(path.Child("replicas"), rs.Replicas, 1, maxRunnerReplicas)...)
	errs = append(errs, syntax(path.Child("image"), rs.Image, maxImageLength, imagePattern)...)
	errs = append(errs, syntax(path.Child("serviceAccountName"), rs.ServiceAccountName, maxDNSSubdomainLength, dnsSubdomainPattern)...)
	errs = append(errs, syntax(path.Child("region"), rs.Region, maxLabelValueLength, labelValuePattern)...)
	errs = append(errs, syntax(path.Child("zone"), rs.Zone, maxLabelValueLength, labelValuePattern)...)
	errs = append(errs, rs.Resources.validate(path.Child("resources"))...)
	errs = append(errs, validateNodeSelector(path.Child("nodeSelector"), rs.NodeSelector)...)
	if n := len(rs.Tolerations); n > maxTolerations {
		errs = append(errs, field.TooMany(path.Child("tolerations"), n, maxTolerations))
	}
	for i := range rs.Tolerations {
		errs = append(errs, rs.Tolerations[i].validate(path.Child("tolerations").Index(i))...)
	}
	return errs
}

func validateNodeSelector(path *field.Path, sel map[string]LabelValue) field.ErrorList {
	var errs field.ErrorList
	if n := len(sel); n > maxNodeSelectorLabels {
		errs = append(errs, field.TooMany(path, n, maxNodeSelectorLabels))
	}
	for _, k := range slices.Sorted(maps.Keys(sel)) {
		if !validLabelKey(k) {
			errs = append(errs, field.Invalid(path, truncated(k), "keys must be label keys: an optional DNS-subdomain prefix (at most 253 characters) and '/', then at most 63 letters, digits, '-', '_' and '.'"))
		}
		errs = append(errs, syntax(path.Child(truncated(k)), string(sel[k]), maxLabelValueLength, labelValuePattern)...)
	}
	return errs
}

func (t *Toleration) validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Key != "" && !validLabelKey(t.Key) {
		errs = append(errs, field.Invalid(path.Child("key"), truncated(t.Key), "must be a label key: an optional DNS-subdomain prefix (at most 253 characters) and '/', then at most 63 letters, digits, '-', '_' and '.'"))
	}
	errs = append(errs, OneOf(path.Child("operator"), t.Operator, "Exists", "Equal")...)
	errs = append(errs, syntax(path.Child("value"), t.Value, maxLabelValueLength, labelValuePattern)...)
	errs = append(errs, OneOf(path.Child("effect"), t.Effect, "NoSchedule", "PreferNoSchedule", "NoExecute")...)
	errs = append(errs, InRange(path.Child("tolerationSeconds"), t.TolerationSeconds, 0, maxTolerationSeconds)...)
	if t.Key == "" && t.Operator != "Exists" {
		errs = append(errs, field.Invalid(path, "", "a toleration without a key must use operator Exists"))
	}
	if t.Value != "" && t.Operator != "" && t.Operator != "Equal" {
		errs = append(errs, field.Invalid(path, "", "value must be empty when operator is Exists"))
	}
	if t.TolerationSeconds != nil && t.Effect != "NoExecute" {
		errs = append(errs, field.Invalid(path, "", "tolerationSeconds applies only to effect NoExecute"))
	}
	return errs
}

func (r *RunnerResources) validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, l := range []struct {
		name string
		q    *ResourceQuantities
	}{{"requests", r.Requests}, {"limits", r.Limits}} {
		if l.q == nil {
			continue
		}
		p := path.Child(l.name)
		errs = append(errs, quantity(p.Child("cpu"), l.q.CPU, cpuPattern, maxCPUCores)...)
		errs = append(errs, quantity(p.Child("memory"), l.q.Memory, bytesPattern, maxIntOrStringInt)...)
		errs = append(errs, quantity(p.Child("ephemeral-storage"), l.q.EphemeralStorage, bytesPattern, maxIntOrStringInt)...)
	}
	if len(errs) > 0 || r.Requests == nil || r.Limits == nil {
		return errs // each quantity must be valid before it is compared
	}
	requests, limits := r.Requests.list(), r.Limits.list()
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		req, hasReq := requests[name]
		lim, hasLim := limits[name]
		if hasReq && hasLim && req.Cmp(lim) > 0 {
			// Pod validation would refuse it only when the Job creates a pod.
			errs = append(errs, field.Invalid(path.Child("requests", string(name)), req.String(), fmt.Sprintf("must not be more than limits.%s (%s)", name, lim.String())))
		}
	}
	return errs
}

// quantity checks a quantity's text (or integer) before anything parses
// it: the check is what keeps resource.ParseQuantity fast.
func quantity(path *field.Path, q *intstr.IntOrString, re interface{ MatchString(string) bool }, maxInt int64) field.ErrorList {
	switch {
	case q == nil:
		return nil
	case q.Type == intstr.Int && q.IntVal == OutOfRangeQuantity:
		return field.ErrorList{field.Invalid(path, "", fmt.Sprintf("an integer quantity must be between 0 and %d; write larger amounts with a suffix, such as 4Gi", maxInt))}
	case q.Type == intstr.Int:
		return InRange(path, ptrTo(int64(q.IntVal)), 0, maxInt)
	case !re.MatchString(q.StrVal):
		return field.ErrorList{field.Invalid(path, truncated(q.StrVal), "must be a short decimal quantity such as 500m, 2, 512Mi or 1.5Gi (no exponent, no sign, at most 3 decimals)")}
	}
	return nil
}

// Requirements are the runner container's resources. A quantity the
// schema would refuse is left out rather than parsed: such a run never
// gets past admission, and the parser must never see its text.
func (r *RunnerResources) Requirements() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: r.Requests.list(), Limits: r.Limits.list()}
}

func (q *ResourceQuantities) list() corev1.ResourceList {
	if q == nil {
		return nil
	}
	out := corev1.ResourceList{}
	add := func(name corev1.ResourceName, v *intstr.IntOrString, re interface{ MatchString(string) bool }) {
		switch {
		case v == nil:
		case v.Type == intstr.Int:
			if v.IntVal >= 0 {
				out[name] = *resource.NewQuantity(int64(v.IntVal), resource.DecimalSI)
			}
		case re.MatchString(v.StrVal):
			if parsed, err := resource.ParseQuantity(v.StrVal); err == nil {
				out[name] = parsed
			}
		}
	}
	add(corev1.ResourceCPU, q.CPU, cpuPattern)
	add(corev1.ResourceMemory, q.Memory, bytesPattern)
	add(corev1.ResourceEphemeralStorage, q.EphemeralStorage, bytesPattern)
	if len(out) == 0 {
		return nil
	}
	return out
}

// PodTolerations are the runners' tolerations as a pod takes them.
func (rs *RunnersSpec) PodTolerations() []corev1.Toleration {
	if rs.Tolerations == nil {
		return nil
	}
	out := make([]corev1.Toleration, len(rs.Tolerations))
	for i, t := range rs.Tolerations {
		out[i] = corev1.Toleration{
			Key: t.Key, Operator: corev1.TolerationOperator(t.Operator), Value: t.Value,
			Effect: corev1.TaintEffect(t.Effect),
		}
		if t.TolerationSeconds != nil {
			out[i].TolerationSeconds = ptrTo(*t.TolerationSeconds)
		}
	}
	return out
}

// PodNodeSelector is the runners' node selector as a pod takes it.
func (rs *RunnersSpec) PodNodeSelector() map[string]string {
	if rs.NodeSelector == nil {
		return nil
	}
	out := make(map[string]string, len(rs.NodeSelector))
	for k, v := range rs.NodeSelector {
		out[k] = string(v)
	}
	return out
}

// syntax checks an optional, bounded, patterned string.
func syntax(path *field.Path, s string, maxLength int, re interface{ MatchString(string) bool }) field.ErrorList {
	switch {
	case len(s) > maxLength:
		return field.ErrorList{field.TooLong(path, truncated(s), maxLength)}
	case s != "" && !re.MatchString(s):
		return field.ErrorList{field.Invalid(path, truncated(s), fmt.Sprintf("must match %v", re))}
	}
	return nil
}

// truncated shortens a refused value for an error message: a 1 MiB value
// must not come back a million bytes long.
func truncated(s string) string {
	const keep = 64
	if len(s) <= keep {
		return s
	}
	return s[:keep] + "..."
}

func ptrTo[T any](v T) *T { return &v }

// OutOfRangeQuantity is the value an integer quantity that an
// intstr.IntOrString cannot hold (beyond int32, or a fraction) decodes
// to. Validate refuses it; Requirements leaves it out.
const OutOfRangeQuantity = math.MinInt32

// UnmarshalJSON reads each quantity as an intstr.IntOrString does, except
// that an integer it cannot hold decodes as OutOfRangeQuantity instead of
// failing: a run stored before the schema bounded integer quantities must
// not fail the manager's typed list of every run. Keys other than cpu,
// memory and ephemeral-storage are refused, as strict decoding would.
func (q *ResourceQuantities) UnmarshalJSON(data []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return err
	}
	*q = ResourceQuantities{}
	for key, raw := range fields {
		var v *intstr.IntOrString
		if err := json.Unmarshal(raw, &v); err != nil {
			var n json.Number
			if json.Unmarshal(raw, &n) != nil {
				return fmt.Errorf("quantity %s: %w", key, err)
			}
			v = ptrTo(intstr.FromInt32(OutOfRangeQuantity))
		}
		switch key {
		case "cpu":
			q.CPU = v
		case "memory":
			q.Memory = v
		case "ephemeral-storage":
			q.EphemeralStorage = v
		default:
			return fmt.Errorf("unknown field %q: resources take cpu, memory and ephemeral-storage", key)
		}
	}
	return nil
}
