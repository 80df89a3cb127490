package benchmarkcampaign_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/plan"
)

// An iteration's snapshot of its spec, when it is lost, broken or its name
// is taken (snapshot.go).

// twoCells is a campaign of two cells on one database: its runs come one
// at a time, so an iteration is caught between them.
func twoCells(name string) *v1alpha1.BenchmarkCampaign {
	return testCampaign(name, 1, 1, axis("rate", "workload.load.rate", "base=50", "other=100"))
}

// replaceSnapshot replaces the iteration's snapshot with cm, or deletes it
// when cm is nil.
func (f *fakeCampaign) replaceSnapshot(it string, cm *corev1.ConfigMap) {
	f.t.Helper()
	old := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.key.Namespace, Name: plan.SnapshotName(it)}}
	if err := f.stored.Delete(context.Background(), old); err != nil {
		f.t.Fatalf("the snapshot of iteration %s: %v", it, err)
	}
	if cm != nil {
		if err := f.stored.Create(context.Background(), cm); err != nil {
			f.t.Fatal(err)
		}
	}
}

func (f *fakeCampaign) assertFailedSaying(what string) {
	f.t.Helper()
	st := f.campaign().Status
	if st.Iterations[0].Outcome != v1alpha1.IterationFailed || len(f.created) != 1 {
		f.t.Errorf("iteration %+v, runs %v; want Failed with no run made after the first", st.Iterations[0], f.created)
	}
	if cond := meta.FindStatusCondition(st.Conditions, v1alpha1.CampaignReady); cond == nil || !strings.Contains(cond.Message, what) {
		f.t.Errorf("Ready = %+v, want a message saying %q", cond, what)
	}
}

func TestCampaignFailsAnIterationWhoseSnapshotIsGone(t *testing.T) {
	f := newFakeCampaign(t, twoCells("gone"), interceptor.Funcs{})
	f.settle()
	it := f.campaign().Status.Iterations[0].Name
	f.replaceSnapshot(it, nil)
	f.finishRuns(func(*v1alpha1.BenchmarkRun) float64 { return 1 })
	f.settle()
	f.assertFailedSaying("ConfigMap " + plan.SnapshotName(it) + ", is gone")
}

func TestCampaignFailsAnIterationWhoseSnapshotIsUnusable(t *testing.T) {
	f := newFakeCampaign(t, twoCells("broken"), interceptor.Funcs{})
	f.settle()
	c := f.campaign()
	it := c.Status.Iterations[0].Name
	broken := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: plan.SnapshotName(it),
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(c, v1alpha1.GroupVersion.WithKind("BenchmarkCampaign"))}},
		Data: map[string]string{"spec.json": `{"template": 7`}}
	f.replaceSnapshot(it, broken)
	f.finishRuns(func(*v1alpha1.BenchmarkRun) float64 { return 1 })
	f.settle()
	f.assertFailedSaying("unusable snapshot of its spec: ConfigMap " + broken.Name)
}

func TestCampaignRefusesASnapshotNameItDidNotMake(t *testing.T) {
	c := twoCells("squat")
	name := plan.SnapshotName(plan.IterationName(c.Name, t0))
	squatter := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: name}, Data: map[string]string{"x": "y"}}
	f := newFakeCampaign(t, c, interceptor.Funcs{}, squatter)
	f.settle()
	cond := meta.FindStatusCondition(f.campaign().Status.Conditions, v1alpha1.CampaignStalled)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != v1alpha1.ReasonNameConflict || !strings.Contains(cond.Message, "ConfigMap "+name) {
		t.Errorf("Stalled = %+v, want True NameConflict naming ConfigMap %s", cond, name)
	}
	if len(f.created) != 0 {
		t.Errorf("runs %v were made without the iteration's snapshot", f.created)
	}
	got := &corev1.ConfigMap{}
	if err := f.stored.Get(context.Background(), client.ObjectKeyFromObject(squatter), got); err != nil || got.Data["x"] != "y" || len(got.OwnerReferences) != 0 {
		t.Errorf("the squatting ConfigMap was changed: %+v, %v", got, err)
	}
}

func TestCampaignKeepsAReportWrittenBeforeALostStatusWrite(t *testing.T) {
	// The pass that completes the iteration writes its report, then its
	// status write conflicts: the next pass finds the report and ends the
	// iteration with it.
	failStatus := false
	f := newFakeCampaign(t, twoCells("lost"), interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string,
		obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
		if failStatus {
			failStatus = false
			return apierrors.NewConflict(schema.GroupResource{Resource: "benchmarkcampaigns"}, obj.GetName(), fmt.Errorf("injected"))
		}
		return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
	}})
	for range 2 {
		f.settle()
		f.finishRuns(func(*v1alpha1.BenchmarkRun) float64 { return 1 })
	}
	failStatus = true
	f.reconcile()
	if st := f.campaign().Status; st.Iterations[0].Outcome != v1alpha1.IterationRunning || failStatus {
		t.Fatalf("the injected conflict was not met: iterations %+v", st.Iterations)
	}
	f.settle()
	it := f.campaign().Status.Iterations[0]
	if it.Outcome != v1alpha1.IterationSucceeded || it.Report != plan.ReportName(it.Name) {
		t.Errorf("iteration %+v, want Succeeded naming report %s", it, plan.ReportName(it.Name))
	}
}
