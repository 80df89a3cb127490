package benchmarkrun

import (
	"context"
	"fmt"
	"slices"
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
	"github.com/spanbench/spanbench/controllers/benchmarkrun/children"
	"github.com/spanbench/spanbench/controllers/statuswrite"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/spanner/dataset"
	"github.com/spanbench/spanbench/spanner/workload"
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
func (r *BenchmarkRunReconciler) awaitLoad(ctx context.Context, run *v1alpha1.BenchmarkRun, w *v1alpha1.WorkloadSpec, outbox *statuswrite.Outbox) (ctrl.Result, error) {
	if ok, err := r.ensureChildren(ctx, run, w, outbox, r.ensureLoaderChildren); !ok {
		return ctrl.Result{}, err
	}
	units, err := loadUnits(run, w)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("sizing the load: %w", err)
	}
	outcomes, err := r.readLoaders(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	recordRetries(run, outbox, outcomes, units)
	if reason, msg := r.loadProblem(ctx, run, outcomes); reason != "" {
		r.fail(run, outbox, reason, msg)
		return ctrl.Result{}, nil
	}
	if loadersDone(outcomes) == len(outcomes) {
		return r.completeLoad(ctx, run, w, outbox, units)
	}
	r.recordLoadProgress(run, outcomes, units)
	requeue, field, late := r.untilDeadline(run)
	if late {
		ds := run.Status.Dataset
		r.fail(run, outbox, v1alpha1.ReasonDeadlineExceeded, fmt.Sprintf("the dataset was not loaded within spec.deadlines.%s: %d of %d rows, %d of %d loaders done; "+
			"check the loader pods' logs and events, or raise dataset.loaderPods", field, ds.Loaded, units, loadersDone(outcomes), len(outcomes)))
		return ctrl.Result{}, nil
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// loadTables are the tables the loader pods load, of a dataset with a
// marker per table (status.dataset.tables, as Prepare planned it): those
// whose marker did not match. nil loads every table.
func loadTables(run *v1alpha1.BenchmarkRun) []string {
	_, load := tableScope(run.Status.Dataset)
	return load
}

// tableScope are the tables of a dataset with a marker per table that the
// run keeps (their markers matched) and loads; both nil for the built-in
// workloads.
func tableScope(ds *v1alpha1.DatasetStatus) (keep, load []string) {
	if ds == nil {
		return nil, nil
	}
	for _, t := range ds.Tables {
		if t.Source == v1alpha1.DatasetExisting {
			keep = append(keep, t.Name)
		} else {
			load = append(load, t.Name)
		}
	}
	return keep, load
}

// loadUnits is the size of the loaders' key space: the dataset's rows,
// or, when some tables of a dataset with a marker per table are kept,
// the units that hold a row of the others (dataset.LoadOf, which the
// loader pods size their slices with too).
func loadUnits(run *v1alpha1.BenchmarkRun, w *v1alpha1.WorkloadSpec) (int64, error) {
	ds := run.Status.Dataset
	if ds == nil {
		return 0, nil
	}
	keep, load := tableScope(ds)
	if len(keep) == 0 {
		return ds.Rows, nil
	}
	schema, err := workload.SchemaFor(w, run.Spec.Target.Dialect)
	if err != nil {
		return 0, err
	}
	ld, err := dataset.LoadOf(schema, *w.Dataset.Rows, load)
	if err != nil {
		return 0, err
	}
	return ld.Units, nil
}

// readLoaders reads every loader ConfigMap; a missing one reads as empty.
func (r *BenchmarkRunReconciler) readLoaders(ctx context.Context, run *v1alpha1.BenchmarkRun) ([]loaderOutcome, error) {
	out := make([]loaderOutcome, run.LoaderPods())
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
				failed, children.LoaderRetries+1, loaderMessages(outcomes, failed))
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
func recordRetries(run *v1alpha1.BenchmarkRun, outbox *statuswrite.Outbox, outcomes []loaderOutcome, units int64) {
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
		from, to := protocol.SliceBounds(units, o.index, len(outcomes))
		retried = append(retried, fmt.Sprintf("loader %d on retry %d of %d resumed its slice of rows [%d, %d) at row %d",
			o.index, o.Retries, children.LoaderRetries, from, to, o.ResumedAt))
	}
	if total <= ds.Retries {
		return
	}
	ds.Retries = total
	outbox.Warning(v1alpha1.ReasonLoaderRetried, "the loader Job started failed loaders again: "+strings.Join(retried, "; "))
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
// the run. The loader Job, whose pods have all finished, stays until the
// run ends (job_cleanup.go): deleted here, before the status that says the
// load is done is stored and seen, a pass on a stale cached run (still
// Loading) would find the Job gone and create it again, a second set of
// loader pods.
func (r *BenchmarkRunReconciler) completeLoad(ctx context.Context, run *v1alpha1.BenchmarkRun, w *v1alpha1.WorkloadSpec, outbox *statuswrite.Outbox, units int64) (ctrl.Result, error) {
	cp, wc := run.DeepCopy(), w.DeepCopy()
	_, err, ok := spannerCall(ctx, r, run, "dataset-markers", "", prepareCallMax, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, r.Preparer.CompleteDataset(ctx, cp, wc)
	})
	if !ok {
		return ctrl.Result{RequeueAfter: spannerCallPoll}, nil
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("recording the loaded dataset: %w", err)
	}
	msg := r.completeLoadProgress(run, units)
	run.SetCondition(v1alpha1.ConditionDatasetLoaded, metav1.ConditionTrue, v1alpha1.ReasonDatasetReady, msg, r.now())
	outbox.Normal(v1alpha1.ReasonDatasetReady, msg)
	return statuswrite.RequeueSoon, nil
}

// recordLoadProgress sums the rows the loaders report into status.dataset,
// with the average rate since the stage began. Loader maps are written by
// pods: the sum is capped at the load's size, units (the rows of the
// tables being loaded, for a dataset whose other tables are kept).
//
// The status changes only when the loaders report something new. The rate
// is recomputed with the rows, not on every reconcile: a rate that moved
// with the clock would make every status write trigger the next reconcile
// and write again, without end.
func (r *BenchmarkRunReconciler) recordLoadProgress(run *v1alpha1.BenchmarkRun, outcomes []loaderOutcome, units int64) {
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
	loaded = min(loaded, units)
	if loaded != ds.Loaded || ds.RowsPerSecond == "" {
		ds.Loaded = loaded
		ds.RowsPerSecond = rowsPerSecond(ds.Loaded, r.now().Sub(c.LastTransitionTime.Time))
	}
	msg := fmt.Sprintf("%d loader pods are loading the dataset: %d of %d rows (%d%%), %s rows/s, %d loaders done",
		len(outcomes), ds.Loaded, units, percent(ds.Loaded, units), ds.RowsPerSecond, loadersDone(outcomes))
	if keep, load := tableScope(ds); len(load) > 0 {
		msg += "; " + dataset.Summary(keep, load)
	}
	if len(retried) > 0 {
		msg += "; " + strings.Join(retried, "; ")
	}
	run.SetCondition(v1alpha1.ConditionDatasetLoaded, metav1.ConditionFalse, v1alpha1.ReasonLoading, msg, r.now())
}

// completeLoadProgress records a finished load of units and says so: the
// dataset now holds all its rows, and the rate is the load's.
func (r *BenchmarkRunReconciler) completeLoadProgress(run *v1alpha1.BenchmarkRun, units int64) string {
	ds := run.Status.Dataset
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionDatasetLoaded)
	if ds == nil || c == nil {
		return "the loaders loaded the dataset"
	}
	ds.Loaded = ds.Rows
	took := r.now().Sub(c.LastTransitionTime.Time)
	ds.RowsPerSecond = rowsPerSecond(units, took)
	keep, load := tableScope(ds)
	if len(load) == 0 {
		return fmt.Sprintf("%d loader pods loaded the dataset: %d rows of table %s in %s (%s rows/s)",
			run.LoaderPods(), ds.Rows, ds.Table, took.Round(time.Second), ds.RowsPerSecond)
	}
	var loaded []string
	for _, t := range ds.Tables {
		if slices.Contains(load, t.Name) {
			loaded = append(loaded, fmt.Sprintf("%s (%d rows)", t.Name, t.Rows))
		}
	}
	msg := fmt.Sprintf("%d loader pods loaded %s in %s: %d load units, %s units/s",
		run.LoaderPods(), strings.Join(loaded, ", "), took.Round(time.Second), units, ds.RowsPerSecond)
	if len(keep) > 0 {
		msg += fmt.Sprintf("; %d of %d tables were already loaded (markers match: %s) and not written", len(keep), len(ds.Tables), strings.Join(keep, ", "))
	}
	return msg
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
