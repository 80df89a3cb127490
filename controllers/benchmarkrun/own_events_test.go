package benchmarkrun_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/internal/runtest"
)

// TestOnlyARunsOwnFinalizerWritesAreFilteredOut: an update of a run that
// changes only its finalizers (the manager's own patch, made inside a
// reconcile that goes on) queues nothing; any other change does, with the
// finalizers or without.
func TestOnlyARunsOwnFinalizerWritesAreFilteredOut(t *testing.T) {
	old := runtest.Run("r").Created(t0).Obj()
	old.ResourceVersion = "1"
	for _, tc := range []struct {
		name   string
		change func(*v1alpha1.BenchmarkRun)
		queue  bool
	}{
		{"finalizer added", func(r *v1alpha1.BenchmarkRun) { r.Finalizers = []string{v1alpha1.FinalizerInstance} }, false},
		{"nothing but the version", func(*v1alpha1.BenchmarkRun) {}, true},
		{"status", func(r *v1alpha1.BenchmarkRun) { r.Status.Phase = v1alpha1.PhaseRunning }, true},
		{"finalizer and status", func(r *v1alpha1.BenchmarkRun) {
			r.Finalizers = []string{v1alpha1.FinalizerInstance}
			r.Status.Phase = v1alpha1.PhaseRunning
		}, true},
		{"finalizer and spec generation", func(r *v1alpha1.BenchmarkRun) {
			r.Finalizers = []string{v1alpha1.FinalizerInstance}
			r.Generation++
		}, true},
		{"finalizer and deletion", func(r *v1alpha1.BenchmarkRun) {
			r.Finalizers = []string{v1alpha1.FinalizerInstance}
			r.DeletionTimestamp = &metav1.Time{Time: t0.Add(time.Minute)}
		}, true},
		{"finalizer and a label", func(r *v1alpha1.BenchmarkRun) {
			r.Finalizers = []string{v1alpha1.FinalizerInstance}
			r.Labels = map[string]string{"team": "a"}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			updated := old.DeepCopy()
			updated.ResourceVersion = "2"
			tc.change(updated)
			if got := benchmarkrun.RunEventFilters.Run.Update(ctrlevent.UpdateEvent{ObjectOld: old, ObjectNew: updated}); got != tc.queue {
				t.Errorf("the update queued the run: %v, want %v", got, tc.queue)
			}
		})
	}
}

// TestChildCreatesAreFilteredOutAndTheirChangesAreNot: a child's create
// (only the manager creates them, inside its run's reconcile) queues
// nothing; its updates and deletions (a pod's report, a child deleted
// by somebody) queue the run.
func TestChildCreatesAreFilteredOutAndTheirChangesAreNot(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "r-shard-0", Namespace: "ns"}}
	f := benchmarkrun.RunEventFilters.Children
	if f.Create(ctrlevent.CreateEvent{Object: cm}) {
		t.Error("a child's create queued its run")
	}
	if !f.Update(ctrlevent.UpdateEvent{ObjectOld: cm, ObjectNew: cm}) || !f.Delete(ctrlevent.DeleteEvent{Object: cm}) {
		t.Error("a child's update or deletion did not queue its run")
	}
}
