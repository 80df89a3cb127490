package benchmarkrun

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/runtest"
	"github.com/spanbench/spanbench/spanner/target"
)

func TestRecordInstanceWritesWhatSpannerReported(t *testing.T) {
	run := runtest.Bare("r").Ephemeral("asia1", 3).Obj()
	const op = "projects/p/instances/eph/operations/o1"
	recordInstance(run, target.InstanceInfo{ID: "eph", Config: "asia1", ProcessingUnits: 500, State: "CREATING", Edition: "ENTERPRISE_PLUS",
		CreateOperation: op}, true)
	want := &v1alpha1.TargetStatus{Instance: "eph", InstanceConfig: "asia1", ProcessingUnits: ptr.To[int32](500), Edition: "ENTERPRISE_PLUS",
		InstanceState: "CREATING", Created: true, Database: "ycsb", Dialect: v1alpha1.DialectGoogleSQL, CreateOperation: op}
	if diff := cmp.Diff(want, run.Status.Target); diff != "" {
		t.Errorf("status.target differs (-want +got); the running creation's operation must be kept for the next reconcile:\n%s", diff)
	}
	recordInstance(run, target.InstanceInfo{ID: "eph", Config: "asia1", ProcessingUnits: 500, State: "READY"}, true)
	if got := run.Status.Target.CreateOperation; got != "" {
		t.Errorf("status.target.createOperation = %q once the instance is READY; want it cleared", got)
	}
}

// TestObservedTargetTellsRunnersTheRealInstance: the runners' results
// record the instance Spanner reported, not the spec's guess.
func TestObservedTargetTellsRunnersTheRealInstance(t *testing.T) {
	run := runtest.Bare("r").Obj()
	run.Spec.Target.Instance.Config, run.Spec.Target.Instance.Nodes = "regional-asia-northeast1", ptr.To[int32](1)
	if got := observedTarget(run); !cmp.Equal(got, run.Spec.Target) {
		t.Errorf("without status.target the spec's target is used; got %+v", got)
	}
	run.Status.Target = &v1alpha1.TargetStatus{InstanceConfig: "asia1", Nodes: ptr.To[int32](3), ProcessingUnits: ptr.To[int32](3000)}
	got := observedTarget(run)
	if got.Instance.Config != "asia1" || ptr.Deref(got.Instance.Nodes, 0) != 3 || got.Instance.ProcessingUnits != nil {
		t.Errorf("observed target instance %+v; want asia1 with 3 nodes only", got.Instance)
	}
	if run.Spec.Target.Instance.Config != "regional-asia-northeast1" || *run.Spec.Target.Instance.Nodes != 1 {
		t.Errorf("observedTarget changed the run's spec: %+v", run.Spec.Target.Instance)
	}
	run.Status.Target = &v1alpha1.TargetStatus{InstanceConfig: "asia1", ProcessingUnits: ptr.To[int32](300)}
	if got := observedTarget(run); got.Instance.Nodes != nil || ptr.Deref(got.Instance.ProcessingUnits, 0) != 300 {
		t.Errorf("an instance of 300 processing units reads as %+v", got.Instance)
	}
	if errs := got.Validate(nil); len(errs) > 0 {
		t.Errorf("the observed target does not validate, so runners would refuse it: %v", errs)
	}
}

func TestSplitKeysAreTheSpecsOrEvenlySpaced(t *testing.T) {
	if got := splitKeys(&v1alpha1.SplitPointsSpec{Keys: []string{"a", "b"}}); !cmp.Equal(got, []string{"a", "b"}) {
		t.Errorf("explicit keys became %v", got)
	}
	if got := splitKeys(&v1alpha1.SplitPointsSpec{Count: ptr.To[int32](3)}); !cmp.Equal(got, []string{"40000000", "80000000", "c0000000"}) {
		t.Errorf("3 generated keys are %v", got)
	}
}

func TestOwnerUsesTheDefaultClusterWhenNoneIsSet(t *testing.T) {
	run := runtest.Bare("r").Obj()
	got := (&BenchmarkRunReconciler{}).owner(run)
	want := target.Owner{Cluster: DefaultClusterID, Namespace: "bench", Run: "r", UID: "uid-1"}
	if got != want {
		t.Errorf("owner = %+v, want %+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Error(err)
	}
}
