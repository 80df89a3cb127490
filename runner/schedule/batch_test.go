package schedule

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spanbench/spanbench/runner/clock/clocktest"
)

// countingHandler counts its calls and returns at once.
type countingHandler struct{ calls atomic.Uint64 }

func (h *countingHandler) Handle(context.Context, int, Request) { h.calls.Add(1) }
func (h *countingHandler) Missed(Request)                       {}

func TestBatchMakesExactlyItsIterationsAndEndsEarly(t *testing.T) {
	fc := clocktest.NewFake(t0)
	h := &countingHandler{}
	cfg := Config{Profile: Profile{{Duration: time.Hour}}, Concurrency: 4, Iterations: 1000}
	// The clock never moves: a batch that waited for the profile's end
	// would not return.
	res := await(t, startRun(context.Background(), cfg, fc, h))
	if res.err != nil {
		t.Fatalf("Run returned error %v", res.err)
	}
	if got := h.calls.Load(); got != 1000 || res.stats.Sent != 1000 {
		t.Errorf("the batch made %d calls (Stats.Sent %d), want exactly its 1000 iterations", got, res.stats.Sent)
	}
	if !res.stats.Finished.Equal(t0) {
		t.Errorf("Stats.Finished = %v, want the instant the last call returned, %v", res.stats.Finished, t0)
	}
}

func TestBatchCutShortHasNoFinish(t *testing.T) {
	fc := clocktest.NewFake(t0)
	p := newClosedProbe(fc, t0, 2)
	cfg := Config{Profile: Profile{{Duration: time.Minute}}, Concurrency: 2, Iterations: 1 << 40}
	done := startRun(context.Background(), cfg, fc, p)
	stepLast(t, fc, time.Minute)
	res := await(t, done)
	if res.err != nil || !res.stats.Finished.IsZero() {
		t.Errorf("a batch the profile's end cut short: err %v, Finished %v; want no error and no finish", res.err, res.stats.Finished)
	}
}

func TestIterationsNeedAClosedLoop(t *testing.T) {
	cfg := Config{Profile: Profile{{From: 10, To: 10, Duration: time.Minute}}, MaxInFlight: 1, Iterations: 5}
	if err := cfg.Validate(); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("Validate of an open loop with Iterations = %v, want ErrInvalidConfig", err)
	}
}
