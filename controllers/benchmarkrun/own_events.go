package benchmarkrun

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
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

// The manager's own deletions and updates of a run's children come back
// as watch events too: the wrap-up's deletion of the loader and runner
// Jobs, the start barrier's patch of the control ConfigMap, the server
// figures' update of the report. Others write the same objects (a pod
// reports in its ConfigMap, somebody deletes a Job), so these events are
// not dropped by kind: each write the manager makes through ownWriter is
// expected before it is sent (kube-controller-manager's expectations:
// its event may come back before the write's response does), and the one
// event that is exactly that write is dropped, once. A write that fails
// is no longer expected; the reconcile that made it returns its error,
// so its run is reconciled again whatever event came meanwhile.

// ownWritesKeptFor is how long an expectation whose event never came (a
// watch that relisted past it) is kept before it is forgotten.
const ownWritesKeptFor = 10 * time.Minute

// ownWrite names one expected event: the object's UID and the resource
// version the write was locked on, whose one successor the write makes
// (an update event's old version); "" for a deletion.
type ownWrite struct {
	uid  types.UID
	from string
}

// ownWrites holds the expectations of the manager's writes whose events
// have not come yet. A nil *ownWrites expects nothing and drops nothing
// (reconcilers built by hand in tests, without SetupWithManager).
type ownWrites struct {
	clock    clock.PassiveClock
	mu       sync.Mutex
	expected map[ownWrite]time.Time
}

func newOwnWrites(clk clock.PassiveClock) *ownWrites {
	return &ownWrites{clock: clk, expected: map[ownWrite]time.Time{}}
}

// expect records w as about to be written, and forgets expectations
// older than ownWritesKeptFor.
func (o *ownWrites) expect(w ownWrite) {
	if o == nil || w.uid == "" {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.clock.Now()
	for k, at := range o.expected {
		if now.Sub(at) > ownWritesKeptFor {
			delete(o.expected, k)
		}
	}
	o.expected[w] = now
}

// take reports whether w was expected, and forgets it: a version has one
// successor, an object one deletion. A write that failed is taken back
// with it too.
func (o *ownWrites) take(w ownWrite) bool {
	if o == nil {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.expected[w]
	delete(o.expected, w)
	return ok
}

// ignoreOwnWrites drops the update and delete events of children that
// are exactly a write the manager made through ownWriter; every other
// update and deletion still queues the run.
func (o *ownWrites) ignoreOwnWrites() predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e ctrlevent.UpdateEvent) bool {
			return !o.take(ownWrite{e.ObjectNew.GetUID(), e.ObjectOld.GetResourceVersion()})
		},
		DeleteFunc: func(e ctrlevent.DeleteEvent) bool { return !o.take(ownWrite{uid: e.Object.GetUID()}) },
	}
}

// childEventFilters are the filters of the watches of a run's children.
func (r *BenchmarkRunReconciler) childEventFilters() []predicate.Predicate {
	return []predicate.Predicate{ignoreOwnCreates, r.own.ignoreOwnWrites()}
}

// ownWriter is the client of the manager's writes of a run's children
// whose watch events the run's controller drops: it expects each write
// in own. Only writes locked on the object's version are expected (an
// update of an object read with its version, a patch with
// client.MergeFromWithOptimisticLock): the API server applies them to
// that version or refuses them, so the event whose old object has that
// version is theirs. Other patches go through unexpected.
type ownWriter struct {
	client.Client
	own *ownWrites
}

// ownWriter writes children through r's client, expecting the writes.
func (r *BenchmarkRunReconciler) ownWriter() ownWriter { return ownWriter{r.Client, r.own} }

// Update updates obj, locked on the version it carries.
func (w ownWriter) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	ow := ownWrite{obj.GetUID(), obj.GetResourceVersion()}
	if ow.from == "" {
		return w.Client.Update(ctx, obj, opts...) // not locked: not expected
	}
	w.own.expect(ow)
	err := w.Client.Update(ctx, obj, opts...)
	if err != nil {
		w.own.take(ow)
	}
	return err
}

// Patch patches obj; a patch locked on obj's version is expected.
func (w ownWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	ow := ownWrite{obj.GetUID(), obj.GetResourceVersion()}
	if ow.from == "" || !lockedOn(patch, obj, ow.from) {
		return w.Client.Patch(ctx, obj, patch, opts...)
	}
	w.own.expect(ow)
	err := w.Client.Patch(ctx, obj, patch, opts...)
	if err != nil {
		w.own.take(ow)
	}
	return err
}

// lockedOn reports whether patch carries version as its precondition.
func lockedOn(patch client.Patch, obj client.Object, version string) bool {
	data, err := patch.Data(obj)
	if err != nil {
		return false
	}
	var p struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	return json.Unmarshal(data, &p) == nil && p.Metadata.ResourceVersion == version
}

// Delete deletes obj, which must carry its UID (read from the cache): the
// deletion of an object by the same name and another UID is somebody
// else's. NotFound keeps the expectation: the object is gone as the
// manager meant, and its deletion's event asks nothing more of the run.
func (w ownWriter) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	ow := ownWrite{uid: obj.GetUID()}
	w.own.expect(ow)
	err := w.Client.Delete(ctx, obj, opts...)
	if err != nil && !apierrors.IsNotFound(err) {
		w.own.take(ow)
	}
	return err
}
