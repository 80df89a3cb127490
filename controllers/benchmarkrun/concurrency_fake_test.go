package benchmarkrun_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/runtest"
)

// TestReconcileAggregatesOneRunAtATime: while another run's aggregation is
// under way, a run ready to aggregate waits (a requeue, its status
// untouched) instead of holding a second aggregation's memory; once the
// other is done it aggregates (here: nothing arrived, so it fails).
func TestReconcileAggregatesOneRunAtATime(t *testing.T) {
	run := runtest.Run("r").Created(t0).RunnersReady(t0).
		Condition(v1alpha1.ConditionLoadCompleted, metav1.ConditionTrue, v1alpha1.ReasonShardsReported, t0).Obj()
	f := newFakeReconcile(t, interceptor.Funcs{}, run)
	release := f.r.HoldAggregation()
	res, err := f.reconcile(run)
	wantResult(t, res, err, true, false)
	if got := f.run(run); got.IsFinished() || got.Status.Phase != run.Status.Phase {
		t.Fatalf("run %s aggregated while another aggregation was under way: phase %s, conditions %+v", run.Name, got.Status.Phase, got.Status.Conditions)
	}
	release()
	res, err = f.reconcile(run)
	wantResult(t, res, err, true, false)
	wantCondition(t, f.run(run), v1alpha1.ConditionSucceeded, metav1.ConditionFalse, v1alpha1.ReasonResultInvalid)
}
