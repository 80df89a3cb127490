// Package benchmarkrun is the BenchmarkRun reconciler: one file per concern
// (provision, loading, start barrier, shard reports, aggregation, server
// statistics and metrics, wrap-up), the pure builders of its children in
// children/. What the campaign reconciler shares with it lives beside them
// in controllers/ (statuswrite, runreport, collectors, guardrails).
package benchmarkrun

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun/children"
	"github.com/spanbench/spanbench/controllers/benchmarkrun/serverfigures"
	"github.com/spanbench/spanbench/controllers/guardrails"
	"github.com/spanbench/spanbench/controllers/statuswrite"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/protocol/bucket"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/serverstats"
)

// BenchmarkRunReconciler runs BenchmarkRuns: it prepares the target, starts
// the runner pods together, and merges their results into the status.
type BenchmarkRunReconciler struct {
	client.Client
	Scheme   *runtime.Scheme
	Recorder record.EventRecorder
	// Clock is injected so that deadlines are testable.
	Clock clock.PassiveClock
	// Preparer performs the Spanner admin calls.
	Preparer TargetPreparer
	// Runner holds the runner pods' operator-level settings.
	Runner children.RunnerConfig
	// Limits are the cost guardrails.
	Limits guardrails.Limits
	// Preflight checks a Cloud Spanner run's access before anything is
	// created for it (preflight.go); the zero value runs none.
	Preflight PreflightConfig
	// CostLimits are the guardrails in money; Prices is the catalog runs
	// are priced with (cost.go). The zero values cap nothing and price
	// with the embedded catalog.
	CostLimits guardrails.CostLimits
	Prices     guardrails.PriceSource
	// ClusterID is recorded in the labels of every instance spanbench
	// creates, so that the orphan sweep of one cluster's manager never
	// deletes another cluster's instances; "" is DefaultClusterID.
	ClusterID string
	// ClaimNamespace holds the Leases by which runs claim their databases,
	// one run per database cluster-wide (database_claim.go): the manager's
	// own namespace. SetupWithManager requires it.
	ClaimNamespace string
	// KeepRunners keeps the runner Job and its pods after a run ends, for
	// debugging; by default they are deleted (results are not in them).
	KeepRunners bool
	// ServerMetrics reads Cloud Monitoring after a Cloud Spanner run
	// (package serverfigures); tests point its client at a fake MetricService.
	ServerMetrics serverfigures.ServerMetricsConfig
	// ServerStats is how Spanner's own statistics of a succeeded run are
	// collected (package serverfigures); the zero value reads SPANNER_SYS on
	// Cloud Spanner, nothing on the emulator.
	ServerStats serverfigures.ServerStatsConfig
	// Arrivals is a run's open-loop schedule as its runners send it
	// (pod.RunArrivals): the aggregation refuses a shard, and a merge, one
	// of whose intervals counts more operations and missed sends than the
	// schedule produced in it. Required: the manager does not link the
	// scheduler, so the binary hands it over.
	Arrivals func(*v1alpha1.BenchmarkRun) result.Arrivals

	// aggregating is held by the one aggregation under way
	// (aggregateOneAtATime).
	aggregating sync.Mutex
	// Results is the results bucket (--results-bucket), where the runners
	// store their shard results and the controller the run's report, as
	// objects; nil stores them in ConfigMaps. children.RunnerConfig.Results names
	// the same bucket to the runners.
	Results *bucket.Bucket
	// SpannerCalls runs the steps' Spanner calls outside the reconcile
	// workers (spanner_calls.go); SetupWithManager makes one. Without it
	// (tests that call Reconcile by hand) they run in the reconcile.
	SpannerCalls *SpannerCalls
	// APIReader reads what the manager's cache does not hold: the chunks
	// of long results (protocol.LoadChunked). SetupWithManager defaults it
	// to the manager's; without one the client reads them.
	APIReader client.Reader

	// phaseSeconds times reconciles by the run's phase
	// (run_reconcile_metrics.go); SetupWithManager makes it.
	phaseSeconds *prometheus.HistogramVec
	// own expects the watch events of the children's writes made through
	// ownWriter, which the watches drop (own_events.go); SetupWithManager
	// makes it.
	own *ownWrites
	// versions knows which versions of each run a pass read and its
	// status write replaced (stale_run.go); SetupWithManager makes it.
	versions *runVersions
}

// +kubebuilder:rbac:groups=bench.spanbench.io,resources=benchmarkruns,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=bench.spanbench.io,resources=benchmarkruns/status,verbs=get;patch;update
// +kubebuilder:rbac:groups=bench.spanbench.io,resources=benchmarkruns/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=configmaps;serviceaccounts,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles,verbs=bind;escalate
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// Reconcile moves one run one step forward and writes its status once. A
// run being deleted only has its Ephemeral instance deleted (finalize).
func (r *BenchmarkRunReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	run := &v1alpha1.BenchmarkRun{}
	if err := r.Get(ctx, req.NamespacedName, run); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if r.versions.stale(run) {
		// The write's own event queues the run once the cache has it.
		return ctrl.Result{RequeueAfter: staleRunRecheck}, nil
	}
	ctx, startCalls := holdCallStarts(ctx)
	defer startCalls() // after the status write
	began := time.Now()
	if !run.DeletionTimestamp.IsZero() {
		defer r.observePhase(phaseDeleting, began)
		return r.finalize(ctx, run)
	}
	defer r.observePhase(v1alpha1.DerivePhase(run.Status.Conditions), began)
	before := run.DeepCopy()
	outbox := &statuswrite.Outbox{}
	res, err := r.reconcile(ctx, run, outbox)
	written, patchErr := r.patchStatus(ctx, before, run)
	if patchErr != nil {
		if apierrors.IsConflict(patchErr) || apierrors.IsNotFound(patchErr) {
			return statuswrite.RequeueSoon, nil
		}
		return ctrl.Result{}, patchErr
	}
	outbox.Emit(r.Recorder, run)
	if apierrors.IsConflict(err) {
		// A write of this pass (finalizer, adoption, start time) met a
		// newer object: the next pass decides again on fresh data.
		return statuswrite.RequeueSoon, nil
	}
	if written && err == nil && res == statuswrite.RequeueSoon && r.versions != nil {
		// The next step is asked for by the status this pass wrote, and
		// under a manager the write's own event queues the run for it as
		// soon as the cache has the write (stale_run.go). A timer as
		// well would fire while that pass is under way, and queue the
		// run again behind it for nothing: at 50 runs, most of the waits
		// over 100 ms. A reconciler driven by hand, without
		// SetupWithManager, gets no event and keeps the timer.
		res = ctrl.Result{}
	}
	return res, err
}

// patchStatus writes the status if it changed (statuswrite.Patch). run's
// resource version moves only with this reconcile's own finalizer
// patches, which were locked on the version read.
func (r *BenchmarkRunReconciler) patchStatus(ctx context.Context, before, run *v1alpha1.BenchmarkRun) (written bool, err error) {
	locked := run.ResourceVersion
	written, err = statuswrite.Patch(ctx, r, before, run, func(run *v1alpha1.BenchmarkRun) any { return run.Status })
	if written {
		r.versions.wrote(run.UID, before.ResourceVersion, locked)
	}
	return written, err
}

// SetupWithManager watches runs and the children that move them forward.
func (r *BenchmarkRunReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Arrivals == nil {
		return errors.New("BenchmarkRunReconciler: Arrivals is required: without the runs' schedules the aggregation cannot bound their counts")
	}
	if r.ClaimNamespace == "" {
		return errors.New("BenchmarkRunReconciler: ClaimNamespace is required: without it two runs could use one database at once")
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if r.SpannerCalls == nil {
		r.SpannerCalls = NewSpannerCalls(r.Clock)
	}
	if err := mgr.Add(r.SpannerCalls); err != nil {
		return err
	}
	phaseSeconds, err := newReconcilePhaseSeconds()
	if err != nil {
		return err
	}
	r.phaseSeconds = phaseSeconds
	r.own = newOwnWrites(r.Clock)
	r.versions = newRunVersions(r.Clock)
	childFilters := builder.WithPredicates(r.childEventFilters()...)
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.BenchmarkRun{}, builder.WithPredicates(ignoreFinalizerOnly, r.versions.ignoreVersionsRead())).
		Owns(&batchv1.Job{}, childFilters).
		Owns(&corev1.ConfigMap{}, childFilters).
		Owns(&corev1.ServiceAccount{}, childFilters).
		Owns(&rbacv1.Role{}, childFilters).
		Owns(&rbacv1.RoleBinding{}, childFilters).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(runOfPod)).
		// A Spanner call that ended queues its run, whose step takes it.
		WatchesRawSource(source.Channel(r.SpannerCalls.done, &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: MaxConcurrentRunReconciles}).
		Complete(r)
}

// runOfPod maps a runner pod to its run by the run label.
func runOfPod(_ context.Context, o client.Object) []ctrl.Request {
	name, ok := o.GetLabels()[v1alpha1.LabelRun]
	if !ok {
		return nil
	}
	return []ctrl.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}}}
}

// reconcile dispatches on the run's phase, derived from its conditions. A
// run that ended is wrapped up: runners stopped, Ephemeral instance
// deleted.
func (r *BenchmarkRunReconciler) reconcile(ctx context.Context, run *v1alpha1.BenchmarkRun, outbox *statuswrite.Outbox) (ctrl.Result, error) {
	log.FromContext(ctx).V(1).Info("reconciling", "phase", run.Status.Phase)
	var res ctrl.Result
	var err error
	// The workload as it runs, resolved once for the whole pass and handed
	// to the stages that need it; run.Spec is the cache's and stays as the
	// user wrote it.
	w := run.Spec.Workload.Resolved()
	if err := r.holdResultObjects(ctx, run); err != nil {
		return ctrl.Result{}, err
	}
	switch v1alpha1.DerivePhase(run.Status.Conditions) {
	case v1alpha1.PhaseSucceeded, v1alpha1.PhaseFailed:
		finalProgress(run) // a run that ended before the manager kept progress gets it too
		res, err := r.wrapUp(ctx, run, outbox)
		if err != nil {
			return res, err
		}
		if err := r.releaseDatabase(ctx, run); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.recordCost(ctx, run); err != nil {
			return ctrl.Result{}, err
		}
		metrics, err := r.serverFigures().CollectServerMetrics(ctx, run)
		return soonest(res, metrics), err
	case v1alpha1.PhasePending, v1alpha1.PhasePreparing:
		res, err = r.prepareTarget(ctx, run, &w, outbox)
	case v1alpha1.PhaseLoading:
		res, err = r.awaitLoad(ctx, run, &w, outbox)
	case v1alpha1.PhaseWaitingForRunners:
		res, err = r.awaitRunners(ctx, run, &w, outbox)
	case v1alpha1.PhaseRunning:
		if err := r.convergeAccess(ctx, run); err != nil {
			return ctrl.Result{}, err
		}
		res, err = r.awaitShards(ctx, run, outbox)
	case v1alpha1.PhaseAggregating:
		res, err = r.aggregateOneAtATime(ctx, run, outbox)
		// The results, if any, replace the live figures in this pass's
		// one status write (progress.go).
		finalProgress(run)
	}
	if run.IsFinished() {
		// The run ended in this step: wrap it up (delete its instance) next.
		return statuswrite.RequeueSoon, err
	}
	return res, err
}

// now is the injected clock's time.
func (r *BenchmarkRunReconciler) now() time.Time { return r.Clock.Now() }

// serverFigures is what the collections of a finished run's server
// figures need of the reconciler.
func (r *BenchmarkRunReconciler) serverFigures() serverfigures.Collection {
	opener, _ := r.Preparer.(serverfigures.DatabaseOpener)
	return serverfigures.Collection{Clock: r.Clock, Reader: r.uncached(), Writer: r.ownWriter(), Results: r.Results, Schedules: r.Arrivals,
		StoreChunks: r.storeReportChunks, ApplyResult: applyResult, Opener: opener,
		// Read when needed only: a reconciler whose runs never reach
		// Spanner (tests) has no preparer.
		Endpoint: func(run *v1alpha1.BenchmarkRun) endpoint.Endpoint { return r.Preparer.Endpoint(run) },
		Call: func(ctx context.Context, run *v1alpha1.BenchmarkRun, step string, timeout time.Duration,
			read func(context.Context) (*serverstats.Result, error)) (*serverstats.Result, error, bool) {
			return spannerCall(ctx, r, run, step, "", timeout, read)
		},
		Poll: spannerCallPoll, Stats: r.ServerStats, Metrics: r.ServerMetrics}
}

// soonest is the result that comes back first: a requeue beats none, a
// shorter wait a longer one.
func soonest(a, b ctrl.Result) ctrl.Result {
	switch {
	case a.RequeueAfter == 0:
		return b
	case b.RequeueAfter == 0:
		return a
	case b.RequeueAfter < a.RequeueAfter:
		return b
	}
	return a
}

// untilDeadline is the requeue for the current stage's deadline, or the
// deadline error when it has passed.
func (r *BenchmarkRunReconciler) untilDeadline(run *v1alpha1.BenchmarkRun) (time.Duration, string, bool) {
	field, at, ok := run.StageDeadline()
	if !ok {
		return time.Minute, "", false
	}
	left := at.Sub(r.now())
	return max(left, time.Second), field, left <= 0
}

// fail ends the run with a failure reason and a warning event.
func (r *BenchmarkRunReconciler) fail(run *v1alpha1.BenchmarkRun, outbox *statuswrite.Outbox, reason, message string) {
	if run.MarkFailed(reason, message, r.now()) {
		outbox.Warning(reason, message)
	}
}
