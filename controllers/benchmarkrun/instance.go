package benchmarkrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/statuswrite"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/target"
)

// DefaultClusterID is the cluster label of instances when the manager is
// given none.
const DefaultClusterID = "default"

// Event reasons of the instance lifecycle (conditions use the API's).
const (
	EventInstanceCreated      = "InstanceCreated"
	EventInstanceDeleted      = "InstanceDeleted"
	EventInstanceDeleteFailed = "InstanceDeleteFailed"
	// EventInstanceStillCreating: the run ended, or was deleted, while its
	// instance was being created; it is deleted once it shows.
	EventInstanceStillCreating = "InstanceStillCreating"
)

// releaseTimeout bounds one attempt to delete an instance.
const releaseTimeout = 2 * time.Minute

// owner is the run as an Ephemeral instance's labels record it.
func (r *BenchmarkRunReconciler) owner(run *v1alpha1.BenchmarkRun) target.Owner {
	cluster := r.ClusterID
	if cluster == "" {
		cluster = DefaultClusterID
	}
	return target.Owner{Cluster: cluster, Namespace: run.Namespace, Run: run.Name, UID: string(run.UID)}
}

// ensureInstance makes the run's instance exist and be READY, and records
// what Spanner says about it in status.target. An Ephemeral run gets its
// finalizer before the instance is created. While Spanner creates it, the
// creation's operation is kept in status.target.createOperation, which the
// next reconcile (of this manager or a restarted one) polls: a creation
// that fails late fails the run with Spanner's error, and is not started
// again. done is false while the instance is not ready yet (res requeues),
// or when the run failed.
func (r *BenchmarkRunReconciler) ensureInstance(ctx context.Context, run *v1alpha1.BenchmarkRun, outbox *statuswrite.Outbox, deadline stageDeadline) (res ctrl.Result, done bool, err error) {
	ephemeral := run.Spec.Target.Instance.Mode == v1alpha1.InstanceEphemeral
	if ephemeral {
		if err := r.setFinalizer(ctx, run, v1alpha1.FinalizerInstance, true); err != nil {
			return ctrl.Result{}, false, err
		}
	}
	cp, owner := run.DeepCopy(), r.owner(run)
	info, err, ok := spannerCall(ctx, r, run, "instance", createOperation(run), deadline.call, func(ctx context.Context) (target.InstanceInfo, error) {
		return r.Preparer.Instance(ctx, cp, owner)
	})
	if !ok {
		return stillCalling(deadline), false, nil
	}
	if err != nil {
		return r.targetError(run, outbox, err, deadline), false, nil
	}
	recordInstance(run, info, ephemeral)
	if info.Created {
		outbox.Normal(EventInstanceCreated, fmt.Sprintf("created instance %s (%s, %s) for the run; it is deleted when the run ends",
			info.ID, info.Config, capacity(run.Status.Target)))
	}
	if info.Ready() {
		return ctrl.Result{}, true, nil
	}
	msg := fmt.Sprintf("instance %s is %s, waiting until it is READY", info.ID, info.State)
	if deadline.late {
		r.fail(run, outbox, v1alpha1.ReasonInstanceNotReady, fmt.Sprintf("instance %s was still %s when spec.deadlines.%s passed", info.ID, info.State, deadline.field))
		return ctrl.Result{}, false, nil
	}
	run.SetCondition(v1alpha1.ConditionTargetReady, metav1.ConditionFalse, v1alpha1.ReasonProvisioning, msg, r.now())
	return ctrl.Result{RequeueAfter: min(deadline.requeue, instancePollEvery)}, false, nil
}

// recordInstance writes what Spanner reported into status.target.
func recordInstance(run *v1alpha1.BenchmarkRun, info target.InstanceInfo, created bool) {
	t := run.Status.Target
	if t == nil {
		t = &v1alpha1.TargetStatus{}
		run.Status.Target = t
	}
	t.Instance, t.InstanceConfig, t.Edition, t.InstanceState = info.ID, info.Config, info.Edition, info.State
	t.Nodes, t.ProcessingUnits = nil, nil
	if info.Nodes > 0 {
		t.Nodes = ptr.To(info.Nodes)
	}
	if info.ProcessingUnits > 0 {
		t.ProcessingUnits = ptr.To(info.ProcessingUnits)
	}
	t.Created = created
	t.CreateOperation = info.CreateOperation
	t.Database, t.Dialect = run.Spec.Target.Database, run.Spec.Target.Dialect.OrDefault()
}

// wrapUp finishes an ended run: its runners are stopped and an instance
// spanbench created for it is deleted. The deletion is recorded in the
// status first; the finalizer goes on the next pass, so that a run never
// loses its finalizer before its status says what became of its instance.
func (r *BenchmarkRunReconciler) wrapUp(ctx context.Context, run *v1alpha1.BenchmarkRun, outbox *statuswrite.Outbox) (ctrl.Result, error) {
	if err := r.cleanupRunners(ctx, run); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.deleteShardChunks(ctx, run); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.deleteShardObjects(ctx, run); err != nil {
		return ctrl.Result{}, err
	}
	// The statistics live in the instance: collect them before deleting it.
	if res, pending, err := r.serverFigures().CollectServerStats(ctx, run, outbox); pending || err != nil {
		return res, err
	}
	if !controllerutil.ContainsFinalizer(run, v1alpha1.FinalizerInstance) {
		return ctrl.Result{}, nil
	}
	if t := run.Status.Target; t != nil && t.DeletionTime != nil {
		return ctrl.Result{}, r.setFinalizer(ctx, run, v1alpha1.FinalizerInstance, false)
	}
	deleted, called, err := r.releaseInstance(ctx, run, outbox)
	if !called {
		return ctrl.Result{RequeueAfter: spannerCallPoll}, nil
	}
	if err != nil {
		return releaseRetry(err)
	}
	if deleted && run.Status.Target != nil {
		return statuswrite.RequeueSoon, nil
	}
	return ctrl.Result{}, r.setFinalizer(ctx, run, v1alpha1.FinalizerInstance, false)
}

// finalize runs for a run being deleted: it deletes the run's objects in
// the results bucket and its Ephemeral instance, then lets the run go.
// The runners are stopped first; against a deleted instance they would
// only fail.
func (r *BenchmarkRunReconciler) finalize(ctx context.Context, run *v1alpha1.BenchmarkRun) (ctrl.Result, error) {
	if err := r.releaseResultObjects(ctx, run); err != nil {
		return ctrl.Result{}, err
	}
	if !controllerutil.ContainsFinalizer(run, v1alpha1.FinalizerInstance) {
		return ctrl.Result{}, nil
	}
	if err := r.deleteJobs(ctx, run); err != nil {
		return ctrl.Result{}, err
	}
	outbox := &statuswrite.Outbox{}
	_, called, err := r.releaseInstance(ctx, run, outbox)
	outbox.Emit(r.Recorder, run)
	if !called {
		return ctrl.Result{RequeueAfter: spannerCallPoll}, nil
	}
	if err != nil {
		return releaseRetry(err)
	}
	return ctrl.Result{}, r.setFinalizer(ctx, run, v1alpha1.FinalizerInstance, false)
}

// releaseRetry is how a failed deletion is tried again: while the
// instance's creation runs, at the pace of polling a creation, since an
// error's growing backoff could leave the instance costing for minutes
// after it shows; any other error with the controller's backoff.
func releaseRetry(err error) (ctrl.Result, error) {
	if errors.Is(err, target.ErrStillCreating) {
		return ctrl.Result{RequeueAfter: instancePollEvery}, nil
	}
	return ctrl.Result{}, err
}

// releaseInstance deletes the run's Ephemeral instance; deleted says it is
// gone (status.target records when). An instance that does not carry the
// run's labels is never deleted: it is left alone with a warning, and
// deleted is false. An error means the instance may still exist (and
// cost): the caller keeps the finalizer and retries. The deletion runs
// outside the reconcile (spannerCall): called is false while it runs,
// and its end queues the run again.
func (r *BenchmarkRunReconciler) releaseInstance(ctx context.Context, run *v1alpha1.BenchmarkRun, outbox *statuswrite.Outbox) (deleted, called bool, err error) {
	name := run.Spec.Target.Instance.Name
	cp, owner := run.DeepCopy(), r.owner(run)
	_, err, called = spannerCall(ctx, r, run, "release-instance", "", releaseTimeout, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, r.Preparer.ReleaseInstance(ctx, cp, owner)
	})
	if !called {
		return false, false, nil
	}
	deleted, err = r.releaseOutcome(ctx, run, outbox, name, err)
	return deleted, true, err
}

// releaseOutcome is what an attempt to delete instance name came to.
func (r *BenchmarkRunReconciler) releaseOutcome(ctx context.Context, run *v1alpha1.BenchmarkRun, outbox *statuswrite.Outbox, name string, err error) (deleted bool, _ error) {
	switch {
	case errors.Is(err, endpoint.ErrNotAllowed):
		// Never dialed: the manager may not reach that emulator (whose
		// instances cost nothing), so there is nothing it can release.
		outbox.Warning(v1alpha1.ReasonEndpointNotAllowed, fmt.Sprintf("instance %s left alone: %v", name, err))
		return false, nil
	case errors.Is(err, target.ErrNotOwned):
		outbox.Warning(v1alpha1.ReasonInstanceNotOwned, fmt.Sprintf("instance %s was not created for this run; spanbench left it alone: %v", name, err))
		return false, nil
	case errors.Is(err, target.ErrStillCreating):
		outbox.Normal(EventInstanceStillCreating, fmt.Sprintf("instance %s is still being created; spanbench deletes it as soon as it shows", name))
		return false, err
	case err != nil:
		outbox.Warning(EventInstanceDeleteFailed, fmt.Sprintf("could not delete instance %s, which spanbench created for the run and which costs money until deleted; retrying: %v", name, err))
		log.FromContext(ctx).Error(err, "deleting the run's instance failed; retrying", "instance", name)
		return false, fmt.Errorf("deleting instance %s: %w", name, err)
	}
	if t := run.Status.Target; t != nil && t.DeletionTime == nil {
		t.DeletionTime = &metav1.Time{Time: r.now()}
		t.InstanceState = ""
	}
	outbox.Normal(EventInstanceDeleted, fmt.Sprintf("deleted instance %s, which spanbench created for the run", name))
	log.FromContext(ctx).Info("deleted the run's instance", "instance", name)
	return true, nil
}

// setFinalizer adds or removes finalizer name with a patch, never an
// Update: the spec's immutability rule compares the stored JSON, and a
// typed Update re-encodes durations (1m becomes 1m0s). The patch is made
// on a copy so that the status changes of this reconcile stay in run.
func (r *BenchmarkRunReconciler) setFinalizer(ctx context.Context, run *v1alpha1.BenchmarkRun, name string, present bool) error {
	if controllerutil.ContainsFinalizer(run, name) == present {
		return nil
	}
	obj := run.DeepCopy()
	before := obj.DeepCopy()
	if present {
		controllerutil.AddFinalizer(obj, name)
	} else {
		controllerutil.RemoveFinalizer(obj, name)
	}
	if err := r.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return err
	}
	run.Finalizers, run.ResourceVersion = obj.Finalizers, obj.ResourceVersion
	return nil
}
