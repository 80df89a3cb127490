package benchmarkrun

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/runtest"
	"github.com/spanbench/spanbench/runner/protocol"
)

// loadingRun is a run in its Loading stage since start, with a dataset
// of rows to load.
func loadingRun(start time.Time, rows int64) *v1alpha1.BenchmarkRun {
	run := runtest.Bare("load").Obj()
	run.SetCondition(v1alpha1.ConditionTargetReady, metav1.ConditionTrue, v1alpha1.ReasonTargetAvailable, "ready", start)
	run.SetCondition(v1alpha1.ConditionDatasetLoaded, metav1.ConditionFalse, v1alpha1.ReasonLoading, "loading", start)
	run.Status.Dataset = &v1alpha1.DatasetStatus{Table: "usertable", Rows: rows, Source: v1alpha1.DatasetLoaded}
	return run
}

func TestLoadProgressSumsTheLoadersReports(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &BenchmarkRunReconciler{Clock: clocktesting.NewFakePassiveClock(start.Add(10 * time.Second))}
	run := loadingRun(start, 1000)
	r.recordLoadProgress(run, []loaderOutcome{
		{index: 0, LoaderReport: protocol.LoaderReport{Loaded: 300, State: protocol.StateSucceeded}},
		{index: 1, LoaderReport: protocol.LoaderReport{Loaded: 100, State: protocol.StateFailed, Message: "node drained"}},
		{index: 2}}, 1000)
	ds := run.Status.Dataset
	if ds.Loaded != 400 || ds.RowsPerSecond != "40.0" {
		t.Errorf("status.dataset = %+v; want 400 rows loaded at 40.0 rows/s", ds)
	}
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionDatasetLoaded)
	for _, want := range []string{"3 loader pods", "400 of 1000 rows (40%)", "1 loaders done", "loader 1 failed and is retried: node drained"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("DatasetLoaded says %q; want it to say %q", c.Message, want)
		}
	}
	if c.Status != metav1.ConditionFalse || !c.LastTransitionTime.Time.Equal(start) {
		t.Errorf("DatasetLoaded = %+v; want False, still since the stage began", c)
	}
	if run.Status.Phase != v1alpha1.PhaseLoading {
		t.Errorf("phase %s during the load, want Loading", run.Status.Phase)
	}

	// Loader maps are written by pods: an inflated report is capped.
	r.recordLoadProgress(run, []loaderOutcome{{index: 0, LoaderReport: protocol.LoaderReport{Loaded: 1 << 40}}}, 1000)
	if ds.Loaded != 1000 {
		t.Errorf("an inflated report gives %d rows loaded; want it capped at 1000", ds.Loaded)
	}

	msg := r.completeLoadProgress(run, 1000)
	if ds.Loaded != 1000 || ds.RowsPerSecond != "100.0" || !strings.Contains(msg, "1000 rows of table usertable in 10s") {
		t.Errorf("after the load: %+v, %q", ds, msg)
	}
}

// TestLoadProgressOfSomeTablesCountsOnlyThem: a Custom dataset of 1000
// units whose Singers and Labels markers matched loads Albums alone, over
// the 300 units that hold albums: progress counts those, capped there,
// and every message says which tables load and which were kept.
func TestLoadProgressOfSomeTablesCountsOnlyThem(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &BenchmarkRunReconciler{Clock: clocktesting.NewFakePassiveClock(start.Add(10 * time.Second))}
	run := loadingRun(start, 1000)
	ds := run.Status.Dataset
	ds.Table = "Singers"
	ds.Tables = []v1alpha1.DatasetTableStatus{{Name: "Singers", Rows: 300, Source: v1alpha1.DatasetExisting},
		{Name: "Albums", Rows: 900, Source: v1alpha1.DatasetReloaded}, {Name: "Labels", Rows: 1000, Source: v1alpha1.DatasetExisting}}
	if got := loadTables(run); len(got) != 1 || got[0] != "Albums" {
		t.Fatalf("loadTables = %q; want the loaders told to load Albums alone", got)
	}
	r.recordLoadProgress(run, []loaderOutcome{{index: 0, LoaderReport: protocol.LoaderReport{Loaded: 150}}, {index: 1, LoaderReport: protocol.LoaderReport{Loaded: 1 << 40}}}, 300)
	if ds.Loaded != 300 {
		t.Errorf("an inflated report gives %d units loaded; want it capped at the load's 300", ds.Loaded)
	}
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionDatasetLoaded)
	for _, want := range []string{"300 of 300 rows (100%)", "2 of 3 tables already loaded (markers match: Singers, Labels); loading Albums"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("DatasetLoaded says %q; want it to say %q", c.Message, want)
		}
	}
	msg := r.completeLoadProgress(run, 300)
	want := "1 loader pods loaded Albums (900 rows) in 10s: 300 load units, 30.0 units/s; 2 of 3 tables were already loaded (markers match: Singers, Labels) and not written"
	if ds.Loaded != 1000 || ds.RowsPerSecond != "30.0" || msg != want {
		t.Errorf("after the load: %+v, %q; want the whole dataset held, the load's own rate, and the message %q", ds, msg, want)
	}
}

func TestLoadProgressLeavesAFinishedOrSkippedLoadAlone(t *testing.T) {
	start := time.Now()
	r := &BenchmarkRunReconciler{Clock: clocktesting.NewFakePassiveClock(start)}
	run := loadingRun(start, 1000)
	run.SetCondition(v1alpha1.ConditionDatasetLoaded, metav1.ConditionTrue, v1alpha1.ReasonDatasetReady, "already holds", start)
	run.Status.Dataset.Loaded = 1000
	r.recordLoadProgress(run, []loaderOutcome{{LoaderReport: protocol.LoaderReport{Loaded: 5}}}, 1000)
	if run.Status.Dataset.Loaded != 1000 {
		t.Errorf("a loaded dataset's progress was overwritten: %+v", run.Status.Dataset)
	}
}

func TestLoaderMessagesNameTheFailedSlices(t *testing.T) {
	outcomes := []loaderOutcome{{index: 0}, {index: 1, LoaderReport: protocol.LoaderReport{Message: "permission denied"}},
		{index: 2, LoaderReport: protocol.LoaderReport{Message: "table not found"}}}
	if got := loaderMessages(outcomes, []int{2, 1, 7}); got != "loader 1: permission denied; loader 2: table not found" {
		t.Errorf("loaderMessages = %q; want both failures in index order, the unknown index skipped", got)
	}
	if got := loaderMessages(outcomes, []int{0}); !strings.Contains(got, "logs") {
		t.Errorf("loaderMessages without a message = %q; want a pointer to the logs", got)
	}
}
