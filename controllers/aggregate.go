package controllers

import (
	"context"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/load/result"
	"github.com/spanbench/spanbench/pod"
)

// awaitShards waits until every runner has reported (or failed), or the
// overrun deadline has passed; then the results are aggregated with
// whatever arrived.
func (r *BenchmarkRunReconciler) awaitShards(ctx context.Context, run *v1alpha1.BenchmarkRun, st *step) (ctrl.Result, error) {
	outcomes, err := r.readShards(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	failed := r.failedIndexes(ctx, run)
	reported := 0
	for _, o := range outcomes {
		if o.state != "" || failed[o.index] {
			reported++
		}
	}
	if reported == len(outcomes) {
		run.SetCondition(v1alpha1.ConditionLoadCompleted, metav1.ConditionTrue, v1alpha1.ReasonShardsReported, "every runner reported", r.now())
		return requeueSoon, nil
	}
	requeue, field, late := r.untilDeadline(run)
	if !late {
		run.SetCondition(v1alpha1.ConditionLoadCompleted, metav1.ConditionFalse, v1alpha1.ReasonRunning,
			fmt.Sprintf("%d of %d runners reported", reported, len(outcomes)), r.now())
		return ctrl.Result{RequeueAfter: requeue}, nil
	}
	msg := fmt.Sprintf("only %d of %d runners reported within spec.deadlines.%s; aggregating what arrived", reported, len(outcomes), field)
	run.SetCondition(v1alpha1.ConditionLoadCompleted, metav1.ConditionTrue, v1alpha1.ReasonDeadlineExceeded, msg, r.now())
	st.warning(v1alpha1.ReasonDeadlineExceeded, msg)
	return requeueSoon, nil
}

// aggregate merges the shard results exactly, writes the report and the
// status figures, and ends the run.
func (r *BenchmarkRunReconciler) aggregate(ctx context.Context, run *v1alpha1.BenchmarkRun, st *step) (ctrl.Result, error) {
	outcomes, err := r.readShards(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	merged, problems, err := mergeShards(outcomes)
	if err != nil {
		r.fail(run, st, v1alpha1.ReasonResultInvalid, err.Error())
		return ctrl.Result{}, r.cleanupRunners(ctx, run)
	}
	applyResult(&run.Status, merged, run)
	if err := r.writeReport(ctx, run, merged); err != nil {
		problems = append(problems, "no report: "+err.Error())
	} else {
		run.Status.Report = &v1alpha1.ReportReference{ConfigMapName: v1alpha1.ResultConfigMapName(run), Key: ReportKey}
	}
	msg := fmt.Sprintf("%s operations, p99 %s", run.Status.Overall.Throughput+"/s", p99(run.Status.Overall))
	if len(problems) > 0 {
		msg += "; partial: " + strings.Join(problems, "; ")
	}
	run.MarkSucceeded(len(problems) > 0, msg, r.now())
	st.normal(v1alpha1.ReasonCompleted, msg)
	return ctrl.Result{}, r.cleanupRunners(ctx, run)
}

func p99(f *v1alpha1.ResultFigures) string {
	if f == nil || f.Latency == nil || f.Latency.P99 == nil {
		return "-"
	}
	return f.Latency.P99.Duration.String()
}

// writeReport stores the merged result, histograms and time series
// included, in a ConfigMap that outlives the runner pods; it goes with the
// run.
func (r *BenchmarkRunReconciler) writeReport(ctx context.Context, run *v1alpha1.BenchmarkRun, doc *result.Document) error {
	data, err := pod.EncodeResult(doc)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ResultConfigMapName(run), Namespace: run.Namespace, Labels: v1alpha1.RunLabels(run)},
		BinaryData: map[string][]byte{ReportKey: data},
	}
	return r.ensure(ctx, run, cm)
}

// cleanupRunners deletes the loader and runner Jobs and their pods once a
// run has ended, unless the operator keeps them. Results live in
// ConfigMaps, not pods.
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
	err = r.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground))
	return client.IgnoreNotFound(err)
}

// ReadReport reads the merged result of a finished run from its report
// ConfigMap (spanbench report --run).
func ReadReport(ctx context.Context, c client.Reader, key client.ObjectKey) (*result.Document, error) {
	run := &v1alpha1.BenchmarkRun{}
	if err := c.Get(ctx, key, run); err != nil {
		return nil, err
	}
	if run.Status.Report == nil {
		return nil, fmt.Errorf("BenchmarkRun %s has no report yet (phase %s)", key, run.Status.Phase)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: run.Status.Report.ConfigMapName}, cm); err != nil {
		return nil, err
	}
	data, ok := cm.BinaryData[run.Status.Report.Key]
	if !ok {
		return nil, fmt.Errorf("ConfigMap %s/%s has no %s", key.Namespace, cm.Name, run.Status.Report.Key)
	}
	return pod.DecodeResult(data)
}
