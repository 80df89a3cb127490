package benchmarkrun_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/runtest"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
	"github.com/spanbench/spanbench/runner/protocol"
)

// progressRun is a 5-minute run of two runners with 1 s intervals (a live
// period of 10 intervals), started: its status has a start time and it is
// Running. statusWrites counts the status patches from here on; start is
// the published start, the one runners put in their live reports.
func progressRun(t *testing.T) (f *fakeReconcile, run *v1alpha1.BenchmarkRun, start time.Time, statusWrites *int) {
	t.Helper()
	run = runtest.Run("r").Created(t0).DatasetLoaded(t0).Replicas(2).Obj()
	run.Spec.Workload.Duration = &metav1.Duration{Duration: 5 * time.Minute}
	statusWrites = new(int)
	f = newFakeReconcile(t, interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
		*statusWrites++
		return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
	}}, run)
	// A start with milliseconds, as a real clock publishes it: the
	// status's start time keeps whole seconds only (metav1.Time), the
	// runners' live reports carry the published one.
	f.clock.SetTime(t0.Add(250 * time.Millisecond))
	releaseAndRun(t, f, run)
	start = publishedStart(t, f, run)
	*statusWrites = 0
	return f, run, start, statusWrites
}

// live is shard i's live report after interval k: every interval
// counts 100 operations per shard, one of them failed; shard 0's
// successful ones took 2 ms, shard 1's 20 ms.
func live(t *testing.T, start time.Time, shard, k int) protocol.LiveReport {
	t.Helper()
	h := histogram.NewCompact()
	h.RecordValues([]int64{2_000, 20_000}[shard], 99)
	var enc histogram.Encoder
	s, err := enc.Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	n := uint64(k+1) * 100
	return protocol.LiveReport{Start: start, Interval: k, Operations: n, Errors: n / 100, IntervalOperations: 100, Latency: s}
}

// writeLive stores rep in shard i's map as a runner's patch does.
func writeLive(t *testing.T, f *fakeReconcile, run *v1alpha1.BenchmarkRun, shard int, rep protocol.LiveReport) {
	t.Helper()
	m, err := protocol.EncodeLiveReport(rep)
	if err != nil {
		t.Fatal(err)
	}
	writeLiveRaw(t, f, run, shard, m.Data[protocol.KeyLive])
}

func writeLiveRaw(t *testing.T, f *fakeReconcile, run *v1alpha1.BenchmarkRun, shard int, raw string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: protocol.ShardConfigMapName(run.Name, shard), Namespace: run.Namespace}}
	if !f.exists(cm) {
		t.Fatalf("no map for shard %d", shard)
	}
	cm.Data[protocol.KeyLive] = raw
	if err := f.stored.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
}

// TestRunProgressMovesDuringTheLoad: while the runners report, the run's
// status shows each live period's figures, merged exactly (counts added
// up, p99 of the merged histograms: shard 1's 20 ms, not an average), and
// moves three times before the load ends; an interval between live
// periods is not shown.
func TestRunProgressMovesDuringTheLoad(t *testing.T) {
	f, run, start, _ := progressRun(t)
	var seen []string
	for period := 1; period <= 3; period++ {
		k := period*10 - 1
		f.clock.SetTime(start.Add(time.Duration(k+1)*time.Second + 300*time.Millisecond))
		for shard := range 2 {
			writeLive(t, f, run, shard, live(t, start, shard, k))
		}
		if _, err := f.reconcile(run); err != nil {
			t.Fatal(err)
		}
		p := f.run(run).Status.Progress
		if p == nil {
			t.Fatalf("period %d: no status.progress while the runners report", period)
		}
		elapsed := time.Duration(k+1) * time.Second
		want := v1alpha1.RunProgress{Live: true, Elapsed: metav1.Duration{Duration: elapsed}, Total: metav1.Duration{Duration: 5 * time.Minute},
			Interval: ptr.To(int32(k)), Operations: int64(2 * (k + 1) * 100), Errors: int64(2 * (k + 1)), Throughput: "200.0",
			Summary: elapsed.String() + "/5m", Achieved: "200.0/s (live)"}
		if p.P99 == nil || p.P99.Duration < 19*time.Millisecond || p.P99.Duration > 21*time.Millisecond {
			t.Errorf("period %d: live p99 %v; want shard 1's 20ms (the merged histograms' p99)", period, p.P99)
		}
		if !strings.HasSuffix(p.Latency, " (live)") {
			t.Errorf("period %d: P99 column %q is not marked live", period, p.Latency)
		}
		p.P99, p.Latency, p.UpdateTime = nil, "", nil
		if !equalProgress(*p, want) {
			t.Errorf("period %d: status.progress\n got %+v\nwant %+v", period, *p, want)
		}
		seen = append(seen, p.Summary)
		// An interval that is no live period's end is never shown.
		for shard := range 2 {
			writeLive(t, f, run, shard, live(t, start, shard, k+3))
		}
		f.clock.SetTime(start.Add(time.Duration(k+5) * time.Second))
		if _, err := f.reconcile(run); err != nil {
			t.Fatal(err)
		}
		if got := f.run(run).Status.Progress.Interval; *got != int32(k) {
			t.Errorf("period %d: the status shows interval %d, which ends no live period", period, *got)
		}
	}
	if f.run(run).IsFinished() || len(seen) != 3 {
		t.Fatalf("the status moved through %v; want three live figures before the run ends", seen)
	}
}

func equalProgress(a, b v1alpha1.RunProgress) bool {
	return a.Live == b.Live && a.Elapsed == b.Elapsed && a.Total == b.Total && ptr.Deref(a.Interval, -1) == ptr.Deref(b.Interval, -1) &&
		a.Operations == b.Operations && a.Errors == b.Errors && a.Throughput == b.Throughput && a.Summary == b.Summary && a.Achieved == b.Achieved
}

// TestRunProgressWriteRateIsBounded: over a minute of simulated time,
// reconciled every 100 ms, with runners that write a report at every
// step, alternately the latest live period's that ended and one of an
// interval further on each time (as a runner whose clock races ahead, or
// a forger, would), the run's status is written at most once per live
// period (10 s): 6 times, not 300.
func TestRunProgressWriteRateIsBounded(t *testing.T) {
	f, run, start, writes := progressRun(t)
	const steps = 600
	for step := 1; step <= steps; step++ {
		now := time.Duration(step) * 100 * time.Millisecond
		f.clock.SetTime(start.Add(now))
		k := int(now/(10*time.Second))*10 - 1 // the latest live period's last interval
		if step%2 == 0 {
			k = step*10 - 1
		}
		if k < 0 {
			continue
		}
		for shard := range 2 {
			writeLive(t, f, run, shard, live(t, start, shard, k))
		}
		if _, err := f.reconcile(run); err != nil {
			t.Fatal(err)
		}
	}
	elapsed := time.Duration(steps) * 100 * time.Millisecond
	bound := int(elapsed / protocol.LivePeriod(time.Second))
	if *writes > bound {
		t.Errorf("%d status writes in %s of load; want at most %d, one per live period of %s", *writes, elapsed, bound, protocol.LivePeriod(time.Second))
	}
	if *writes == 0 || f.run(run).Status.Progress == nil {
		t.Errorf("%d status writes in %s and progress %+v: the live figures never moved", *writes, elapsed, f.run(run).Status.Progress)
	}
}

// TestRunProgressShowsNoStaleOrForgedFigures: a live report is shown only
// when every shard reported the same due interval of this run's life,
// which has ended and counts no less than the status already shows.
func TestRunProgressShowsNoStaleOrForgedFigures(t *testing.T) {
	for _, tc := range []struct {
		name string
		// edit changes shard 1's report of interval 19 (edit0 shard 0's);
		// raw, when set, replaces shard 1's encoding.
		edit, edit0 func(r *protocol.LiveReport)
		raw         string
		clock       time.Duration // after the start; default 20.5 s
		shown       bool
	}{
		{name: "both shards at interval 19", shown: true},
		{name: "a report of an earlier run of the same name", edit: func(r *protocol.LiveReport) { r.Start = r.Start.Add(-time.Hour) }},
		{name: "a shard behind the others", edit: func(r *protocol.LiveReport) { *r = live(t, r.Start, 1, 9) }},
		{name: "a shard's counts going backwards", edit: func(r *protocol.LiveReport) { r.Operations, r.IntervalOperations, r.Errors = 50, 50, 0 }},
		{name: "the run's counts going backwards", edit: func(r *protocol.LiveReport) { r.Operations = 900 }, edit0: func(r *protocol.LiveReport) { r.Operations = 900 }},
		{name: "the run's errors going backwards", edit: func(r *protocol.LiveReport) { r.Errors = 0 }, edit0: func(r *protocol.LiveReport) { r.Errors = 0 }},
		{name: "a shard ahead of the others", edit: func(r *protocol.LiveReport) { *r = live(t, r.Start, 1, 29) }, clock: 30*time.Second + 500*time.Millisecond},
		{name: "an interval that has not ended", clock: 19 * time.Second},
		{name: "an interval ending no live period", edit: func(r *protocol.LiveReport) { r.Interval = 18 }},
		{name: "more errors than operations", edit: func(r *protocol.LiveReport) { r.Errors = r.Operations + 1 }},
		{name: "not a live report", raw: `{"Interval": "nineteen"}`},
		{name: "an unknown field", raw: `{"Start":"2026-01-02T03:04:08Z","Interval":19,"Operations":2000,"Bonus":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, run, start, _ := progressRun(t)
			// Interval 9 is shown first: 1,000 operations per shard.
			f.clock.SetTime(start.Add(10*time.Second + 300*time.Millisecond))
			writeLive(t, f, run, 0, live(t, start, 0, 9))
			writeLive(t, f, run, 1, live(t, start, 1, 9))
			if _, err := f.reconcile(run); err != nil {
				t.Fatal(err)
			}
			before := f.run(run).Status.Progress
			if before == nil || *before.Interval != 9 {
				t.Fatalf("interval 9 of both shards is not shown: %+v", before)
			}
			f.clock.SetTime(start.Add(cmpOr(tc.clock, 20*time.Second+500*time.Millisecond)))
			rep0 := live(t, start, 0, 19)
			if tc.edit0 != nil {
				tc.edit0(&rep0)
			}
			writeLive(t, f, run, 0, rep0)
			rep := live(t, start, 1, 19)
			if tc.edit != nil {
				tc.edit(&rep)
			}
			if tc.raw != "" {
				writeLiveRaw(t, f, run, 1, tc.raw)
			} else {
				writeLive(t, f, run, 1, rep)
			}
			if _, err := f.reconcile(run); err != nil {
				t.Fatal(err)
			}
			got := f.run(run)
			shown := *got.Status.Progress.Interval == 19
			if shown != tc.shown {
				t.Errorf("status.progress %+v: interval 19 shown %v; want %v", got.Status.Progress, shown, tc.shown)
			}
			// A bad live report costs the live figures, never the shard.
			wantCondition(t, got, v1alpha1.ConditionLoadCompleted, metav1.ConditionFalse, v1alpha1.ReasonRunning)
		})
	}
}

func cmpOr(d, def time.Duration) time.Duration {
	if d != 0 {
		return d
	}
	return def
}

// TestRunProgressFinalReplacesLiveInOneWrite: the pass that merges the
// results writes the final figures over the live ones in its one status
// write: no write leaves the columns blank, and none is marked live.
func TestRunProgressFinalReplacesLiveInOneWrite(t *testing.T) {
	run := runtest.Run("r").Rate(30_000).Created(t0).RunnersReady(t0).
		Condition(v1alpha1.ConditionLoadCompleted, metav1.ConditionTrue, v1alpha1.ReasonShardsReported, t0).Obj()
	run.Status.Progress = &v1alpha1.RunProgress{Live: true, Interval: ptr.To(int32(0)), Summary: "1s/2s", Achieved: "10.0/s (live)",
		Latency: "2ms (live)", Throughput: "10.0", Operations: 10}
	var written []*v1alpha1.RunProgress
	f := newFakeReconcile(t, interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
		written = append(written, obj.(*v1alpha1.BenchmarkRun).Status.Progress.DeepCopy())
		return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
	}}, run)
	storeShardResult(t, f, run, result.Counts{OK: 29_000, Rows: 29_000, Errors: map[string]uint64{"Unavailable": 7}})
	if _, err := f.reconcile(run); err != nil {
		t.Fatal(err)
	}
	got := f.run(run)
	if got.Status.Overall == nil {
		t.Fatal("the pass merged no results")
	}
	for i, p := range written {
		if p == nil || p.Summary == "" || p.Achieved == "" || p.Latency == "" {
			t.Errorf("status write %d left a column blank: %+v", i, p)
		}
	}
	p := got.Status.Progress
	want := v1alpha1.RunProgress{Elapsed: metav1.Duration{Duration: 2 * time.Second}, Total: metav1.Duration{Duration: 2 * time.Second},
		Operations: 29_007, Errors: 7, Throughput: got.Status.Overall.Throughput, Summary: "2s/2s", Achieved: got.Status.Overall.Throughput + "/s"}
	if p == nil || !equalProgress(*p, want) || p.Latency != got.Status.Overall.Latency.P99.Duration.String() {
		t.Errorf("final status.progress %+v; want %+v with p99 %s", p, want, got.Status.Overall.Latency.P99)
	}
}
