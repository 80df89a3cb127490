package benchmarkrun

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// cleanupRunners deletes the loader and runner Jobs and their pods once a
// run has ended, unless the operator keeps them. Results live in
// ConfigMaps, not pods.
//
// It is the only deletion of a run's children while the run exists, and
// it runs at wrap-up only: when the run read from the cache has ended,
// which means the ended status is stored. A child deleted earlier, by a
// pass whose status write then conflicted or was not yet seen, would be
// created again by the next pass on the stale run: the same name, a new
// object, its pods started again.
func (r *BenchmarkRunReconciler) cleanupRunners(ctx context.Context, run *v1alpha1.BenchmarkRun) error {
	if r.KeepRunners {
		return nil
	}
	return r.deleteJobs(ctx, run)
}

// deleteJobs deletes the run's loader and runner Jobs and their pods.
func (r *BenchmarkRunReconciler) deleteJobs(ctx context.Context, run *v1alpha1.BenchmarkRun) error {
	if err := r.deleteJob(ctx, run, v1alpha1.LoaderJobName(run)); err != nil {
		return err
	}
	return r.deleteJob(ctx, run, v1alpha1.RunnerJobName(run))
}

// deleteJob deletes one of the run's Jobs, with its pods; a Job that is
// gone already is not an error. It looks in the cache first: every
// reconcile of a finished run wraps it up again, and a Job the cache says
// is gone, or going, needs no DELETE.
func (r *BenchmarkRunReconciler) deleteJob(ctx context.Context, run *v1alpha1.BenchmarkRun, name string) error {
	job := &batchv1.Job{}
	err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, job)
	if err != nil || !job.DeletionTimestamp.IsZero() {
		return client.IgnoreNotFound(err)
	}
	err = r.ownWriter().Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground))
	return client.IgnoreNotFound(err)
}
