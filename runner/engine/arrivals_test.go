package engine_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/operation"
	"github.com/spanbench/spanbench/runner/engine"
	"github.com/spanbench/spanbench/runner/schedule"
)

// arrivalsAfter is how many arrivals cfg's open-loop schedule intends at
// or after offset from its start: what a measured window beginning there
// may count at most.
func arrivalsAfter(t *testing.T, cfg engine.Config, offset time.Duration) uint64 {
	t.Helper()
	it, err := schedule.NewIterator(schedule.Config{Profile: cfg.Load.Profile, Arrivals: cfg.Load.Arrivals, Seed: cfg.Seed, Shard: cfg.Shard, Shards: cfg.Shards})
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for off, ok := it.Next(); ok; off, ok = it.Next() {
		if off >= offset {
			n++
		}
	}
	return n
}

// measured is what the document counts after its warm-up: operations
// (successes, errors, not found) and missed sends.
func measured(doc *result.Document) (ops, missed uint64) {
	for _, in := range doc.Intervals {
		if in.WarmUp {
			continue
		}
		missed += in.Missed
		for _, op := range in.Operations {
			ops += op.OK + op.NotFound + op.ErrorCount()
		}
	}
	return ops, missed
}

// TestSlowOperationsAcrossTheWarmUpAreNotCountedTwice runs an open loop
// of 100 ops/s whose operations each take 150 ms, with a 1 s warm-up:
// about 15 operations are in flight when the warm-up ends. Counted where
// they completed, they joined the measured window on top of its own
// arrivals (the over-count TestRunnerNetworkCut saw on a loaded host:
// 1,217 for 1,200). Each operation belongs to the interval of its intended
// send: the measured window holds exactly the arrivals it scheduled.
func TestSlowOperationsAcrossTheWarmUpAreNotCountedTwice(t *testing.T) {
	slow := operation.Func(func(ctx context.Context, _ *rand.Rand) (operation.Outcome, error) {
		select {
		case <-time.After(150 * time.Millisecond):
			return operation.Outcome{Rows: 1}, nil
		case <-ctx.Done():
			return operation.Outcome{}, ctx.Err()
		}
	})
	cfg := noopConfig(t, 100, 3*time.Second, slow)
	cfg.Interval, cfg.Spec = 500*time.Millisecond, specWithWarmUp(t, `{"mode":"Fixed","duration":"1s"}`, "op0")
	requireMeasuredIsTheSchedule(t, cfg, time.Second)
}

// TestStarvedHostCountsNoMoreThanTheSchedule reproduces the loaded host
// of TestRunnerNetworkCut in one process: one P (GOMAXPROCS=1) shared with
// CPU hogs, so the scheduler's workers run late and operations intended
// before the warm-up's end are sent, and complete, after it. The
// operations themselves take no time. Whatever the lateness, the measured
// window must count exactly the arrivals its schedule produced: none lost,
// none counted twice. Run it repeatedly (go test -count=20).
func TestStarvedHostCountsNoMoreThanTheSchedule(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var stop atomic.Bool
	var hogs sync.WaitGroup
	for range 4 {
		hogs.Go(func() {
			for !stop.Load() {
				spin(time.Millisecond) // busy, yielding only where the runtime preempts it
			}
		})
	}
	defer func() { stop.Store(true); hogs.Wait() }()
	noop := operation.Func(func(context.Context, *rand.Rand) (operation.Outcome, error) {
		spin(200 * time.Microsecond)
		return operation.Outcome{Rows: 1}, nil
	})
	cfg := noopConfig(t, 100, 3*time.Second, noop)
	cfg.Interval, cfg.Spec = 250*time.Millisecond, specWithWarmUp(t, `{"mode":"Fixed","duration":"1s"}`, "op0")
	requireMeasuredIsTheSchedule(t, cfg, time.Second)
}

// requireMeasuredIsTheSchedule runs cfg, whose warm-up ends at warmUp,
// and requires its measured window to count exactly the arrivals its
// schedule intends after the warm-up, operations and missed sends
// together: none lost, none counted twice.
func requireMeasuredIsTheSchedule(t *testing.T, cfg engine.Config, warmUp time.Duration) {
	t.Helper()
	doc, err := engine.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ops, missed := measured(doc)
	if want := arrivalsAfter(t, cfg, warmUp); ops+missed != want {
		t.Errorf("the measured window counts %d operations and %d missed sends; its schedule has %d arrivals (latency p99 %d µs: how late the operations were)",
			ops, missed, want, doc.Overall.Latency.P99)
	}
}

// spin keeps the CPU busy for d.
func spin(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}
