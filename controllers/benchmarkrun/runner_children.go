package benchmarkrun

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun/children"
	"github.com/spanbench/spanbench/controllers/statuswrite"
	"github.com/spanbench/spanbench/runner/protocol"
)

// ensureChildren runs one stage's ensure. The guardrails are checked again
// first: the prepare stage checked them, but a manager restarted with
// tighter flags must not create Jobs (an image, a toleration) its flags now
// refuse (LimitExceeded). A child whose name is taken by somebody else's
// object fails the run (NameConflict). ok is false when the stage must stop
// here, with err to return (nil once the run failed).
func (r *BenchmarkRunReconciler) ensureChildren(ctx context.Context, run *v1alpha1.BenchmarkRun, w *v1alpha1.WorkloadSpec, outbox *statuswrite.Outbox,
	ensure func(context.Context, *v1alpha1.BenchmarkRun, *v1alpha1.WorkloadSpec) error) (ok bool, err error) {
	if msg := r.Limits.Check(run); msg != "" {
		r.fail(run, outbox, v1alpha1.ReasonLimitExceeded, msg)
		return false, nil
	}
	if ok, err := r.estimateCost(ctx, run, outbox); !ok {
		return false, err
	}
	err = ensure(ctx, run, w)
	var refused *refusedError
	if errors.As(err, &refused) {
		r.fail(run, outbox, v1alpha1.ReasonNameConflict, err.Error())
		return false, nil
	}
	return err == nil, err
}

// ensureRunnerChildren creates, or adopts, everything the runners need:
// the pods' access (ensurePodAccess), one ConfigMap per shard, and the
// Indexed Job. Names are deterministic, so a restarted manager finds what
// it created and never duplicates it.
func (r *BenchmarkRunReconciler) ensureRunnerChildren(ctx context.Context, run *v1alpha1.BenchmarkRun, w *v1alpha1.WorkloadSpec) error {
	objs, err := r.podAccess(run, w)
	if err != nil {
		return err
	}
	for i := range int(run.Replicas()) {
		objs = append(objs, children.NewShardConfigMap(run, i))
	}
	if err := r.prepareRunDir(run); err != nil {
		return err
	}
	return r.ensureAll(ctx, run, objs, children.NewRunnerJob(run, r.Runner))
}

// ensureLoaderChildren creates, or adopts, everything the loaders need:
// the pods' access, one ConfigMap per loader, and the loader Job.
func (r *BenchmarkRunReconciler) ensureLoaderChildren(ctx context.Context, run *v1alpha1.BenchmarkRun, w *v1alpha1.WorkloadSpec) error {
	objs, err := r.podAccess(run, w)
	if err != nil {
		return err
	}
	for i := range int(run.LoaderPods()) {
		objs = append(objs, children.NewLoaderConfigMap(run, i))
	}
	return r.ensureAll(ctx, run, objs, children.NewLoaderJob(run, r.Runner))
}

// podAccess is what loader and runner pods share: the control ConfigMap,
// their service account (unless the user brings one) and their
// least-privilege Role and RoleBinding. Their content does not depend on
// the stage that creates them first: ensure updates only the grants, to
// this release's.
func (r *BenchmarkRunReconciler) podAccess(run *v1alpha1.BenchmarkRun, w *v1alpha1.WorkloadSpec) ([]client.Object, error) {
	control, err := children.NewControlConfigMap(run, r.control(run, w))
	if err != nil {
		return nil, err
	}
	objs := []client.Object{control}
	if run.Spec.Runners.ServiceAccountName == "" {
		objs = append(objs, children.NewRunnerServiceAccount(run))
	}
	return append(objs, children.NewRunnerRole(run), children.NewRunnerRoleBinding(run, children.RunnerServiceAccountName(run))), nil
}

// ensureConcurrency bounds the children one reconcile ensures at once.
const ensureConcurrency = 8

// ensureAll ensures the objects a Job's pods need, several at once, then
// the Job, whose pods cannot start without them. Each missing object is
// an API round trip and none needs another (the manager may bind a Role
// that does not exist yet), so a run's first Loading reconcile costs two
// round trips' time instead of six: made one after the other they held
// the run for 0.9 s at the median at 50 concurrent runs, and every
// create's own watch event waited for them (docs/performance.md, "No
// reconcile waits on Spanner").
func (r *BenchmarkRunReconciler) ensureAll(ctx context.Context, run *v1alpha1.BenchmarkRun, objs []client.Object, job client.Object) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(ensureConcurrency)
	for _, o := range objs {
		g.Go(func() error { return r.ensure(gctx, run, o) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return r.ensure(ctx, run, job)
}

// control is what every loader and runner of the run is told: w is the
// run's resolved workload, which the pods run as it is.
func (r *BenchmarkRunReconciler) control(run *v1alpha1.BenchmarkRun, w *v1alpha1.WorkloadSpec) protocol.Control {
	c := protocol.Control{
		Run: run.Name, Namespace: run.Namespace, Shards: int(run.Replicas()),
		Target: observedTarget(run), Workload: *w, Region: children.RunnerRegion(run), LoadTables: loadTables(run),
	}
	if ep := r.Preparer.Endpoint(run); !ep.IsEmulator() {
		c.SpannerEndpoint = ep.Address()
	}
	return c
}

// observedTarget is the run's target with the instance's configuration and
// size as Spanner reported them (status.target), so that the runners'
// results record the instance that was measured, not the one the spec
// named.
func observedTarget(run *v1alpha1.BenchmarkRun) v1alpha1.TargetSpec {
	t := run.Spec.Target
	o := run.Status.Target
	if o == nil {
		return t
	}
	if o.InstanceConfig != "" && len(o.InstanceConfig) <= 64 {
		t.Instance.Config = o.InstanceConfig
	}
	switch {
	case o.Nodes != nil:
		t.Instance.Nodes, t.Instance.ProcessingUnits = ptr.To(*o.Nodes), nil
	case o.ProcessingUnits != nil && v1alpha1.ValidProcessingUnits(*o.ProcessingUnits):
		t.Instance.Nodes, t.Instance.ProcessingUnits = nil, ptr.To(*o.ProcessingUnits)
	}
	return t
}

// ensure creates o owned by run. An existing object is adopted only when
// it already belongs to this run (by owner or by our run label, unowned);
// anything else is refused, so spanbench never takes over a user's object.
// A Role or RoleBinding that is the run's gets this release's grants
// (runner_rbac_converge.go); nothing else of an existing object changes.
// It looks in the cache first: every reconcile of a loading or starting
// run ensures all its children, and a load with many loader pods reports
// often, so the usual case (everything exists) costs no API call.
func (r *BenchmarkRunReconciler) ensure(ctx context.Context, run *v1alpha1.BenchmarkRun, o client.Object) error {
	existing := o.DeepCopyObject().(client.Object)
	err := r.Get(ctx, client.ObjectKeyFromObject(o), existing)
	if apierrors.IsNotFound(err) {
		if err := controllerutil.SetControllerReference(run, o, r.Scheme); err != nil {
			return err
		}
		err = r.Create(ctx, o)
		if !apierrors.IsAlreadyExists(err) {
			return err
		}
		// Created meanwhile, or the cache lags behind this manager's own
		// create: judge what the API server holds, which the cache may
		// not show yet either.
		err = r.uncached().Get(ctx, client.ObjectKeyFromObject(o), existing)
	}
	if err != nil {
		return err
	}
	if metav1.IsControlledBy(existing, run) {
		return r.converge(ctx, existing, o)
	}
	if metav1.GetControllerOf(existing) == nil && existing.GetLabels()[v1alpha1.LabelRun] == run.Name {
		before := existing.DeepCopyObject().(client.Object)
		if err := controllerutil.SetControllerReference(run, existing, r.Scheme); err != nil {
			return err
		}
		convergeGrants(existing, o)
		return r.Patch(ctx, existing, client.MergeFrom(before))
	}
	return &refusedError{kind: fmt.Sprintf("%T", o), name: o.GetName()}
}

// refusedError says a child's name is taken by an object that is not ours.
type refusedError struct{ kind, name string }

func (e *refusedError) Error() string {
	return fmt.Sprintf("%s %s already exists and does not belong to this run; spanbench will not take it over: delete or rename it", e.kind, e.name)
}
