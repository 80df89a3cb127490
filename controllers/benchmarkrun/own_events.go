package benchmarkrun

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// A reconcile's own writes come back as watch events for its run, most
// while it is still being reconciled: client-go's work queue then holds
// the run until that reconcile ends and counts the whole of it as a wait
// in the queue, for a pass that finds nothing new. The two kinds of such
// events that nothing else produces are dropped here
// (docs/performance.md, "No reconcile waits on Spanner").

// ignoreOwnCreates drops the create events of a run's children. Only the
// manager creates them (ensure), inside a reconcile of their run that
// goes on after the create. Their updates and deletions (a pod reporting
// in its ConfigMap, a Job's status, a child somebody deleted) still queue
// the run; a manager that starts queues every run from the runs' own
// create events.
var ignoreOwnCreates = predicate.Funcs{CreateFunc: func(ctrlevent.CreateEvent) bool { return false }}

// ignoreFinalizerOnly drops the update events of a run that change only
// its finalizers (and the resource version and managed fields that go
// with any write): only the manager's reconciles set and remove them,
// and go on after it. Every other change, the status included, still
// queues the run.
var ignoreFinalizerOnly = predicate.Funcs{UpdateFunc: func(e ctrlevent.UpdateEvent) bool {
	o, okOld := e.ObjectOld.(*v1alpha1.BenchmarkRun)
	n, okNew := e.ObjectNew.(*v1alpha1.BenchmarkRun)
	if !okOld || !okNew || slices.Equal(o.Finalizers, n.Finalizers) {
		return true
	}
	if o.GetGeneration() != n.GetGeneration() || !o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp()) ||
		!equality.Semantic.DeepEqual(o.GetLabels(), n.GetLabels()) || !equality.Semantic.DeepEqual(o.GetAnnotations(), n.GetAnnotations()) {
		return true
	}
	return !equality.Semantic.DeepEqual(o.Status, n.Status)
}}
