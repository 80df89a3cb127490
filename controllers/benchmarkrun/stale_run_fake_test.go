package benchmarkrun_test

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/internal/runtest"
)

// staleCache serves the run from a copy, as a cache that has not yet
// received the run's last write does, while stale is set; and counts the
// writes made through it.
type staleCache struct {
	stale  *v1alpha1.BenchmarkRun
	writes int
}

func (s *staleCache) funcs() interceptor.Funcs {
	return interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if run, ok := obj.(*v1alpha1.BenchmarkRun); ok && s.stale != nil {
				s.stale.DeepCopyInto(run)
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			s.writes++
			return c.Create(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			s.writes++
			return c.Patch(ctx, obj, patch, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			s.writes++
			return c.Update(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			s.writes++
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	}
}

// TestAPassOnTheVersionItsStatusWriteReplacedEndsAtOnce: a reconcile that
// reads its run from a cache that does not have the run's last status
// write yet ends at once, with no write (its status write, locked on the
// replaced version, would be refused after all its other calls); it asks
// to be reconciled again, and once the cache has the write, the next pass
// goes on.
func TestAPassOnTheVersionItsStatusWriteReplacedEndsAtOnce(t *testing.T) {
	run := runtest.Run("r").Created(t0).Obj()
	cache := &staleCache{}
	f := newFakeReconcile(t, cache.funcs(), run)
	benchmarkrun.TrackStatusWritesForTest(f.r)
	f.spanner.plan = benchmarkrun.DatasetPlan{Source: v1alpha1.DatasetExisting}
	before := f.run(run)
	if _, err := f.reconcile(run); err != nil {
		t.Fatal(err)
	}
	if after := f.run(run); after.ResourceVersion == before.ResourceVersion {
		t.Fatalf("the first pass wrote nothing (version %s): the test needs a status write", after.ResourceVersion)
	}

	cache.stale, cache.writes = before, 0
	res, err := f.reconcile(run)
	if err != nil || res.RequeueAfter != benchmarkrun.StaleRunRecheck {
		t.Errorf("a pass on the replaced version returned %+v, %v; want a requeue after %s", res, err, benchmarkrun.StaleRunRecheck)
	}
	if cache.writes != 0 {
		t.Errorf("a pass on the replaced version made %d writes; want none", cache.writes)
	}

	cache.stale = nil
	if _, err := f.reconcile(run); err != nil {
		t.Fatal(err)
	}
	if cache.writes == 0 {
		t.Error("the pass after the cache caught up made no write: the run was left stuck")
	}
}

// TestARunsUpdateIsNewsUntilAPassReadsIt: the event of the run's own
// status write queues the run while no pass has read the version it
// brings (the next pass needs it); once a pass has read that version, its
// event is dropped (it would queue a pass that learns nothing, behind the
// pass under way); a later version, somebody's edit, queues the run.
func TestARunsUpdateIsNewsUntilAPassReadsIt(t *testing.T) {
	run := runtest.Run("r").Created(t0).Obj()
	f := newFakeReconcile(t, interceptor.Funcs{}, run)
	benchmarkrun.TrackStatusWritesForTest(f.r)
	filter := f.r.RunEventFilterForTest()
	f.spanner.plan = benchmarkrun.DatasetPlan{Source: v1alpha1.DatasetExisting}
	before := f.run(run)
	if _, err := f.reconcile(run); err != nil {
		t.Fatal(err)
	}
	written := f.run(run)
	echo := ctrlevent.UpdateEvent{ObjectOld: before, ObjectNew: written}
	if !filter.Update(echo) {
		t.Fatal("the event of the run's status write was dropped before any pass read its version: the run would wait for a pass that never comes")
	}
	if _, err := f.reconcile(run); err != nil { // this pass reads the written version
		t.Fatal(err)
	}
	if filter.Update(echo) {
		t.Error("the event of a version a pass has read queued the run")
	}
	edited := f.run(run)
	edited.Labels = map[string]string{"edited": "by-a-user"}
	if err := f.stored.Update(context.Background(), edited); err != nil {
		t.Fatal(err)
	}
	if !filter.Update(ctrlevent.UpdateEvent{ObjectOld: f.run(run), ObjectNew: f.run(run)}) {
		t.Error("an edit of the run, a version no pass has read, was dropped")
	}
}

// TestAPassThatWritesItsStatusLeavesItsNextStepToTheWritesEvent: under a
// manager, a pass whose status write asks for the next step at once sets
// no timer (the write's event queues the run when the cache has it; a
// timer would fire during that next pass and queue the run behind it);
// a pass whose status write was refused keeps its quick requeue, and a
// reconciler driven by hand, which gets no event, keeps the timer.
func TestAPassThatWritesItsStatusLeavesItsNextStepToTheWritesEvent(t *testing.T) {
	for _, tc := range []struct {
		name        string
		managed     bool
		funcs       interceptor.Funcs
		wantRequeue bool
	}{
		{"under a manager", true, interceptor.Funcs{}, false},
		{"driven by hand", false, interceptor.Funcs{}, true},
		{"status write refused", true, statusPatchFailing(apierrors.NewConflict(schema.GroupResource{Group: v1alpha1.GroupVersion.Group, Resource: "benchmarkruns"}, "r", errors.New("stale (injected)")), 1, nil), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := runtest.Run("r").Created(t0).Obj()
			f := newFakeReconcile(t, tc.funcs, run)
			if tc.managed {
				benchmarkrun.TrackStatusWritesForTest(f.r)
			}
			f.spanner.plan = benchmarkrun.DatasetPlan{Source: v1alpha1.DatasetExisting}
			res, err := f.reconcile(run)
			wantResult(t, res, err, tc.wantRequeue, false)
		})
	}
}
