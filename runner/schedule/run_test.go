package schedule

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/spanbench/spanbench/runner/clock/clocktest"
)

// tenPerSecond is 10 ops/s for 1s: arrivals every 100ms at 0..900ms.
var tenPerSecond = Profile{{From: 10, To: 10, Duration: time.Second}}

func TestRunDispatchesEachArrivalAtItsIntendedTime(t *testing.T) {
	fc := clocktest.NewFake(t0)
	h := &recorder{clk: fc}
	done := startRun(context.Background(), Config{Profile: tenPerSecond, MaxInFlight: 4}, fc, h)

	waitFor(t, "the arrival at offset 0 to be handled without stepping the clock", func() bool { return h.count() == 1 })
	for i := 2; i <= 10; i++ {
		step(t, fc, 100*time.Millisecond)
		waitFor(t, "one more Handle call after a 100ms step", func() bool { return h.count() == i })
		// Run's own wait for the end, and one reused timer for each of the
		// two workers (one sends, the other already holds the next arrival).
		if n := fc.Waiters(); n > 3 {
			t.Fatalf("fake clock has %d waiters, want at most 3: each worker must reuse its one timer", n)
		}
	}
	stepLast(t, fc, 100*time.Millisecond) // reaches the end of the profile
	res := await(t, done)

	if res.err != nil {
		t.Fatalf("Run returned error %v", res.err)
	}
	if want := (Stats{Scheduled: 10, Sent: 10, Start: t0}); res.stats != want {
		t.Errorf("Stats = %+v, want %+v", res.stats, want)
	}
	calls, missed := h.snapshot()
	if len(missed) != 0 {
		t.Errorf("Missed called for %v with MaxInFlight 4 and instant handlers", missed)
	}
	for i, c := range calls {
		want := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		if c.req.Seq != uint64(i) || !c.req.Intended.Equal(want) || !c.at.Equal(want) {
			t.Errorf("call %d: Seq %d intended %v handled at %v; want Seq %d intended and handled at %v",
				i, c.req.Seq, c.req.Intended, c.at, i, want)
		}
		if c.worker < 0 || c.worker >= 4 {
			t.Errorf("call %d ran on worker %d, want 0..3", i, c.worker)
		}
	}
}

func TestRunCatchUpKeepsIntendedTime(t *testing.T) {
	fc := clocktest.NewFake(t0)
	h := &recorder{clk: fc}
	done := startRun(context.Background(), Config{Profile: tenPerSecond, MaxInFlight: 10}, fc, h)
	waitFor(t, "the first arrival", func() bool { return h.count() == 1 })

	step(t, fc, 350*time.Millisecond) // 100, 200 and 300ms are now overdue
	waitFor(t, "three overdue arrivals to be sent at once", func() bool { return h.count() == 4 })
	calls, _ := h.snapshot()
	slices.SortFunc(calls, func(a, b handled) int { return int(a.req.Seq) - int(b.req.Seq) })
	for i := 1; i <= 3; i++ {
		c := calls[i]
		if want := t0.Add(time.Duration(i) * 100 * time.Millisecond); !c.req.Intended.Equal(want) {
			t.Errorf("late request %d has Intended %v, want its scheduled time %v (not the dispatch time)", i, c.req.Intended, want)
		}
		if want := t0.Add(350 * time.Millisecond); !c.at.Equal(want) {
			t.Errorf("late request %d handled at %v, want immediately at %v", i, c.at, want)
		}
	}
	stepLast(t, fc, 650*time.Millisecond)
	if res := await(t, done); res.err != nil || res.stats.Sent != 10 {
		t.Errorf("Run = %+v, %v; want 10 sent and no error", res.stats, res.err)
	}
}

func TestRunReportsMissedWhenInFlightCapReached(t *testing.T) {
	fc := clocktest.NewFake(t0)
	h := &recorder{clk: fc, block: make(chan struct{})}
	done := startRun(context.Background(), Config{Profile: tenPerSecond, MaxInFlight: 2}, fc, h)
	waitFor(t, "the first arrival", func() bool { return h.count() == 1 })
	for range 9 {
		step(t, fc, 100*time.Millisecond)
	}
	waitFor(t, "the second request to reach its blocked handler and the 8 others to be reported", func() bool {
		_, missed := h.snapshot()
		return h.count() == 2 && len(missed) >= 8
	})
	_, missed := h.snapshot()
	var seqs []uint64
	for _, m := range missed {
		seqs = append(seqs, m.Seq)
		if want := t0.Add(time.Duration(m.Seq) * 100 * time.Millisecond); !m.Intended.Equal(want) {
			t.Errorf("missed request %d has Intended %v, want %v", m.Seq, m.Intended, want)
		}
	}
	if want := []uint64{2, 3, 4, 5, 6, 7, 8, 9}; !slices.Equal(seqs, want) {
		t.Errorf("with 2 handlers blocked, Missed got Seqs %v, want exactly %v", seqs, want)
	}

	stepLast(t, fc, 100*time.Millisecond) // end of profile: Run must still wait for the blocked handlers
	waitFor(t, "the dispatcher to stop waiting at the end", func() bool { return !fc.HasWaiters() })
	select {
	case r := <-done:
		t.Fatalf("Run returned %+v while 2 handlers were still in flight", r)
	default:
	}
	close(h.block)
	res := await(t, done)
	if want := (Stats{Scheduled: 10, Sent: 2, Missed: 8, Start: t0}); res.err != nil || res.stats != want {
		t.Errorf("Run = %+v, %v; want %+v and no error", res.stats, res.err, want)
	}
}

func TestRunWaitsForStart(t *testing.T) {
	fc := clocktest.NewFake(t0)
	h := &recorder{clk: fc}
	start := t0.Add(5 * time.Second)
	done := startRun(context.Background(), Config{Profile: tenPerSecond, MaxInFlight: 10, Start: start}, fc, h)
	waitFor(t, "Run to wait for the start instant", fc.HasWaiters)

	step(t, fc, 4999*time.Millisecond)
	if n := h.count(); n != 0 {
		t.Fatalf("%d requests handled 1ms before Start", n)
	}
	step(t, fc, time.Millisecond)
	waitFor(t, "the first request at Start", func() bool { return h.count() == 1 })
	calls, _ := h.snapshot()
	if !calls[0].req.Intended.Equal(start) {
		t.Errorf("first request intended %v, want Start %v", calls[0].req.Intended, start)
	}
	stepLast(t, fc, time.Second)
	if res := await(t, done); res.err != nil || res.stats.Sent != 10 || !res.stats.Start.Equal(start) {
		t.Errorf("Run = %+v, %v; want 10 sent from Start %v", res.stats, res.err, start)
	}
}

func TestRunStartInThePastCatchesUp(t *testing.T) {
	// A shard that comes up after the shared start instant owes the arrivals
	// it missed: they are sent at once with their original intended times.
	fc := clocktest.NewFake(t0)
	h := &recorder{clk: fc}
	start := t0.Add(-350 * time.Millisecond)
	done := startRun(context.Background(), Config{Profile: tenPerSecond, MaxInFlight: 8, Start: start}, fc, h)
	waitFor(t, "the 4 overdue arrivals", func() bool { return h.count() == 4 })
	step(t, fc, 0) // let the dispatcher settle on its next wait
	if n := h.count(); n != 4 {
		t.Fatalf("%d requests sent 350ms after Start, want 4 (at 0, 100, 200, 300ms)", n)
	}
	stepLast(t, fc, 650*time.Millisecond)
	if res := await(t, done); res.err != nil || res.stats.Sent != 10 {
		t.Errorf("Run = %+v, %v; want all 10 sent", res.stats, res.err)
	}
}

func TestRunCancelStopsPromptly(t *testing.T) {
	fc := clocktest.NewFake(t0)
	h := &recorder{clk: fc, block: make(chan struct{})} // handlers return only when ctx ends
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := Config{Profile: Profile{{From: 10, To: 10, Duration: time.Hour}}, MaxInFlight: 3}
	done := startRun(ctx, cfg, fc, h)
	waitFor(t, "Run to wait on the clock after the first arrival", fc.HasWaiters)
	for range 4 {
		step(t, fc, 100*time.Millisecond)
	}
	waitFor(t, "3 blocked handlers", func() bool { return h.count() == 3 })
	// The arrivals at 300 and 400 ms are due too; their workers report them
	// missed once the scheduler runs them, which on a busy host can come
	// after the 3 handlers blocked: cancelling before that would drop them.
	waitFor(t, "the 2 arrivals beyond the 3 in flight reported missed", func() bool {
		_, missed := h.snapshot()
		return len(missed) == 2
	})

	cancel()
	res := await(t, done)
	if !errors.Is(res.err, context.Canceled) {
		t.Errorf("Run after cancel returned error %v, want context.Canceled", res.err)
	}
	calls, missed := h.snapshot()
	if want := (Stats{Scheduled: 5, Sent: 3, Missed: 2, Start: t0}); res.stats != want {
		t.Errorf("Stats = %+v, want %+v", res.stats, want)
	}
	if len(calls) != 3 || len(missed) != 2 {
		t.Errorf("handler saw %d calls and %d misses, want 3 and 2", len(calls), len(missed))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.returned != 3 || h.ctxEnded != 3 {
		t.Errorf("when Run returned, %d handlers had returned (%d via ctx), want all 3 via ctx", h.returned, h.ctxEnded)
	}
}

func TestRunCancelWhileWaitingForStart(t *testing.T) {
	fc := clocktest.NewFake(t0)
	h := &recorder{clk: fc}
	ctx, cancel := context.WithCancel(context.Background())
	done := startRun(ctx, Config{Profile: tenPerSecond, MaxInFlight: 1, Start: t0.Add(time.Hour)}, fc, h)
	waitFor(t, "Run to wait for Start", fc.HasWaiters)
	cancel()
	res := await(t, done)
	if !errors.Is(res.err, context.Canceled) || res.stats.Scheduled != 0 || h.count() != 0 {
		t.Errorf("Run = %+v, %v with %d calls; want context.Canceled and nothing sent", res.stats, res.err, h.count())
	}
	if fc.HasWaiters() {
		t.Errorf("Run left a timer registered on the clock after returning")
	}
}

func TestRunPoissonShardMatchesIterator(t *testing.T) {
	cfg := Config{
		Profile:     Profile{{From: 100, To: 900, Duration: time.Second}},
		Arrivals:    Poisson,
		Seed:        3,
		Shard:       1,
		Shards:      3,
		MaxInFlight: 1000,
	}
	want := offsets(t, cfg)
	fc := clocktest.NewFake(t0)
	h := &recorder{clk: fc}
	done := startRun(context.Background(), cfg, fc, h)
	waitFor(t, "Run to wait on the clock", fc.HasWaiters)
	for range 99 {
		step(t, fc, 10*time.Millisecond)
	}
	stepLast(t, fc, 10*time.Millisecond)
	res := await(t, done)
	if res.err != nil || res.stats.Sent != uint64(len(want)) {
		t.Fatalf("Run = %+v, %v; want %d sent (the iterator's count)", res.stats, res.err, len(want))
	}
	calls, _ := h.snapshot()
	slices.SortFunc(calls, func(a, b handled) int { return int(a.req.Seq) - int(b.req.Seq) })
	for i, c := range calls {
		if c.req.Seq != uint64(i) || !c.req.Intended.Equal(t0.Add(want[i])) {
			t.Fatalf("request %d: Seq %d intended %v, want Seq %d intended %v", i, c.req.Seq, c.req.Intended, i, t0.Add(want[i]))
		}
		if c.at.Before(c.req.Intended) {
			t.Fatalf("request %d handled at %v, before its intended time %v", i, c.at, c.req.Intended)
		}
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	fc := clocktest.NewFake(t0)
	h := &recorder{clk: fc}
	_, err := Run(context.Background(), Config{Profile: tenPerSecond}, fc, h)
	checkErr(t, err, "MaxInFlight 0")
	if _, err := Run(context.Background(), Config{Profile: tenPerSecond, MaxInFlight: 1}, fc, nil); err == nil {
		t.Errorf("Run with a nil handler returned no error")
	}
	if _, err := Run(context.Background(), Config{Profile: tenPerSecond, MaxInFlight: 1}, nil, h); err == nil {
		t.Errorf("Run with a nil clock returned no error")
	}
}

func TestRunGranularityBatchesWakeUps(t *testing.T) {
	// Arrivals every 100ms; wake-ups at least Granularity apart, each sending
	// whatever has come due and nothing early; the end (1s) is not overslept.
	tests := []struct {
		gran       time.Duration
		wantSentAt []time.Duration // ms, by Seq
	}{
		{250 * time.Millisecond, []time.Duration{0, 250, 250, 500, 500, 500, 750, 750, 1000, 1000}},
		{400 * time.Millisecond, []time.Duration{0, 400, 400, 400, 400, 800, 800, 800, 800, 1000}},
	}
	for _, tc := range tests {
		t.Run(tc.gran.String(), func(t *testing.T) {
			fc := clocktest.NewFake(t0)
			h := &recorder{clk: fc}
			cfg := Config{Profile: tenPerSecond, MaxInFlight: 10, Granularity: tc.gran}
			done := startRun(context.Background(), cfg, fc, h)
			waitFor(t, "the first arrival", func() bool { return h.count() == 1 })
			for now := 50 * time.Millisecond; now <= time.Second; now += 50 * time.Millisecond {
				if now == time.Second {
					stepLast(t, fc, 50*time.Millisecond) // the end: Run stops waiting
				} else {
					step(t, fc, 50*time.Millisecond)
				}
				n := 0
				for _, at := range tc.wantSentAt {
					if at*time.Millisecond <= now {
						n++
					}
				}
				waitFor(t, fmt.Sprintf("%d requests sent by %v", n, now), func() bool { return h.count() == n })
			}
			res := await(t, done)
			if res.err != nil || res.stats.Sent != 10 {
				t.Fatalf("Run = %+v, %v; want 10 sent", res.stats, res.err)
			}
			calls, _ := h.snapshot()
			for _, c := range calls {
				if want := tc.wantSentAt[c.req.Seq] * time.Millisecond; c.at.Sub(t0) != want {
					t.Errorf("request %d (intended %v) sent at %v, want %v", c.req.Seq, c.req.Intended.Sub(t0), c.at.Sub(t0), want)
				}
			}
		})
	}
}
