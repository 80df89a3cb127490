package engine_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/operation"
	"github.com/spanbench/spanbench/runner/engine"
)

// TestDrainedSeesEachIntervalAsTheResultHoldsIt: the live reports' source
// (Config.Drained) is told every interval once, in order, with the very
// figures the shard's result then holds.
func TestDrainedSeesEachIntervalAsTheResultHoldsIt(t *testing.T) {
	cfg := noopConfig(t, 200, time.Second, operation.Func(func(context.Context, *rand.Rand) (operation.Outcome, error) {
		return operation.Outcome{Rows: 1}, nil
	}))
	cfg.Interval = 250 * time.Millisecond
	var mu sync.Mutex
	var drained []result.Interval
	cfg.Drained = func(in result.Interval) { mu.Lock(); defer mu.Unlock(); drained = append(drained, in) }
	doc, err := engine.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(drained) != 4 {
		t.Fatalf("Drained saw %d intervals of a 1 s run in 250 ms intervals; want 4", len(drained))
	}
	if diff := cmp.Diff(doc.Intervals, drained); diff != "" {
		t.Errorf("Drained saw other intervals than the result holds (-result +drained):\n%s", diff)
	}
}
