package benchmarkrun_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/spanner"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/controllers/benchmarkrun/children"
	"github.com/spanbench/spanbench/controllers/collectors"
	"github.com/spanbench/spanbench/controllers/runreport"
	"github.com/spanbench/spanbench/runner/pod"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/session"
)

// patchLoader writes rep into loader i's map, as that loader pod would.
func (h *harness) patchLoader(run *v1alpha1.BenchmarkRun, i int, rep protocol.LoaderReport) {
	h.t.Helper()
	h.patchMap(protocol.LoaderConfigMapName(run.Name, i), protocol.EncodeLoaderReport(rep))
}

// loaderJobDeleted waits until the run's loader Job is gone or going.
func (h *harness) loaderJobDeleted(run *v1alpha1.BenchmarkRun) {
	h.t.Helper()
	h.eventually("the loader Job is deleted", 10*time.Second, func() bool {
		j := h.job(v1alpha1.LoaderJobName(run))
		return j == nil || j.DeletionTimestamp != nil
	})
}

// rowCount counts the rows of the run's YCSB table.
func (h *harness) rowCount(run *v1alpha1.BenchmarkRun) int64 {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := session.Open(ctx, endpoint.Emulator(run.Spec.Target.EmulatorHost), run.Spec.Target)
	if err != nil {
		h.t.Fatal(err)
	}
	defer s.Close()
	var n int64
	err = s.Client.Single().Query(ctx, spanner.Statement{SQL: "SELECT COUNT(*) FROM usertable"}).Do(func(r *spanner.Row) error { return r.Column(0, &n) })
	if err != nil {
		h.t.Fatalf("counting rows: %v", err)
	}
	return n
}

// TestLoaderJobLoadsTheDatasetBeforeTheRunnersStart: a run on a new
// database first gets an Indexed Job of dataset.loaderPods loader pods (and
// no runners); the loaders split the key space between them; once every
// slice is loaded the run records the dataset, removes the loader Job and
// only then creates its runners.
func TestLoaderJobLoadsTheDatasetBeforeTheRunnersStart(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	run := h.runSpec("loaders", 1)
	run.Spec.Workload.Dataset.LoaderPods = ptr.To[int32](3)
	h.create(run)

	h.eventually("the loader Job exists", 20*time.Second, func() bool { return h.job(v1alpha1.LoaderJobName(run)) != nil })
	job := h.job(v1alpha1.LoaderJobName(run))
	if *job.Spec.Completions != 3 || *job.Spec.BackoffLimitPerIndex != children.LoaderRetries {
		t.Errorf("loader Job has %d completions, %d retries per index; want 3 and %d", *job.Spec.Completions, *job.Spec.BackoffLimitPerIndex, children.LoaderRetries)
	}
	if got := h.current(run); got.Status.Phase != v1alpha1.PhaseLoading || h.job(v1alpha1.RunnerJobName(run)) != nil {
		t.Fatalf("while loading: phase %s, runner Job exists: %v; want Loading and no runners yet", got.Status.Phase, h.job(v1alpha1.RunnerJobName(run)) != nil)
	}
	for i, err := range h.runLoaders(h.podClient(run), run) {
		if err != nil {
			t.Fatalf("loader %d failed: %v", i, err)
		}
	}
	for i := range 3 {
		cm := h.configMap(protocol.LoaderConfigMapName(run.Name, i))
		if rep, err := protocol.DecodeLoaderReport(cm.Data); err != nil || rep.Loaded != 100 {
			t.Errorf("loader %d reported %+v, %v; want its third, 100 rows", i, rep, err)
		}
	}
	if n := h.rowCount(run); n != 300 {
		t.Fatalf("the loaders left %d rows; want exactly 300", n)
	}

	h.kubelet(run, 0)
	got := h.finished(run, 90*time.Second)
	if c := h.condition(got, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionTrue {
		t.Fatalf("run ended %s/%s: %s", c.Status, c.Reason, c.Message)
	}
	c := h.condition(got, v1alpha1.ConditionDatasetLoaded)
	if c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "3 loader pods loaded the dataset: 300 rows") {
		t.Errorf("DatasetLoaded = %s %q; want True saying 3 loader pods loaded 300 rows", c.Status, c.Message)
	}
	if ds := got.Status.Dataset; ds == nil || ds.Loaded != 300 || ds.Source != v1alpha1.DatasetLoaded ||
		len(ds.DDL) != 1 || !strings.HasPrefix(ds.DDL[0], "CREATE TABLE usertable") {
		t.Errorf("status.dataset = %+v; want 300 rows loaded by the run, and usertable's DDL", ds)
	}
	if tg := got.Status.Target; tg == nil || tg.Dialect != v1alpha1.DialectGoogleSQL {
		t.Errorf("status.target = %+v; want dialect GoogleSQL (the default) recorded", tg)
	}
	h.loaderJobDeleted(run)
}

// twoLoaderRun creates a one-runner run whose dataset two loader pods
// load, and waits for their maps, which the tests then write as the
// loaders would.
func (h *harness) twoLoaderRun(name string) *v1alpha1.BenchmarkRun {
	h.t.Helper()
	run := h.runSpec(name, 1)
	run.Spec.Workload.Dataset.LoaderPods = ptr.To[int32](2)
	h.create(run)
	h.eventually("the loader maps exist", 20*time.Second, func() bool { return h.configMap(protocol.LoaderConfigMapName(run.Name, 1)) != nil })
	return run
}

// TestLoadProgressShowsInTheStatus plays two loaders reporting their rows:
// the run is in phase Loading and its status sums them.
func TestLoadProgressShowsInTheStatus(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	run := h.twoLoaderRun("progress")
	h.patchLoader(run, 0, protocol.LoaderReport{State: protocol.StateLoading, Loaded: 100})
	h.patchLoader(run, 1, protocol.LoaderReport{State: protocol.StateSucceeded, Loaded: 50})
	var got *v1alpha1.BenchmarkRun
	h.eventually("the status shows 150 rows loaded", 10*time.Second, func() bool {
		got = h.current(run)
		return got.Status.Dataset != nil && got.Status.Dataset.Loaded == 150
	})
	if got.Status.Phase != v1alpha1.PhaseLoading || got.Status.Dataset.RowsPerSecond == "" {
		t.Errorf("phase %s, dataset %+v; want Loading with a rate", got.Status.Phase, got.Status.Dataset)
	}
	if c := h.condition(got, v1alpha1.ConditionDatasetLoaded); c.Reason != v1alpha1.ReasonLoading || !strings.Contains(c.Message, "150 of 300 rows (50%)") ||
		!strings.Contains(c.Message, "1 loaders done") {
		t.Errorf("DatasetLoaded is %s %q; want Loading with 150 of 300 rows (50%%), 1 loaders done", c.Reason, c.Message)
	}
	if h.job(v1alpha1.RunnerJobName(run)) != nil {
		t.Error("the runners were created while the dataset was loading")
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(&collectors.ResultsCollector{Reader: h.c})
	for state, want := range map[string]float64{"total": 300, "loaded": 150} {
		if got := gauge(t, reg, "spanbench_run_dataset_rows", map[string]string{"run": run.Name, "state": state}); got != want {
			t.Errorf("while loading, spanbench_run_dataset_rows{state=%q} = %v, want %v", state, got, want)
		}
	}
}

// TestRetriedLoaderIsCountedAndAnnounced: a loader attempt that reports it
// is a retry is counted in status.dataset.retries and announced once, with
// where it resumed; the failed pod is deleted with the Job, so this is what
// tells a user it happened.
func TestRetriedLoaderIsCountedAndAnnounced(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	run := h.twoLoaderRun("retried")
	h.patchLoader(run, 1, protocol.LoaderReport{State: protocol.StateLoading, Loaded: 20, ResumeFrom: 170, Retries: 1, ResumedAt: 170})
	h.eventually("the status counts the retry", 10*time.Second, func() bool {
		ds := h.current(run).Status.Dataset
		return ds != nil && ds.Retries == 1 && ds.Loaded == 20
	})
	want := "loader 1 on retry 1 of 3 resumed its slice of rows [150, 300) at row 170"
	var events []corev1.Event
	h.eventually("a LoaderRetried event", 10*time.Second, func() bool {
		events = h.eventsOf(run, v1alpha1.ReasonLoaderRetried)
		return len(events) > 0
	})
	if !strings.Contains(events[0].Message, want) {
		t.Errorf("LoaderRetried says %q; want it to say %q", events[0].Message, want)
	}

	// A later report of the same attempt is not announced again.
	h.patchLoader(run, 1, protocol.LoaderReport{State: protocol.StateLoading, Loaded: 40, ResumeFrom: 190, Retries: 1, ResumedAt: 170})
	h.eventually("the status shows the next report", 10*time.Second, func() bool { return h.current(run).Status.Dataset.Loaded == 40 })
	// Events are sent asynchronously: watch long enough for a second one
	// to have arrived.
	h.consistently("one LoaderRetried event, sent once, after a further report", 2*time.Second, func() (bool, string) {
		events = h.eventsOf(run, v1alpha1.ReasonLoaderRetried)
		counts := make([]int32, len(events))
		for i, e := range events {
			counts[i] = e.Count
		}
		return len(events) == 1 && events[0].Count == 1, fmt.Sprintf("%d LoaderRetried events, sent %v times", len(events), counts)
	})
}

// eventsOf lists the run's events of one reason.
func (h *harness) eventsOf(run *v1alpha1.BenchmarkRun, reason string) []corev1.Event {
	h.t.Helper()
	list := &corev1.EventList{}
	if err := h.c.List(context.Background(), list, client.InNamespace(h.ns)); err != nil {
		h.t.Fatal(err)
	}
	var out []corev1.Event
	for _, e := range list.Items {
		if e.InvolvedObject.Name == run.Name && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// TestQuietLoadersCauseNoStatusWrites: while the loaders report nothing
// new, the run is not rewritten. A load rate recomputed from the clock on
// every reconcile made each status write trigger the next: about 50 writes
// a second for as long as a load lasts.
func TestQuietLoadersCauseNoStatusWrites(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	run := h.runSpec("quiet", 1)
	h.create(run)
	h.eventually("the loader map exists", 20*time.Second, func() bool { return h.configMap(protocol.LoaderConfigMapName(run.Name, 0)) != nil })
	h.patchLoader(run, 0, protocol.LoaderReport{State: protocol.StateLoading, Loaded: 120})
	h.eventually("the status shows the report", 10*time.Second, func() bool {
		ds := h.current(run).Status.Dataset
		return ds != nil && ds.Loaded == 120
	})
	// The reconcile that the status write itself triggers may still be in
	// flight: wait until two looks in a row see the same version, then
	// watch that it stays.
	before := h.current(run).ResourceVersion
	h.eventually("the run to stop changing after the report", 5*time.Second, func() bool {
		now := h.current(run).ResourceVersion
		same := now == before
		before = now
		return same
	})
	h.consistently("the run not rewritten while its loaders report nothing new", 2*time.Second, func() (bool, string) {
		now := h.current(run).ResourceVersion
		return now == before, fmt.Sprintf("resourceVersion %s, then %s", before, now)
	})
}

// TestLoaderThatFailsEveryRetryFailsTheRun: a slice whose loader failed
// and whose retries the Job used up fails the run with the loader's own
// message; no runner is ever created and the loaders are stopped.
func TestLoaderThatFailsEveryRetryFailsTheRun(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	run := h.twoLoaderRun("doomed")

	// A failed loader with retries left is only reported.
	h.patchLoader(run, 1, protocol.LoaderReport{State: protocol.StateFailed, Message: "spanner: PermissionDenied on usertable"})
	h.eventually("the retry is reported", 10*time.Second, func() bool {
		c := h.condition(h.current(run), v1alpha1.ConditionDatasetLoaded)
		return c != nil && strings.Contains(c.Message, "loader 1 failed and is retried")
	})
	if got := h.current(run); got.IsFinished() {
		t.Fatalf("a loader with retries left failed the run: %+v", h.condition(got, v1alpha1.ConditionSucceeded))
	}

	h.failJobIndex(v1alpha1.LoaderJobName(run), "1")
	got := h.finished(run, 20*time.Second)
	c := h.condition(got, v1alpha1.ConditionSucceeded)
	if c.Reason != v1alpha1.ReasonDatasetLoadFailed || !strings.Contains(c.Message, "loader 1: spanner: PermissionDenied on usertable") {
		t.Fatalf("run ended %s %q; want DatasetLoadFailed with loader 1's message", c.Reason, c.Message)
	}
	if h.job(v1alpha1.RunnerJobName(run)) != nil {
		t.Error("a run whose load failed created runners")
	}
	h.loaderJobDeleted(run)
}

// TestLoadThatMissesItsDeadlineFailsTheRun: loaders that never finish fail
// the run at spec.deadlines.load, saying how far the load got.
func TestLoadThatMissesItsDeadlineFailsTheRun(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	run := h.runSpec("slow", 1)
	run.Spec.Deadlines.Load = &metav1.Duration{Duration: 3 * time.Second}
	h.create(run)
	h.eventually("the loader map exists", 20*time.Second, func() bool { return h.configMap(protocol.LoaderConfigMapName(run.Name, 0)) != nil })
	h.patchLoader(run, 0, protocol.LoaderReport{State: protocol.StateLoading, Loaded: 42})
	got := h.finished(run, 30*time.Second)
	c := h.condition(got, v1alpha1.ConditionSucceeded)
	if c.Reason != v1alpha1.ReasonDeadlineExceeded || !strings.Contains(c.Message, "spec.deadlines.load: 42 of 300 rows, 0 of 1 loaders done") {
		t.Fatalf("run ended %s %q; want DeadlineExceeded at spec.deadlines.load with 42 of 300 rows", c.Reason, c.Message)
	}
	if h.job(v1alpha1.RunnerJobName(run)) != nil {
		t.Error("a run whose load timed out created runners")
	}
}

// TestPostgreSQLRunCreatesLoadsAndRuns: a run asking for the PostgreSQL
// dialect gets a PostgreSQL database with the workload's PostgreSQL schema
// (recorded in the status), loaded and measured through the same loader
// and runner pods.
func TestPostgreSQLRunCreatesLoadsAndRuns(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	run := h.runSpec("postgres", 2)
	run.Spec.Target.Dialect = v1alpha1.DialectPostgreSQL
	run.Spec.Workload.Operations = []v1alpha1.OperationSpec{
		{Type: v1alpha1.OpRead, Weight: 2, API: v1alpha1.APISQL},
		{Type: v1alpha1.OpUpdate, Weight: 1, WritePath: v1alpha1.WriteDML}}
	h.create(run)
	h.kubelet(run, 0, 1)
	got := h.finished(run, 90*time.Second)
	if c := h.condition(got, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonCompleted {
		t.Fatalf("run ended %s/%s: %s", c.Status, c.Reason, c.Message)
	}
	if got.Status.Overall == nil || got.Status.Overall.Count == 0 || got.Status.Overall.Errors != 0 {
		t.Errorf("overall figures %+v; want operations and no errors through SQL and DML on PostgreSQL", got.Status.Overall)
	}
	if tg := got.Status.Target; tg == nil || tg.Dialect != v1alpha1.DialectPostgreSQL {
		t.Errorf("status.target = %+v; want dialect PostgreSQL", tg)
	}
	if ds := got.Status.Dataset; ds == nil || len(ds.DDL) != 1 || !strings.Contains(ds.DDL[0], "varchar") || ds.Loaded != 300 {
		t.Errorf("status.dataset = %+v; want 300 rows and the PostgreSQL DDL of usertable", ds)
	}
	if n := h.rowCount(run); n != 300 {
		t.Errorf("the PostgreSQL table holds %d rows; want 300", n)
	}
	doc, err := runreport.ReadReport(context.Background(), h.c, client.ObjectKeyFromObject(run), pod.RunArrivals)
	if err != nil {
		t.Fatalf("reading the run's report: %v", err)
	}
	if doc.Target.Dialect != "PostgreSQL" {
		t.Errorf("the merged result's target is %+v; want dialect PostgreSQL recorded with the figures", doc.Target)
	}
}
