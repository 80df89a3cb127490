package schedule

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spanbench/spanbench/runner/clock/clocktest"
)

// TestRunReusesTheWorkerThatWentIdleLast checks that a load that never has
// two requests in flight is done by one worker goroutine, however high the
// cap: workers start as needed and the last one idled is reused, so its
// stack stays warm and the process keeps no more goroutines than the load
// needs.
func TestRunReusesTheWorkerThatWentIdleLast(t *testing.T) {
	fc := clocktest.NewFake(t0)
	h := &recorder{clk: fc}
	var inFlight atomic.Int64
	done := startRun(context.Background(), Config{Profile: tenPerSecond, MaxInFlight: 512, InFlight: &inFlight}, fc, h)
	idle := func() bool { return inFlight.Load() == 0 }
	waitFor(t, "the first arrival to be handled", func() bool { return h.count() == 1 && idle() })
	for i := 2; i <= 10; i++ {
		step(t, fc, 100*time.Millisecond)
		// Counted first: the next step must not come before this arrival
		// was sent (the workers' other timers keep the clock waited on).
		waitFor(t, "the arrival to be handled", func() bool { return h.count() == i && idle() })
	}
	stepLast(t, fc, 100*time.Millisecond)
	if res := await(t, done); res.err != nil || res.stats.Sent != 10 {
		t.Fatalf("Run = %+v, %v; want 10 sent and no error", res.stats, res.err)
	}
	calls, _ := h.snapshot()
	for _, c := range calls {
		if c.worker != 0 {
			t.Errorf("request %d went to worker %d, want worker 0: one request at a time needs one worker", c.req.Seq, c.worker)
		}
	}
}
