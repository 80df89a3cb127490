package customcheck_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/customcheck"
)

// searchWorkload is a valid capacity search: at most 18 steps of 30s
// (capacity.Params.MaxSteps: 6 rates, 3 trials each), 9m in 10m.
const searchWorkload = `
type: YCSB
operations: [{type: Read, weight: 1}, {type: Update, weight: 1}]
duration: 10m
load:
  search: {from: 10, max: 80, resolution: 10, stepDuration: 20s, warmUp: 10s, slo: ["p99(read) <= 20ms", "errors <= 1%"]}
`

// TestSearchRefusals: each broken search is refused at its own field,
// with what is wrong said; the valid one passes. The API's Validate,
// which cannot link result/capacity, leaves every one of these to Search.
func TestSearchRefusals(t *testing.T) {
	for _, tc := range []struct {
		name        string
		edit        func(w *v1alpha1.WorkloadSpec)
		field, text string
	}{
		{"valid", func(*v1alpha1.WorkloadSpec) {}, "", ""},
		{"unknown operation", func(w *v1alpha1.WorkloadSpec) { w.Load.Search.SLO[0] = "p99(scan) <= 20ms" },
			"spec.workload.load.search.slo[0]", "not an operation of the workload"},
		{"condition does not parse", func(w *v1alpha1.WorkloadSpec) { w.Load.Search.SLO[1] = "errors < lots" },
			"spec.workload.load.search.slo[1]", "want <figure> <= <bound>"},
		{"from above max", func(w *v1alpha1.WorkloadSpec) { w.Load.Search.From = 100 },
			"spec.workload.load.search.from", "must be at most max (80)"},
		{"resolution zero", func(w *v1alpha1.WorkloadSpec) { w.Load.Search.Resolution = 0 },
			"spec.workload.load.search.resolution", "must be a positive rate"},
		{"worst case past the duration", func(w *v1alpha1.WorkloadSpec) { w.Duration.Duration = w.Duration.Duration / 2 },
			"spec.workload.load.search.stepDuration", "the search may take 18 steps of 30s, 9m0s, more than the limit of 5m0s"},
		{"step not whole intervals", func(w *v1alpha1.WorkloadSpec) { w.Load.Search.StepDuration.Duration += 5e9 },
			"spec.workload.load.search.stepDuration", "whole number of the workload's intervals"},
		{"run warm-up beside the steps'", func(w *v1alpha1.WorkloadSpec) { w.WarmUp = &v1alpha1.WarmUpSpec{Mode: v1alpha1.WarmUpAuto} },
			"spec.workload.warmUp.mode", "warms each step up itself"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w v1alpha1.WorkloadSpec
			if err := yaml.UnmarshalStrict([]byte(searchWorkload), &w); err != nil {
				t.Fatal(err)
			}
			tc.edit(&w)
			if errs := w.Validate(field.NewPath("spec", "workload")); tc.field != "" && hasAt(errs, tc.field) {
				t.Errorf("the API's Validate refuses it itself (%v): the rule would have two owners", errs)
			}
			errs := customcheck.Search(field.NewPath("spec", "workload"), &w, false)
			if tc.field == "" {
				if len(errs) > 0 {
					t.Fatalf("a valid search refused: %v", errs)
				}
				return
			}
			if len(errs) != 1 || errs[0].Field != tc.field || !strings.Contains(errs[0].Error(), tc.text) {
				t.Errorf("got %v; want one error at %s saying %q", errs, tc.field, tc.text)
			}
		})
	}
}

func hasAt(errs field.ErrorList, path string) bool {
	for _, e := range errs {
		if e.Field == path {
			return true
		}
	}
	return false
}

// TestSearchWorstCaseCountsEachStepsCPUWait: a search with a cpu
// condition on Cloud Spanner waits after each step, up to 3 minutes, for
// Cloud Monitoring's minutes of it before it is judged, so admission's
// worst case (Run, as the webhook and `spanbench run -f` call it) is
// MaxSteps × (warm-up + step + 3m): a duration one second short of it is
// refused at stepDuration, saying so, and that worst case exactly is
// admitted. On the emulator, which reports no CPU, the steps alone count.
func TestSearchWorstCaseCountsEachStepsCPUWait(t *testing.T) {
	var w v1alpha1.WorkloadSpec
	if err := yaml.UnmarshalStrict([]byte(searchWorkload), &w); err != nil {
		t.Fatal(err)
	}
	w.Load.Search.SLO = append(w.Load.Search.SLO, "cpu <= 65%")
	const steps = 18 // capacity.Params.MaxSteps of searchWorkload: 6 rates, 3 trials each
	worst := steps * (30*time.Second + 3*time.Minute)
	run := func(duration time.Duration, emulator string) field.ErrorList {
		r := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "search"}, Spec: v1alpha1.BenchmarkRunSpec{
			Target:   v1alpha1.TargetSpec{Project: "spanbench-test", Instance: v1alpha1.InstanceSpec{Name: "bench"}, Database: "ycsb", EmulatorHost: emulator},
			Workload: *w.DeepCopy()}}
		r.Spec.Workload.Duration = &metav1.Duration{Duration: duration}
		return customcheck.Run(r)
	}
	errs := run(worst-time.Second, "")
	if len(errs) != 1 || errs[0].Field != "spec.workload.load.search.stepDuration" ||
		!strings.Contains(errs[0].Error(), "the search may take 18 steps of 3m30s, 1h3m0s, more than the limit of 1h2m59s") ||
		!strings.Contains(errs[0].Error(), "up to 3m0s waiting after it for Cloud Monitoring's CPU minutes") {
		t.Errorf("steps and their CPU waits a second over the duration on Cloud Spanner: %v; want one refusal at stepDuration counting the 3m waits", errs)
	}
	if errs := run(worst, ""); len(errs) > 0 {
		t.Errorf("steps and their CPU waits within the duration: %v", errs)
	}
	if errs := run(steps*30*time.Second, "localhost:9010"); len(errs) > 0 {
		t.Errorf("on the emulator, which reports no CPU, the steps alone fit: %v", errs)
	}
	w.Load.Search.SLO = w.Load.Search.SLO[:2]
	if errs := run(steps*30*time.Second, ""); len(errs) > 0 {
		t.Errorf("without a cpu condition the steps alone fit on Cloud Spanner: %v", errs)
	}
}
