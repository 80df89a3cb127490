package benchmarkrun_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/internal/runtest"
	"github.com/spanbench/spanbench/runner/protocol"
)

// The tests in this file check which of the watch events of a run's
// children queue the run: the manager's own writes (expected by the
// reconciler before it sends them) are dropped, once; the same kind of
// write by anybody else — a pod reporting, a user editing or deleting —
// still queues it. The events are the fake API server's own, read from
// its watch as an informer would and handed to the watches' filters.

// childEvents lists and watches list's kind in the fake API server, as an
// informer does, and turns what the watch sends into the events an
// informer hands the controller's filters.
type childEvents struct {
	t    *testing.T
	w    watch.Interface
	last map[types.UID]client.Object
}

func watchChildren(t *testing.T, f *fakeReconcile, list client.ObjectList) *childEvents {
	t.Helper()
	if err := f.stored.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	last := map[types.UID]client.Object{}
	if err := meta.EachListItem(list, func(o runtime.Object) error {
		obj := o.(client.Object)
		last[obj.GetUID()] = obj
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	w, err := f.stored.Watch(context.Background(), list)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return &childEvents{t: t, w: w, last: last}
}

// queued hands every event sent so far to filter, in order, and returns
// for each "Type name: queued" or "Type name: dropped".
func (c *childEvents) queued(filter predicate.Predicate) []string {
	c.t.Helper()
	var out []string
	for {
		var e watch.Event
		select {
		case e = <-c.w.ResultChan():
		case <-time.After(200 * time.Millisecond):
			return out // the fake sends its events as it writes: none is late
		}
		obj, ok := e.Object.(client.Object)
		if !ok {
			c.t.Fatalf("watch event %s holds %T", e.Type, e.Object)
		}
		var q bool
		switch e.Type {
		case watch.Added:
			q = filter.Create(ctrlevent.CreateEvent{Object: obj})
		case watch.Modified:
			q = filter.Update(ctrlevent.UpdateEvent{ObjectOld: c.last[obj.GetUID()], ObjectNew: obj})
		case watch.Deleted:
			q = filter.Delete(ctrlevent.DeleteEvent{Object: obj})
		default:
			c.t.Fatalf("unexpected watch event %s", e.Type)
		}
		c.last[obj.GetUID()] = obj
		verdict := "dropped"
		if q {
			verdict = "queued"
		}
		out = append(out, fmt.Sprintf("%s %s: %s", e.Type, obj.GetName(), verdict))
	}
}

func wantQueued(t *testing.T, got []string, want ...string) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the children's events:\n got %q\nwant %q", got, want)
	}
}

// TestTheStartBarriersOwnPatchIsDroppedAndOthersWritesQueueTheRun: the
// start barrier's patch of the control ConfigMap (made inside a reconcile
// that goes on, which has what it wrote) queues nothing; a write of the
// same ConfigMap by somebody else, and a runner's report in its shard
// ConfigMap, queue the run.
func TestTheStartBarriersOwnPatchIsDroppedAndOthersWritesQueueTheRun(t *testing.T) {
	ctx := context.Background()
	run := runtest.Run("r").Created(t0).Obj()
	control := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: protocol.ControlConfigMapName(run.Name), UID: "control-uid"}}
	shard := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: protocol.ShardConfigMapName(run.Name, 0), UID: "shard-uid"}}
	f := newFakeReconcile(t, interceptor.Funcs{}, run, control, shard)
	filter := f.r.ChildEventFiltersForTest()
	events := watchChildren(t, f, &corev1.ConfigMapList{})

	if err := benchmarkrun.PublishStartForTest(ctx, f.r, run); err != nil {
		t.Fatal(err)
	}
	wantQueued(t, events.queued(filter), "MODIFIED r-control: dropped")

	edit := &corev1.ConfigMap{}
	if err := f.stored.Get(ctx, client.ObjectKeyFromObject(control), edit); err != nil {
		t.Fatal(err)
	}
	edit.Data["edited-by"] = "somebody"
	if err := f.stored.Update(ctx, edit); err != nil {
		t.Fatal(err)
	}
	report := &corev1.ConfigMap{}
	if err := f.stored.Get(ctx, client.ObjectKeyFromObject(shard), report); err != nil {
		t.Fatal(err)
	}
	report.Data = map[string]string{"ready": "yes"}
	if err := f.stored.Update(ctx, report); err != nil {
		t.Fatal(err)
	}
	wantQueued(t, events.queued(filter), "MODIFIED r-control: queued", "MODIFIED "+shard.Name+": queued")
}

// TestTheWrapUpsOwnJobDeletionsAreDroppedAndAnotherDeletionQueuesTheRun:
// the wrap-up's deletions of the loader and runner Jobs queue nothing;
// the deletion of a Job by the same name that somebody else made (another
// UID) queues the run.
func TestTheWrapUpsOwnJobDeletionsAreDroppedAndAnotherDeletionQueuesTheRun(t *testing.T) {
	ctx := context.Background()
	run := runtest.Run("r").Created(t0).Obj()
	job := func(name string, uid types.UID) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: name, UID: uid}}
	}
	f := newFakeReconcile(t, interceptor.Funcs{}, run,
		job(v1alpha1.LoaderJobName(run), "loader-uid"), job(v1alpha1.RunnerJobName(run), "runners-uid"))
	filter := f.r.ChildEventFiltersForTest()
	events := watchChildren(t, f, &batchv1.JobList{})

	if err := benchmarkrun.CleanupRunnersForTest(ctx, f.r, run); err != nil {
		t.Fatal(err)
	}
	wantQueued(t, events.queued(filter), "DELETED r-loader: dropped", "DELETED r-runners: dropped")

	again := job(v1alpha1.RunnerJobName(run), "somebody-elses-uid")
	if err := f.stored.Create(ctx, again); err != nil {
		t.Fatal(err)
	}
	if err := f.stored.Delete(ctx, again); err != nil {
		t.Fatal(err)
	}
	wantQueued(t, events.queued(filter), "ADDED r-runners: dropped", "DELETED r-runners: queued")
}

// TestAnOwnWriteIsDroppedOnceAndAFailedOneNotAtAll: the event of an
// update the manager made is dropped once (the same event handed over
// again, as a relist would, queues the run); an update that the API
// server refused (a stale version) expects nothing, so the event of the
// write that beat it queues the run.
func TestAnOwnWriteIsDroppedOnceAndAFailedOneNotAtAll(t *testing.T) {
	ctx := context.Background()
	run := runtest.Run("r").Created(t0).Obj()
	report := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: v1alpha1.ResultConfigMapName(run), UID: "report-uid"}}
	f := newFakeReconcile(t, interceptor.Funcs{}, run, report)
	filter := f.r.ChildEventFiltersForTest()
	events := watchChildren(t, f, &corev1.ConfigMapList{})

	read := &corev1.ConfigMap{}
	if err := f.stored.Get(ctx, client.ObjectKeyFromObject(report), read); err != nil {
		t.Fatal(err)
	}
	mine := read.DeepCopy()
	mine.Data = map[string]string{"server": "collected"}
	if err := benchmarkrun.OwnWriterForTest(f.r).Update(ctx, mine); err != nil {
		t.Fatal(err)
	}
	old := events.last[report.UID]
	got := events.queued(filter)
	wantQueued(t, got, "MODIFIED "+report.Name+": dropped")
	if filter.Update(ctrlevent.UpdateEvent{ObjectOld: old, ObjectNew: events.last[report.UID]}) != true {
		t.Error("the own update's event, handed over a second time, was dropped again")
	}

	theirs := mine.DeepCopy()
	theirs.Data["edited-by"] = "somebody"
	if err := f.stored.Update(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	stale := mine.DeepCopy() // the version before theirs
	stale.Data["server"] = "again"
	if err := benchmarkrun.OwnWriterForTest(f.r).Update(ctx, stale); err == nil {
		t.Fatal("an update on a stale version was applied")
	}
	wantQueued(t, events.queued(filter), "MODIFIED "+report.Name+": queued")
}
