package controllers

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/protocol"
)

// The Loading stage runs when the database does not hold the dataset (its
// marker did not match): the loader Job's pods each load a slice of the
// key space and report in their loader ConfigMaps as they go. These
// functions turn the reports into status.dataset and the DatasetLoaded
// condition's message, so that `kubectl get` (phase Loading, the Loaded
// column) and `kubectl describe` show the load moving; and once every
// slice is loaded, the controller writes the dataset marker, which lets
// the next run on the same database skip the stage. Runners are created
// only after it.

// loaderOutcome is what one loader ConfigMap says.
type loaderOutcome struct {
	index int
	protocol.LoaderReport
	// err says the map holds what no spanbench loader writes (a
	// *protocol.DecodeError); the report is then empty.
	err error
}

// awaitLoad creates the loaders and follows them until every slice is
// loaded, a slice failed beyond its retries, or spec.deadlines.load passed.
func (r *BenchmarkRunReconciler) awaitLoad(ctx context.Context, run *v1alpha1.BenchmarkRun, w *v1alpha1.WorkloadSpec, outbox *eventOutbox) (ctrl.Result, error) {
	if ok, err := r.ensureChildren(ctx, run, w, outbox, r.ensureLoaderChildren); !ok {
		return ctrl.Result{}, err
	}
	outcomes, err := r.readLoaders(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	recordRetries(run, outbox, outcomes)
	if reason, msg := r.loadProblem(ctx, run, outcomes); reason != "" {
		r.fail(run, outbox, reason, msg)
		return ctrl.Result{}, nil
	}
	if loadersDone(outcomes) == len(outcomes) {
		return r.completeLoad(ctx, run, w, outbox)
	}
	r.recordLoadProgress(run, outcomes)
	requeue, field, late := r.untilDeadline(run)
	if late {
		ds := run.Status.Dataset
		r.fail(run, outbox, v1alpha1.ReasonDeadlineExceeded, fmt.Sprintf("the dataset was not loaded within spec.deadlines.%s: %d of %d rows, %d of %d loaders done; "+
			"check the loader pods' logs and events, or raise dataset.loaderPods", field, ds.Loaded, ds.Rows, loadersDone(outcomes), len(outcomes)))
		return ctrl.Result{}, nil
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// readLoaders reads every loader ConfigMap; a missing one reads as empty.
func (r *BenchmarkRunReconciler) readLoaders(ctx context.Context, run *v1alpha1.BenchmarkRun) ([]loaderOutcome, error) {
	out := make([]loaderOutcome, loaderPods(run))
	for i := range out {
		out[i].index = i
		cm := &corev1.ConfigMap{}
		err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: protocol.LoaderConfigMapName(run.Name, i)}, cm)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, err
		}
		// Written by a pod: a report that does not decode is an error on
		// that loader, never a panic nor an error of the reconcile.
		if out[i].LoaderReport, err = protocol.DecodeLoaderReport(cm.Data); err != nil {
			out[i].LoaderReport, out[i].err = protocol.LoaderReport{}, err
		}
	}
	return out, nil
}

func loadersDone(outcomes []loaderOutcome) int {
	n := 0
	for _, o := range outcomes {
		if o.State == protocol.StateSucceeded {
			n++
		}
	}
	return n
}

// loadProblem finds a reason to fail the load: a loader map that holds
// what no spanbench loader writes, a slice whose every retry failed, a
// loader Job that failed as a whole (its backstop deadline), or an image
// that cannot be pulled. A loader that reported Failed but still has
// retries left is not one: the Job starts it again.
func (r *BenchmarkRunReconciler) loadProblem(ctx context.Context, run *v1alpha1.BenchmarkRun, outcomes []loaderOutcome) (reason, message string) {
	for _, o := range outcomes {
		if o.err != nil {
			return v1alpha1.ReasonDatasetLoadFailed, fmt.Sprintf("loader %d's ConfigMap %s holds no report a spanbench loader writes: %v",
				o.index, protocol.LoaderConfigMapName(run.Name, o.index), o.err)
		}
	}
	job := &batchv1.Job{}
	err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: v1alpha1.LoaderJobName(run)}, job)
	if err == nil {
		if job.Status.FailedIndexes != nil && *job.Status.FailedIndexes != "" {
			failed := keys(parseIndexes(*job.Status.FailedIndexes))
			return v1alpha1.ReasonDatasetLoadFailed, fmt.Sprintf("loading slices %v of the dataset failed %d times each: %s",
				failed, LoaderRetries+1, loaderMessages(outcomes, failed))
		}
		for _, c := range job.Status.Conditions {
			if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
				return v1alpha1.ReasonDatasetLoadFailed, fmt.Sprintf("the loader Job failed (%s: %s)", c.Reason, c.Message)
			}
		}
	}
	if msg := r.imagePullProblem(ctx, run); msg != "" {
		return v1alpha1.ReasonRunnerImagePullFailed, msg
	}
	return "", ""
}

// recordRetries counts the loaders' retries into status.dataset.retries
// and, when the count grew, says in an event which loaders the Job started
// again and where each resumed: the failed pods themselves are deleted with
// the loader Job, so this is what is left to tell a crash happened.
func recordRetries(run *v1alpha1.BenchmarkRun, outbox *eventOutbox, outcomes []loaderOutcome) {
	ds := run.Status.Dataset
	if ds == nil {
		return
	}
	var total int32
	var retried []string
	for _, o := range outcomes {
		if o.Retries == 0 {
			continue
		}
		total += o.Retries
		from, to := protocol.SliceBounds(ds.Rows, o.index, len(outcomes))
		retried = append(retried, fmt.Sprintf("loader %d on retry %d of %d resumed its slice of rows [%d, %d) at row %d",
			o.index, o.Retries, LoaderRetries, from, to, o.ResumedAt))
	}
	if total <= ds.Retries {
		return
	}
	ds.Retries = total
	outbox.warning(v1alpha1.ReasonLoaderRetried, "the loader Job started failed loaders again: "+strings.Join(retried, "; "))
}

// loaderMessages are the failure messages of the given loaders, for a
// condition.
func loaderMessages(outcomes []loaderOutcome, indexes []int) string {
	sort.Ints(indexes)
	var msgs []string
	for _, i := range indexes {
		if i >= 0 && i < len(outcomes) && outcomes[i].Message != "" {
			msgs = append(msgs, fmt.Sprintf("loader %d: %s", i, outcomes[i].Message))
		}
	}
	if len(msgs) == 0 {
		return "see the loader pods' logs"
	}
	return strings.Join(msgs, "; ")
}

// completeLoad records the loaded dataset in the database's marker and in
// the run, and stops the loader Job, whose pods have all finished.
func (r *BenchmarkRunReconciler) completeLoad(ctx context.Context, run *v1alpha1.BenchmarkRun, w *v1alpha1.WorkloadSpec, outbox *eventOutbox) (ctrl.Result, error) {
	if err := r.Preparer.CompleteDataset(ctx, run, w); err != nil {
		return ctrl.Result{}, fmt.Errorf("recording the loaded dataset: %w", err)
	}
	msg := r.completeLoadProgress(run)
	run.SetCondition(v1alpha1.ConditionDatasetLoaded, metav1.ConditionTrue, v1alpha1.ReasonDatasetReady, msg, r.now())
	outbox.normal(v1alpha1.ReasonDatasetReady, msg)
	if !r.KeepRunners {
		if err := r.deleteJob(ctx, run, v1alpha1.LoaderJobName(run)); err != nil {
			return ctrl.Result{}, err
		}
	}
	return requeueSoon, nil
}

// recordLoadProgress sums the rows the loaders report into status.dataset,
// with the average rate since the stage began. Loader maps are written by
// pods: the sum is capped at the dataset's size.
//
// The status changes only when the loaders report something new. The rate
// is recomputed with the rows, not on every reconcile: a rate that moved
// with the clock would make every status write trigger the next reconcile
// and write again, without end.
func (r *BenchmarkRunReconciler) recordLoadProgress(run *v1alpha1.BenchmarkRun, outcomes []loaderOutcome) {
	ds := run.Status.Dataset
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionDatasetLoaded)
	if ds == nil || c == nil || c.Status == metav1.ConditionTrue {
		return
	}
	var loaded int64
	var retried []string
	for _, o := range outcomes {
		loaded += o.Loaded
		if o.State == protocol.StateFailed {
			retried = append(retried, fmt.Sprintf("loader %d failed and is retried: %s", o.index, o.Message))
		}
	}
	loaded = min(loaded, ds.Rows)
	if loaded != ds.Loaded || ds.RowsPerSecond == "" {
		ds.Loaded = loaded
		ds.RowsPerSecond = rowsPerSecond(ds.Loaded, r.now().Sub(c.LastTransitionTime.Time))
	}
	msg := fmt.Sprintf("%d loader pods are loading the dataset: %d of %d rows (%d%%), %s rows/s, %d loaders done",
		len(outcomes), ds.Loaded, ds.Rows, percent(ds.Loaded, ds.Rows), ds.RowsPerSecond, loadersDone(outcomes))
	if len(retried) > 0 {
		msg += "; " + strings.Join(retried, "; ")
	}
	run.SetCondition(v1alpha1.ConditionDatasetLoaded, metav1.ConditionFalse, v1alpha1.ReasonLoading, msg, r.now())
}

// completeLoadProgress records a finished load and says so.
func (r *BenchmarkRunReconciler) completeLoadProgress(run *v1alpha1.BenchmarkRun) string {
	ds := run.Status.Dataset
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionDatasetLoaded)
	if ds == nil || c == nil {
		return "the loaders loaded the dataset"
	}
	ds.Loaded = ds.Rows
	took := r.now().Sub(c.LastTransitionTime.Time)
	ds.RowsPerSecond = rowsPerSecond(ds.Rows, took)
	return fmt.Sprintf("%d loader pods loaded the dataset: %d rows of table %s in %s (%s rows/s)",
		loaderPods(run), ds.Rows, ds.Table, took.Round(time.Second), ds.RowsPerSecond)
}

func rowsPerSecond(rows int64, d time.Duration) string {
	if d <= 0 {
		return v1alpha1.FormatThroughput(0)
	}
	return v1alpha1.FormatThroughput(float64(rows) / d.Seconds())
}

func percent(n, of int64) int64 {
	if of <= 0 {
		return 100
	}
	return n * 100 / of
}
