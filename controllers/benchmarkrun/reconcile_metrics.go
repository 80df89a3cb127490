package benchmarkrun

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// phaseDeleting is the phase label of a reconcile of a run being deleted.
const phaseDeleting = "Deleting"

// newReconcilePhaseSeconds is the histogram of run reconcile times by the
// phase the run was in when the reconcile began:
// controller_runtime_reconcile_time_seconds says how long reconciles take,
// this says which step it is that takes it (docs/performance.md, "No
// reconcile waits on Spanner"). Its buckets are finer than
// controller-runtime's below 100 ms, the work queue's wait goal. It is
// registered in controller-runtime's registry beside that histogram; a
// second manager in one process (the benchmarks) shares the first's.
func newReconcilePhaseSeconds() (*prometheus.HistogramVec, error) {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "spanbench_run_reconcile_phase_seconds",
		Help:    "Time of a BenchmarkRun reconcile, by the run's phase when it began (Deleting for a run being deleted).",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"phase"})
	err := metrics.Registry.Register(h)
	if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
		return are.ExistingCollector.(*prometheus.HistogramVec), nil
	}
	return h, err
}

// observePhase records a reconcile of a run in phase that began at began;
// a reconciler without the histogram (unit tests) records nothing.
func (r *BenchmarkRunReconciler) observePhase(phase v1alpha1.BenchmarkRunPhase, began time.Time) {
	if r.phaseSeconds != nil {
		r.phaseSeconds.WithLabelValues(string(phase)).Observe(time.Since(began).Seconds())
	}
}
