package shardrun_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/engine"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/runner/schedule"
	"github.com/spanbench/spanbench/runner/shardrun"
	"github.com/spanbench/spanbench/spanner/workload"
)

func resolved(load v1alpha1.LoadSpec, d time.Duration, wu *v1alpha1.WarmUpSpec) *v1alpha1.WorkloadSpec {
	s := &v1alpha1.WorkloadSpec{Type: v1alpha1.WorkloadYCSB,
		Operations: []v1alpha1.OperationSpec{{Type: v1alpha1.OpRead, Weight: 3}, {Name: "upd", Type: v1alpha1.OpUpdate, Weight: 1}},
		Load:       load, WarmUp: wu}
	if d > 0 {
		s.Duration = &metav1.Duration{Duration: d}
	}
	*s = s.Resolved()
	return s
}

// TestTheResultReadsTheResolvedSpecAsTheAPIWroteIt: the result records the
// spec as the API's JSON (result files keep their shape, and readers that
// know the API decode it back unchanged), and reads from it the warm-up and
// the operations, with the API's defaults.
func TestTheResultReadsTheResolvedSpecAsTheAPIWroteIt(t *testing.T) {
	if result.DefaultWarmUpWindow != v1alpha1.DefaultWarmUpWindow || result.DefaultWarmUpTolerance != v1alpha1.DefaultWarmUpTolerance {
		t.Errorf("the result's warm-up defaults (%d, %d%%) differ from the API's (%d, %d%%)", result.DefaultWarmUpWindow,
			result.DefaultWarmUpTolerance, v1alpha1.DefaultWarmUpWindow, v1alpha1.DefaultWarmUpTolerance)
	}
	for name, tc := range map[string]struct {
		wu   *v1alpha1.WarmUpSpec
		want result.WarmUpSettings
	}{
		"none":  {nil, result.WarmUpSettings{Mode: result.WarmUpNone}},
		"fixed": {&v1alpha1.WarmUpSpec{Mode: v1alpha1.WarmUpFixed, Duration: &metav1.Duration{Duration: 90 * time.Second}}, result.WarmUpSettings{Mode: result.WarmUpFixed, Duration: 90 * time.Second}},
		"auto":  {&v1alpha1.WarmUpSpec{Mode: v1alpha1.WarmUpAuto}, result.WarmUpSettings{Mode: result.WarmUpAuto, Window: 3, TolerancePercent: 10, Max: 5 * time.Minute}},
	} {
		t.Run(name, func(t *testing.T) {
			spec := resolved(v1alpha1.LoadSpec{Rate: ptr.To[int32](100)}, 10*time.Minute, tc.wu)
			recorded, err := protocol.RecordedSpec(spec)
			if err != nil {
				t.Fatal(err)
			}
			got := recorded.Settings()
			if got.WarmUp != tc.want {
				t.Errorf("warm-up read as %+v, want %+v", got.WarmUp, tc.want)
			}
			wantOps := []result.OperationInfo{{Name: "read", Type: "Read"}, {Name: "upd", Type: "Update"}}
			if !reflect.DeepEqual(got.Operations, wantOps) {
				t.Errorf("operations read as %+v, want %+v", got.Operations, wantOps)
			}
			b, err := json.Marshal(&result.Document{Spec: recorded})
			if err != nil {
				t.Fatal(err)
			}
			var back struct {
				Spec v1alpha1.WorkloadSpec `json:"spec"`
			}
			if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(&back.Spec, spec) {
				t.Errorf("the document's spec decodes to %+v (%v), want the spec that ran, %+v", back.Spec, err, *spec)
			}
		})
	}
}

func TestLoadIsTheWholeRunsProfile(t *testing.T) {
	minute := metav1.Duration{Duration: time.Minute}
	for name, tc := range map[string]struct {
		load v1alpha1.LoadSpec
		d    time.Duration
		want engine.Load
	}{
		"rate": {v1alpha1.LoadSpec{Rate: ptr.To[int32](800)}, 2 * time.Minute,
			engine.Load{Profile: schedule.Profile{{From: 800, To: 800, Duration: 2 * time.Minute}}, MaxInFlight: 512}},
		"poisson": {v1alpha1.LoadSpec{Rate: ptr.To[int32](10), Arrivals: v1alpha1.ArrivalsPoisson, MaxInFlight: ptr.To[int32](8)}, time.Minute,
			engine.Load{Profile: schedule.Profile{{From: 10, To: 10, Duration: time.Minute}}, Arrivals: schedule.Poisson, MaxInFlight: 8}},
		"steps": {v1alpha1.LoadSpec{Steps: []v1alpha1.RateStep{{Rate: 100, Duration: minute}, {Rate: 300, Duration: minute}}}, 0,
			engine.Load{Profile: schedule.Profile{{From: 100, To: 100, Duration: time.Minute}, {From: 300, To: 300, Duration: time.Minute}}, MaxInFlight: 512}},
		"ramp then hold": {v1alpha1.LoadSpec{Ramp: &v1alpha1.RampSpec{From: 100, To: 1000, Duration: minute}}, 3 * time.Minute,
			engine.Load{Profile: schedule.Profile{{From: 100, To: 1000, Duration: time.Minute}, {From: 1000, To: 1000, Duration: 2 * time.Minute}}, MaxInFlight: 512}},
		"ramp cut by the run": {v1alpha1.LoadSpec{Ramp: &v1alpha1.RampSpec{From: 100, To: 1000, Duration: metav1.Duration{Duration: 2 * time.Minute}}}, time.Minute,
			engine.Load{Profile: schedule.Profile{{From: 100, To: 550, Duration: time.Minute}}, MaxInFlight: 512}},
		"closed loop": {v1alpha1.LoadSpec{Concurrency: ptr.To[int32](16)}, time.Minute,
			engine.Load{Profile: schedule.Profile{{Duration: time.Minute}}, Concurrency: 16}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := shardrun.Load(resolved(tc.load, tc.d, nil)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Load = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestBindRunsTheSpecsOperationsWithTheirWeights binds a workload of
// stand-in operations and runs it briefly.
func TestBindRunsTheSpecsOperationsWithTheirWeights(t *testing.T) {
	spec := resolved(v1alpha1.LoadSpec{Rate: ptr.To[int32](400)}, time.Second, nil)
	var ops []*workload.Op
	for _, o := range spec.Operations {
		ops = append(ops, workload.Func(o, func(context.Context, *rand.Rand) (workload.Outcome, error) { return workload.Outcome{Rows: 1}, nil }))
	}
	cfg, err := shardrun.Bind("bind", spec, workload.FromOps(ops...), 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Operations) != 2 || cfg.Operations[0].Name != "read" || cfg.Operations[0].Weight != 3 || cfg.Operations[1].Weight != 1 ||
		cfg.Shard != 1 || cfg.Shards != 2 || cfg.Interval != v1alpha1.DefaultInterval {
		t.Fatalf("Bind = %+v; want read (3) and upd (1), shard 1 of 2, the default interval", cfg)
	}
	doc, err := engine.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]uint64{}
	for _, op := range doc.Totals {
		counts[op.Name] = op.OK
	}
	if counts["read"]+counts["upd"] != 200 || counts["read"] < 2*counts["upd"] {
		t.Errorf("shard 1 of 2 at 400/s for 1 s ran %v; want 200 in all, about 3 reads per update", counts)
	}
}
