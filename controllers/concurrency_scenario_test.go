package controllers_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers"
)

// stallingPreparer is the real preparer, except that preparing run
// stalled's database takes until release is closed (or the call's
// deadline): Cloud Spanner's database creation, which takes tens of
// seconds, cannot run here.
type stallingPreparer struct {
	controllers.SpannerPreparer
	stalled string
	entered chan struct{}
	release chan struct{}
}

func (p *stallingPreparer) Prepare(ctx context.Context, run *v1alpha1.BenchmarkRun, w *v1alpha1.WorkloadSpec) (controllers.DatasetPlan, error) {
	if run.Name == p.stalled {
		select {
		case p.entered <- struct{}{}:
		default:
		}
		select {
		case <-p.release:
		case <-ctx.Done():
			return controllers.DatasetPlan{}, ctx.Err()
		}
	}
	return p.SpannerPreparer.Prepare(ctx, run, w)
}

// TestASlowPrepareDoesNotStallOtherRuns: while one run's database is being
// prepared (a reconcile held for up to two minutes on Cloud Spanner),
// another run is still reconciled and gets its target ready.
func TestASlowPrepareDoesNotStallOtherRuns(t *testing.T) {
	h := newHarness(t)
	p := &stallingPreparer{stalled: "stalled", entered: make(chan struct{}, 1), release: make(chan struct{})}
	h.startManager(p)
	t.Cleanup(func() { close(p.release) }) // runs before the manager stops
	stalled := h.runSpec("stalled", 1)
	if err := h.c.Create(context.Background(), stalled); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("run stalled's database was not being prepared within 30 s")
	}
	free := h.runSpec("free", 1)
	if err := h.c.Create(context.Background(), free); err != nil {
		t.Fatal(err)
	}
	h.eventually("run free gets its target ready while run stalled's database is still being prepared", 30*time.Second, func() bool {
		got := &v1alpha1.BenchmarkRun{}
		if err := h.c.Get(context.Background(), client.ObjectKeyFromObject(free), got); err != nil {
			return false
		}
		c := h.condition(got, v1alpha1.ConditionTargetReady)
		return c != nil && c.Status == metav1.ConditionTrue
	})
}
