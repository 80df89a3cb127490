package controllers

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// MaxConcurrentRunReconciles is how many runs the BenchmarkRun controller
// reconciles at once. With one (controller-runtime's default) a single
// slow step stalls every other run, a start barrier's release included:
// a step's admin calls may take up to prepareCallMax on Cloud Spanner
// (the long-running operations, an instance's or a database's creation,
// are polled across reconciles instead), and with 50 runs applied at once
// against envtest and the emulator, reconciles waited up to 10 s in the
// queue (docs/performance.md, "Controller at scale"). controller-runtime never reconciles one run
// twice at once, and steps of different runs touch different objects.
const MaxConcurrentRunReconciles = 4

// aggregationBusyRetry is when a run that found another run's aggregation
// under way tries again.
const aggregationBusyRetry = time.Second

// aggregateOneAtATime aggregates run unless another run's aggregation is
// under way, in which case it asks to be requeued without holding a
// worker. An aggregation's live set is sized to fit the manager's memory
// limit alone (docs/performance.md, (e) and (f)); two at once could get
// the manager OOM-killed.
// A TPCC run's consistency check comes first, in the background: it holds
// neither a worker nor the aggregation.
func (r *BenchmarkRunReconciler) aggregateOneAtATime(ctx context.Context, run *v1alpha1.BenchmarkRun, outbox *eventOutbox) (ctrl.Result, error) {
	checks, res, done := r.awaitConsistency(ctx, run, outbox)
	if !done {
		return res, nil
	}
	if !r.aggregating.TryLock() {
		return ctrl.Result{RequeueAfter: aggregationBusyRetry}, nil
	}
	defer r.aggregating.Unlock()
	return r.aggregate(ctx, run, outbox, checks)
}
