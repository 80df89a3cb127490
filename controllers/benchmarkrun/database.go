package benchmarkrun

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/statuswrite"
	"github.com/spanbench/spanbench/spanner/target"
)

// databasePollEvery spaces the reconciles that poll the database's
// creation or schema change.
const databasePollEvery = 5 * time.Second

// ensureDatabase takes one step towards the run's database and schema
// without holding the reconcile for the minutes a schema change can take
// on Cloud Spanner: it starts the long-running operation, records it in
// status.target.databaseOperation, and polls it on later reconciles, the
// condition's message saying how far it got. done is true once the
// database and schema are ready. An error, the operation's own included,
// is a target error as any other (targetError).
func (r *BenchmarkRunReconciler) ensureDatabase(ctx context.Context, run *v1alpha1.BenchmarkRun, w *v1alpha1.WorkloadSpec,
	outbox *statuswrite.Outbox, deadline stageDeadline) (res ctrl.Result, done bool) {
	cp, wc := run.DeepCopy(), w.DeepCopy()
	p, err, ok := spannerCall(ctx, r, run, "database", databaseOperation(run), deadline.call, func(ctx context.Context) (target.DatabaseProgress, error) {
		return r.Preparer.Database(ctx, cp, wc)
	})
	if !ok {
		return stillCalling(deadline), false
	}
	if t := run.Status.Target; t != nil {
		t.DatabaseOperation = p.Operation
	}
	if err != nil {
		return r.targetError(run, outbox, err, deadline), false
	}
	if p.Done {
		return ctrl.Result{}, true
	}
	msg := p.Describe(run.Spec.Target.Database)
	if deadline.late {
		r.fail(run, outbox, v1alpha1.ReasonDatabaseBusy, fmt.Sprintf("still %s when spec.deadlines.%s passed", msg, deadline.field))
		return ctrl.Result{}, false
	}
	run.SetCondition(v1alpha1.ConditionTargetReady, metav1.ConditionFalse, v1alpha1.ReasonProvisioning, msg, r.now())
	return ctrl.Result{RequeueAfter: min(deadline.requeue, databasePollEvery)}, false
}
