package v1alpha1

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// hostileQuantities are texts of the Kubernetes quantity grammar that
// resource.ParseQuantity takes minutes and gigabytes to read (measured:
// neither finishes within 3 s), 12 and 11 characters long.
var hostileQuantities = []string{"1e-999999999", ".5e-9999999"}

// TestTypedDecodeOfAHostileQuantityIsFast decodes a run carrying a hostile
// quantity the way the manager's cache does (the scheme's deserializer)
// and validates it, within a deadline: with runners.resources a
// corev1.ResourceRequirements the decode alone never returns.
func TestTypedDecodeOfAHostileQuantityIsFast(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	decoder := serializer.NewCodecFactory(scheme).UniversalDeserializer()
	for _, q := range hostileQuantities {
		doc := `{"apiVersion":"bench.spanbench.io/v1alpha1","kind":"BenchmarkRun","metadata":{"name":"r"},"spec":{` +
			`"target":{"project":"my-project","instance":{"name":"bench"},"database":"db"},` +
			`"workload":{"type":"YCSB","operations":[{"type":"Read","weight":1}],"load":{"rate":1},"duration":"1m"},` +
			`"runners":{"resources":{"requests":{"cpu":"` + q + `"},"limits":{"memory":"` + q + `"}}}}}`
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		done := make(chan string, 1)
		go func() {
			obj, _, err := decoder.Decode([]byte(doc), nil, nil)
			if err != nil {
				done <- "decode: " + err.Error()
				return
			}
			run := obj.(*BenchmarkRun)
			done <- run.Validate().ToAggregate().Error()
		}()
		select {
		case got := <-done:
			if !strings.Contains(got, "spec.runners.resources.requests.cpu") || !strings.Contains(got, "spec.runners.resources.limits.memory") {
				t.Errorf("quantity %q: want Validate to refuse cpu and memory, got %s", q, got)
			}
		case <-ctx.Done():
			t.Errorf("quantity %q: decoding and validating a run did not finish within 10 s", q)
		}
		cancel()
	}
}

func TestRequirementsAreThePodsResources(t *testing.T) {
	r := RunnerResources{
		Requests: &ResourceQuantities{CPU: ptr.To(intstr.FromString("250m")), Memory: ptr.To(intstr.FromInt32(1 << 30))},
		Limits:   &ResourceQuantities{CPU: ptr.To(intstr.FromInt32(2)), EphemeralStorage: ptr.To(intstr.FromString("1.5Gi"))},
	}
	got := r.Requirements()
	want := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceEphemeralStorage: resource.MustParse("1.5Gi")},
	}
	for name, pair := range map[string][2]corev1.ResourceList{"requests": {got.Requests, want.Requests}, "limits": {got.Limits, want.Limits}} {
		if len(pair[0]) != len(pair[1]) {
			t.Errorf("%s = %v, want %v", name, pair[0], pair[1])
		}
		for k, v := range pair[1] {
			if g, ok := pair[0][k]; !ok || g.Cmp(v) != 0 {
				t.Errorf("%s[%s] = %v, want %v", name, k, g.String(), v.String())
			}
		}
	}
	if (&RunnerResources{}).Requirements().Requests != nil {
		t.Error("no resources must give no requests")
	}
	hostile := RunnerResources{Requests: &ResourceQuantities{CPU: ptr.To(intstr.FromString(hostileQuantities[0]))}}
	if got := hostile.Requirements(); got.Requests != nil {
		t.Errorf("a quantity the schema refuses was parsed into %v", got.Requests)
	}
}

func TestSaturatingSumNeverWraps(t *testing.T) {
	const maxD = time.Duration(1<<63 - 1)
	for _, tc := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{[]time.Duration{time.Minute, time.Hour}, time.Hour + time.Minute},
		{[]time.Duration{maxD / 2, maxD / 2, maxD / 2}, maxD},
		{[]time.Duration{2562047 * time.Hour, 2562047 * time.Hour}, maxD},
		{[]time.Duration{-maxD, -maxD}, -maxD - 1},
		{nil, 0},
	} {
		if got := SaturatingSum(tc.in...); got != tc.want {
			t.Errorf("SaturatingSum(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	w := WorkloadSpec{Load: LoadSpec{Steps: []RateStep{{Rate: 1, Duration: *dur("2562047h")}, {Rate: 1, Duration: *dur("2562047h")}, {Rate: 1, Duration: *dur("2562047h")}}}}
	if got := w.TotalDuration(); got != maxD {
		t.Errorf("three 292-year steps last %v; want the largest duration, not a wrapped one", got)
	}
}

// TestARunStoredWithAHugeIntegerQuantityStillDecodes: a run stored before
// the schema bounded integer quantities (memory: 4294967296, or a
// fraction) must decode, or the manager's typed list of every run fails;
// Validate refuses it, and the pod gets no such quantity.
func TestARunStoredWithAHugeIntegerQuantityStillDecodes(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	decoder := serializer.NewCodecFactory(scheme).UniversalDeserializer()
	doc := `{"apiVersion":"bench.spanbench.io/v1alpha1","kind":"BenchmarkRun","metadata":{"name":"r"},"spec":{` +
		`"target":{"project":"my-project","instance":{"name":"bench"},"database":"db"},` +
		`"workload":{"type":"YCSB","operations":[{"type":"Read","weight":1}],"load":{"rate":1},"duration":"1m"},` +
		`"runners":{"resources":{"requests":{"cpu":0.5,"memory":4294967296},"limits":{"memory":"1Gi"}}}}}`
	obj, _, err := decoder.Decode([]byte(doc), nil, nil)
	if err != nil {
		t.Fatalf("the stored run does not decode: %v", err)
	}
	run := obj.(*BenchmarkRun)
	got := run.Validate().ToAggregate()
	for _, f := range []string{"spec.runners.resources.requests.cpu", "spec.runners.resources.requests.memory"} {
		if got == nil || !strings.Contains(got.Error(), f) {
			t.Errorf("Validate = %v; want a refusal at %s", got, f)
		}
	}
	req := run.Spec.Runners.Resources.Requirements()
	if len(req.Requests) != 0 || req.Limits.Memory().String() != "1Gi" {
		t.Errorf("Requirements = %v; want no requests and the 1Gi limit", req)
	}
}
