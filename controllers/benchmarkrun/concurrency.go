package benchmarkrun

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/statuswrite"
)

// MaxConcurrentRunReconciles is how many runs the BenchmarkRun controller
// reconciles at once. With one (controller-runtime's default) a single
// slow step stalls every other run, a start barrier's release included.
// No preparation step or check waits on Spanner (spanner_calls.go): a
// worker is held for the API server's round trips and the aggregation's
// CPU (aggregations run one at a time: aggregateOneAtATime). Round trips
// cost the manager nothing but a goroutine while they wait, and on a busy
// API server they are what a reconcile is made of (at 50 concurrent runs
// on the benchmark's host, 140-290 ms a write, under 1 ms of CPU): 16
// workers left 34 of 50 runs applied at once waiting for a worker for
// two or three reconciles of 0.2-0.6 s each. 64 holds every run of such a
// burst at once (docs/performance.md, "No reconcile waits on Spanner").
// controller-runtime never reconciles one run twice at once, and steps
// of different runs touch different objects.
const MaxConcurrentRunReconciles = 64

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
func (r *BenchmarkRunReconciler) aggregateOneAtATime(ctx context.Context, run *v1alpha1.BenchmarkRun, outbox *statuswrite.Outbox) (ctrl.Result, error) {
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
