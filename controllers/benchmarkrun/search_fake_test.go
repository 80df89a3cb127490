package benchmarkrun_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/runtest"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/capacity"
	"github.com/spanbench/spanbench/result/histogram"
	"github.com/spanbench/spanbench/runner/protocol"
)

// The capacity search protocol (search.go) against the fake client: the
// runners' reports are written into their shard maps as a runner's patch
// does, and the controller's decisions are read from the control map and
// the status.

// searchPerStep is the search runs' step: 5 s warm-up and 10 s measured.
const searchPerStep = 15 * time.Second

// searchRun is a started two-runner search from 10 to 40 ops/s (steps 10,
// 20, 40), resolution 5, with p99(read) <= 20ms, lasting duration.
func searchRun(t *testing.T, duration time.Duration) (f *fakeReconcile, run *v1alpha1.BenchmarkRun, start time.Time) {
	t.Helper()
	return searchRunOf(t, runtest.Run("s"), duration, nil)
}

// searchRunOf is searchRun of b's run, changed by change (when not nil)
// before it is stored and started.
func searchRunOf(t *testing.T, b *runtest.Builder, duration time.Duration, change func(*v1alpha1.BenchmarkRun)) (f *fakeReconcile, run *v1alpha1.BenchmarkRun, start time.Time) {
	t.Helper()
	run = b.Created(t0).DatasetLoaded(t0).Replicas(2).Obj()
	run.Spec.Workload.Load = v1alpha1.LoadSpec{Search: &v1alpha1.SearchSpec{From: 10, Max: 40, Resolution: 5,
		WarmUp: &metav1.Duration{Duration: 5 * time.Second}, StepDuration: metav1.Duration{Duration: 10 * time.Second},
		SLO: []string{"p99(read) <= 20ms"}}}
	run.Spec.Workload.Duration = &metav1.Duration{Duration: duration}
	if change != nil {
		change(run)
	}
	f = newFakeReconcile(t, interceptor.Funcs{}, run)
	// A start time with milliseconds, as a real clock gives: the status
	// keeps whole seconds of it, the runners the published milliseconds.
	f.r.Runner.StartupGrace = 3250 * time.Millisecond
	releaseAndRun(t, f, run)
	start = publishedStart(t, f, run)
	return f, run, start
}

// releaseAndRun readies run's runners, has the controller publish the
// start time, and moves the fake clock to it for the Running pass's own
// condition write: the run is Running at its start time.
func releaseAndRun(t *testing.T, f *fakeReconcile, run *v1alpha1.BenchmarkRun) {
	t.Helper()
	runnersReady(t, f, run)
	if _, err := f.reconcile(run); err != nil {
		t.Fatal(err)
	}
	got := f.run(run)
	if got.Status.StartTime == nil {
		t.Fatal("no start time was published")
	}
	f.clock.SetTime(publishedStart(t, f, run))
	if _, err := f.reconcile(run); err != nil {
		t.Fatal(err)
	}
	if p := f.run(run).Status.Phase; p != v1alpha1.PhaseRunning {
		t.Fatalf("phase %s; want Running", p)
	}
}

// publishedStart is the start time the control map publishes, as the
// runners read it.
func publishedStart(t *testing.T, f *fakeReconcile, run *v1alpha1.BenchmarkRun) time.Time {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: protocol.ControlConfigMapName(run.Name), Namespace: run.Namespace}}
	if !f.exists(cm) {
		t.Fatal("no control map")
	}
	start, ok, err := protocol.DecodeStart(cm.Data)
	if err != nil || !ok {
		t.Fatalf("no start time published (%v)", err)
	}
	return start
}

// reportStep writes shard's measurement of step (at rate) into its map:
// its half of the rate's reads over the 10 s measured, each successful
// and taking latency.
func reportStep(t *testing.T, f *fakeReconcile, run *v1alpha1.BenchmarkRun, start time.Time, shard, step int, rate float64, latency time.Duration) {
	t.Helper()
	h := histogram.NewCompact()
	n := uint64(rate * 10 / 2)
	h.RecordValues(latency.Microseconds(), int64(n))
	m := capacity.Measurement{Offered: rate, Seconds: 10, Operations: map[string]*capacity.OperationMeasurement{
		"read": {Counts: result.Counts{OK: n}, Latency: h}}}
	rep, err := protocol.NewSearchReport(start, step, m)
	if err != nil {
		t.Fatal(err)
	}
	maps, err := protocol.EncodeSearchReport(rep)
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: protocol.ShardConfigMapName(run.Name, shard), Namespace: run.Namespace}}
	if !f.exists(cm) {
		t.Fatalf("no map for shard %d", shard)
	}
	cm.Data[protocol.KeySearchReport] = maps.Data[protocol.KeySearchReport]
	if err := f.stored.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
}

// publishedStep is the step the control map publishes; ok false while
// none is.
func publishedStep(t *testing.T, f *fakeReconcile, run *v1alpha1.BenchmarkRun) (protocol.SearchStep, bool) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: protocol.ControlConfigMapName(run.Name), Namespace: run.Namespace}}
	if !f.exists(cm) {
		t.Fatal("no control map")
	}
	s, ok, err := protocol.DecodeSearchStep(cm.Data)
	if err != nil {
		t.Fatal(err)
	}
	return s, ok
}

// TestSearchStepIsJudgedOnceEveryRunnerReportedItAndTheNextIsPublished:
// step 0 runs from the start time with nothing published; it is judged
// only once both runners reported it, from their merged histograms (shard
// 1's 30 ms fails p99 <= 20ms: exact merge, not an average), and the next
// step is published a startup grace ahead, numbered so that every
// runner's step lines up; the status carries the step table.
func TestSearchStepIsJudgedOnceEveryRunnerReportedItAndTheNextIsPublished(t *testing.T) {
	f, run, start := searchRun(t, 30*time.Minute)
	if _, ok := publishedStep(t, f, run); ok {
		t.Fatal("a step was published before step 0 was judged: step 0 is the start time's")
	}
	f.clock.SetTime(start.Add(searchPerStep + 500*time.Millisecond))
	reportStep(t, f, run, start, 0, 0, 10, 2*time.Millisecond)
	if _, err := f.reconcile(run); err != nil {
		t.Fatal(err)
	}
	if s, ok := publishedStep(t, f, run); ok {
		t.Fatalf("step %d was published with only one of two runners' reports of step 0", s.Step)
	}
	reportStep(t, f, run, start, 1, 0, 10, 2*time.Millisecond)
	res, err := f.reconcile(run)
	if err != nil {
		t.Fatal(err)
	}
	next, ok := publishedStep(t, f, run)
	now := f.clock.Now()
	switch {
	case !ok:
		t.Fatal("no step was published after step 0 passed")
	case next.Step != 1 || next.Rate != 20 || !next.Start.Equal(start) || next.Done:
		t.Fatalf("published %+v; want step 1 at 20 ops/s of the run started at %s", next, start)
	case !next.At.After(now) || next.At.After(now.Add(5*time.Second)):
		t.Fatalf("step 1 starts at %s; want within the startup grace after now (%s)", next.At, now)
	case res.RequeueAfter <= 0 || res.RequeueAfter > searchPerStep+5*time.Second:
		t.Fatalf("requeue after %s; want about step 1's end", res.RequeueAfter)
	}
	s := f.run(run).Status.Search
	if s == nil || len(s.Steps) != 1 || s.Steps[0].Offered != "10.0" || s.Steps[0].Achieved != "10.0" || !s.Steps[0].Pass || s.MaxSteps == 0 || s.Summary != "" {
		t.Fatalf("status.search %+v; want one passing step at 10.0, its worst case, no capacity yet", s)
	}
	if fig := s.Steps[0].Figures; len(fig) == 0 || fig[0].Condition != "p99(read) <= 20ms" || fig[0].Value != "2ms" || fig[0].BaseValue != "0.002" || !fig[0].Pass {
		t.Errorf("step 1's figures %+v; want p99(read) 2ms (0.002 s) passing", fig)
	}

	// Step 1: shard 1 is slow. A report of step 0 still in shard 1's map
	// does not count for step 1.
	f.clock.SetTime(next.At.Add(searchPerStep + 500*time.Millisecond))
	reportStep(t, f, run, start, 0, 1, 20, 2*time.Millisecond)
	if _, err := f.reconcile(run); err != nil {
		t.Fatal(err)
	}
	if s, _ := publishedStep(t, f, run); s.Step != 1 {
		t.Fatalf("step %d published while shard 1 had only reported step 0", s.Step)
	}
	reportStep(t, f, run, start, 1, 1, 20, 30*time.Millisecond)
	if _, err := f.reconcile(run); err != nil {
		t.Fatal(err)
	}
	again, _ := publishedStep(t, f, run)
	if again.Step != 2 || again.Rate != 20 {
		t.Fatalf("published %+v after 20 ops/s failed once; want step 2 at 20 again (a failure is confirmed)", again)
	}
	st := f.run(run).Status.Search
	if len(st.Steps) != 2 || st.Steps[1].Pass || !strings.HasPrefix(st.Steps[1].Figures[0].Value, "30.0") {
		t.Fatalf("step 2 in the status: %+v; want it failed on the merged p99 of 30ms (shard 1's)", st.Steps)
	}
}

// TestSearchRunnerThatNeverReportsFailsTheRun: a runner that never
// reports a step keeps the search waiting only until
// protocol.SearchReportTimeout after the step's end; then the run fails
// with SearchStalled, naming the shard, rather than hang.
func TestSearchRunnerThatNeverReportsFailsTheRun(t *testing.T) {
	f, run, start := searchRun(t, 30*time.Minute)
	reportStep(t, f, run, start, 0, 0, 10, 2*time.Millisecond)
	deadline := start.Add(searchPerStep + protocol.SearchReportTimeout)
	f.clock.SetTime(deadline.Add(-10 * time.Second))
	res, err := f.reconcile(run)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.run(run); got.IsFinished() || res.RequeueAfter <= 0 || res.RequeueAfter > 10*time.Second {
		t.Fatalf("before the deadline: finished %v, requeue %s; want running, requeued by the deadline", got.IsFinished(), res.RequeueAfter)
	}
	f.clock.SetTime(deadline.Add(time.Second))
	if _, err := f.reconcile(run); err != nil {
		t.Fatal(err)
	}
	got := f.run(run)
	c := condition(got, v1alpha1.ConditionSucceeded)
	if c == nil || c.Reason != v1alpha1.ReasonSearchStalled || !strings.Contains(c.Message, "[1]") {
		t.Fatalf("Succeeded condition %+v; want False, SearchStalled, naming shard 1", c)
	}
}

// TestSearchNeverPublishesAStepPastTheDuration: a next step that would end
// after the workload's duration is not published; the search ends
// OutOfTime with the highest passing rate as a lower bound, and the
// runners are told it is done.
func TestSearchNeverPublishesAStepPastTheDuration(t *testing.T) {
	f, run, start := searchRun(t, 25*time.Second)
	f.clock.SetTime(start.Add(searchPerStep + time.Second)) // 9 s left: no room for a 15 s step
	reportStep(t, f, run, start, 0, 0, 10, 2*time.Millisecond)
	reportStep(t, f, run, start, 1, 0, 10, 2*time.Millisecond)
	if _, err := f.reconcile(run); err != nil {
		t.Fatal(err)
	}
	s, ok := publishedStep(t, f, run)
	if !ok || !s.Done || s.Step != 1 {
		t.Fatalf("published %+v; want the search's end after step 0", s)
	}
	st := f.run(run).Status.Search
	if st.Reason != string(capacity.OutOfTime) || st.Done || st.Capacity != "10.0" || st.Summary != ">=10.0/s (unfinished)" {
		t.Fatalf("status.search %+v; want OutOfTime, not done, capacity at least 10.0", st)
	}
}

// TestSearchEndsWithItsCapacity: every rate passes up to max: the search
// ends ReachedMax, publishes its end, and the status carries the
// capacity, its per-node figure (one node) and the printer column's
// summary.
func TestSearchEndsWithItsCapacity(t *testing.T) {
	f, run, start := searchRun(t, 30*time.Minute)
	at := start
	for step, rate := range []float64{10, 20, 40} {
		f.clock.SetTime(at.Add(searchPerStep + time.Second))
		for shard := range 2 {
			reportStep(t, f, run, start, shard, step, rate, 2*time.Millisecond)
		}
		if _, err := f.reconcile(run); err != nil {
			t.Fatal(err)
		}
		s, ok := publishedStep(t, f, run)
		if !ok || s.Step != step+1 {
			t.Fatalf("after step %d published %+v", step, s)
		}
		at = s.At
	}
	s, _ := publishedStep(t, f, run)
	if !s.Done {
		t.Fatalf("published %+v after max passed; want the search's end", s)
	}
	st := f.run(run).Status.Search
	if !st.Done || st.Reason != string(capacity.ReachedMax) || st.Capacity != "40.0" || st.CapacityPerNode != "40.0" || st.Summary != ">=40.0/s" || len(st.Steps) != 3 {
		t.Fatalf("status.search %+v; want ReachedMax at 40.0 (40.0 per node) after 3 steps", st)
	}
}

// TestARunningSearchReadsItsControlMapOncePerReconcile: the live
// progress and the search both need the control map's start time; a
// reconcile of a running search reads the map once for both, also the
// one that judges a step and publishes the next.
func TestARunningSearchReadsItsControlMapOncePerReconcile(t *testing.T) {
	f, run, start := searchRun(t, 30*time.Minute)
	controlReads := 0
	f.r.Client = interceptor.NewClient(f.r.Client.(client.WithWatch), interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if _, ok := obj.(*corev1.ConfigMap); ok && key.Name == protocol.ControlConfigMapName(run.Name) {
			controlReads++
		}
		return c.Get(ctx, key, obj, opts...)
	}})
	f.clock.SetTime(start.Add(searchPerStep + 500*time.Millisecond))
	for shard := range 2 {
		reportStep(t, f, run, start, shard, 0, 10, 2*time.Millisecond)
		controlReads = 0
		if _, err := f.reconcile(run); err != nil {
			t.Fatal(err)
		}
		if controlReads != 1 {
			t.Errorf("with %d of 2 runners' reports of step 0, one reconcile read the control map %d times; want once", shard+1, controlReads)
		}
	}
	if next, ok := publishedStep(t, f, run); !ok || next.Step != 1 {
		t.Fatalf("published %+v (%v) after both runners reported step 0; want step 1", next, ok)
	}
}
