package benchmarkrun

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/statuswrite"
	"github.com/spanbench/spanbench/spanner/target"
)

// applySplitPoints pre-splits the workload's main table as
// spec.target.splitPoints asks, once: the SplitPointsApplied condition
// records the outcome, and a run that has it does not split again. Where
// the endpoint has no AddSplitPoints (the emulator), the step is recorded
// as skipped and the run goes on; other errors are target errors. done is
// false when the run failed or the step is retried.
func (r *BenchmarkRunReconciler) applySplitPoints(ctx context.Context, run *v1alpha1.BenchmarkRun, w *v1alpha1.WorkloadSpec, outbox *statuswrite.Outbox, deadline stageDeadline) (ctrl.Result, bool) {
	sp := run.Spec.Target.SplitPoints
	if sp == nil || meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionSplitPointsApplied) != nil {
		return ctrl.Result{}, true
	}
	keys := splitKeys(sp)
	table := ""
	if run.Status.Dataset != nil {
		table = run.Status.Dataset.Table
	}
	counts := &v1alpha1.SplitPointsStatus{Requested: int32(len(keys))}
	if run.Status.Target != nil {
		run.Status.Target.SplitPoints = counts
	}
	cp, wc := run.DeepCopy(), w.DeepCopy()
	_, err, ok := spannerCall(ctx, r, run, "split-points", "", deadline.call, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, r.Preparer.AddSplitPoints(ctx, cp, wc, keys)
	})
	if !ok {
		return stillCalling(deadline), false
	}
	switch {
	case errors.Is(err, target.ErrSplitPointsUnsupported):
		msg := fmt.Sprintf("the endpoint does not implement AddSplitPoints (the Cloud Spanner emulator does not), so table %s was not pre-split; the run goes on without it", table)
		run.SetCondition(v1alpha1.ConditionSplitPointsApplied, metav1.ConditionFalse, v1alpha1.ReasonSplitPointsSkipped, msg, r.now())
		outbox.Warning(v1alpha1.ReasonSplitPointsSkipped, msg)
	case err != nil:
		return r.targetError(run, outbox, err, deadline), false
	default:
		counts.Added = counts.Requested
		msg := fmt.Sprintf("added %d split points to table %s", len(keys), table)
		run.SetCondition(v1alpha1.ConditionSplitPointsApplied, metav1.ConditionTrue, v1alpha1.ReasonSplitPointsAdded, msg, r.now())
		outbox.Normal(v1alpha1.ReasonSplitPointsAdded, msg)
	}
	return ctrl.Result{}, true
}

// splitKeys are the split points a spec asks for: its keys, or count keys
// evenly spaced over the built-in workloads' key space.
func splitKeys(sp *v1alpha1.SplitPointsSpec) []string {
	if sp.Count != nil {
		return target.EvenSplitKeys(int(*sp.Count))
	}
	return sp.Keys
}
