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
// CPU (and still, after a run, its SPANNER_SYS read and instance
// deletion: docs/performance.md says why), so
// more workers cost little and drain a burst of events sooner: with 50
// runs applied at once the work-queue wait's median went from 360 to 37
// ms with 16 workers instead of 4 (docs/performance.md, "Controller at
// scale"). controller-runtime never reconciles one run twice at once, and
// steps of different runs touch different objects; aggregations still
// run one at a time (aggregateOneAtATime).
const MaxConcurrentRunReconciles = 16

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
