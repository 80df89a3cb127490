package controllers

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// The Loading stage: when the dataset marker did not match, each runner
// loads its slice of the key space before it reports ready, and reports
// the rows it loaded in its shard map as it goes. These functions turn the
// reports into status.dataset and the DatasetLoaded condition's message,
// so that `kubectl get` (phase Loading) and `kubectl describe` show the
// load moving.

// recordLoadProgress sums the rows the runners report loaded into
// status.dataset, with the average rate since the stage began. Shard maps
// are written by pods: the sum is capped at the dataset's size.
func (r *BenchmarkRunReconciler) recordLoadProgress(run *v1alpha1.BenchmarkRun, outcomes []shardOutcome) {
	ds := run.Status.Dataset
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionDatasetLoaded)
	if ds == nil || c == nil || c.Status == metav1.ConditionTrue {
		return
	}
	var loaded int64
	for _, o := range outcomes {
		loaded += o.loaded
	}
	ds.Loaded = min(loaded, ds.Rows)
	ds.RowsPerSecond = rowsPerSecond(ds.Loaded, r.now().Sub(c.LastTransitionTime.Time))
	msg := fmt.Sprintf("the runners are loading the dataset: %d of %d rows (%d%%), %s rows/s", ds.Loaded, ds.Rows, percent(ds.Loaded, ds.Rows), ds.RowsPerSecond)
	run.SetCondition(v1alpha1.ConditionDatasetLoaded, metav1.ConditionFalse, v1alpha1.ReasonLoading, msg, r.now())
}

// completeLoadProgress records a finished load and says so.
func (r *BenchmarkRunReconciler) completeLoadProgress(run *v1alpha1.BenchmarkRun) string {
	ds := run.Status.Dataset
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionDatasetLoaded)
	if ds == nil || c == nil {
		return "the runners loaded the dataset"
	}
	ds.Loaded = ds.Rows
	took := r.now().Sub(c.LastTransitionTime.Time)
	ds.RowsPerSecond = rowsPerSecond(ds.Rows, took)
	return fmt.Sprintf("the runners loaded the dataset: %d rows of table %s in %s (%s rows/s)", ds.Rows, ds.Table, took.Round(time.Second), ds.RowsPerSecond)
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
