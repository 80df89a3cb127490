package controllers

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/runner/shard"
)

// ensureRunnerChildren creates, or adopts, everything the runners need:
// their service account and least-privilege role, the control ConfigMap,
// one ConfigMap per shard, and the Indexed Job. Names are deterministic, so
// a restarted manager finds what it created and never duplicates it.
func (r *BenchmarkRunReconciler) ensureRunnerChildren(ctx context.Context, run *v1alpha1.BenchmarkRun) error {
	control, err := newControlConfigMap(run, r.control(run))
	if err != nil {
		return err
	}
	objs := []client.Object{control}
	for i := range int(run.Replicas()) {
		objs = append(objs, newShardConfigMap(run, i))
	}
	sa := runnerServiceAccountName(run)
	if run.Spec.Runners.ServiceAccountName == "" {
		objs = append(objs, newRunnerServiceAccount(run))
	}
	objs = append(objs, newRunnerRole(run), newRunnerRoleBinding(run, sa), newRunnerJob(run, r.Runner))
	for _, o := range objs {
		if err := r.ensure(ctx, run, o); err != nil {
			return err
		}
	}
	return nil
}

// control is what every runner of the run is told.
func (r *BenchmarkRunReconciler) control(run *v1alpha1.BenchmarkRun) shard.Control {
	w := run.Spec.Workload
	w.Default()
	dataset := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionDatasetLoaded)
	return shard.Control{
		Run: run.Name, Namespace: run.Namespace, Shards: int(run.Replicas()),
		Target: observedTarget(run), Workload: w, Region: runnerRegion(run),
		Load: dataset == nil || dataset.Status != metav1.ConditionTrue,
	}
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
func (r *BenchmarkRunReconciler) ensure(ctx context.Context, run *v1alpha1.BenchmarkRun, o client.Object) error {
	if err := controllerutil.SetControllerReference(run, o, r.Scheme); err != nil {
		return err
	}
	err := r.Create(ctx, o)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	existing := o.DeepCopyObject().(client.Object)
	if err := r.Get(ctx, client.ObjectKeyFromObject(o), existing); err != nil {
		return err
	}
	if metav1.IsControlledBy(existing, run) {
		return nil
	}
	if metav1.GetControllerOf(existing) == nil && existing.GetLabels()[v1alpha1.LabelRun] == run.Name {
		before := existing.DeepCopyObject().(client.Object)
		if err := controllerutil.SetControllerReference(run, existing, r.Scheme); err != nil {
			return err
		}
		return r.Patch(ctx, existing, client.MergeFrom(before))
	}
	return &refusedError{kind: fmt.Sprintf("%T", o), name: o.GetName()}
}

// refusedError says a child's name is taken by an object that is not ours.
type refusedError struct{ kind, name string }

func (e *refusedError) Error() string {
	return fmt.Sprintf("%s %s already exists and does not belong to this run; spanbench will not take it over: delete or rename it", e.kind, e.name)
}
