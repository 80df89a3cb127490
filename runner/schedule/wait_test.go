package schedule

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/spanbench/spanbench/runner/clock"
	"github.com/spanbench/spanbench/runner/clock/clocktest"
)

// wrappedClock hides clock.Real's type, as any caller-side wrapper would.
type wrappedClock struct{ clock.Real }

func TestNewWaiterUsesClockTimerUnlessRealClock(t *testing.T) {
	ctx := context.Background()
	for name, clk := range map[string]clock.Clock{
		"fake":    clocktest.NewFake(t0),
		"wrapped": wrappedClock{},
	} {
		w := newWaiter(ctx, clk)
		if _, ok := w.(*timerWaiter); !ok {
			t.Errorf("%s clock: got waiter %T, want *timerWaiter (only the bare RealClock may bypass clk)", name, w)
		}
		w.close()
	}
}

// testWaiter checks that a waiter never returns before its target and that
// cancellation ends a long wait.
func testWaiter(t *testing.T, newW func(context.Context) waiter) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newW(ctx)
	defer w.close()
	for _, d := range []time.Duration{-time.Millisecond, 0, 30 * time.Microsecond, 2 * time.Millisecond} {
		target := time.Now().Add(d)
		got, err := w.waitUntil(target)
		if err != nil {
			t.Fatalf("waitUntil(now%+v) returned error %v", d, err)
		}
		if got.Before(target) || time.Now().Before(target) {
			t.Fatalf("waitUntil(now%+v) returned reading %v before the target %v", d, got, target)
		}
	}
	errc := make(chan error, 1)
	go func() {
		_, err := w.waitUntil(time.Now().Add(time.Hour))
		errc <- err
	}()
	time.Sleep(time.Millisecond) // most likely parked by now; either way cancel must end the wait
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled hour-long wait returned %v, want context.Canceled", err)
		}
	case <-time.After(bound):
		t.Fatalf("cancelling the context did not end an hour-long wait within %v", bound)
	}
}

func TestTimerWaiterRealClock(t *testing.T) {
	testWaiter(t, func(ctx context.Context) waiter { return newWaiter(ctx, wrappedClock{}) })
}

func TestRealClockWaiter(t *testing.T) {
	testWaiter(t, func(ctx context.Context) waiter { return newWaiter(ctx, clock.Real{}) })
}

// neverEarly is a Handler that counts requests handled before their
// intended time, which an open-loop scheduler must never do.
type neverEarly struct {
	early []int64 // per worker, so no locks are needed
}

func (h *neverEarly) Handle(_ context.Context, w int, r Request) {
	if time.Now().Before(r.Intended) {
		h.early[w]++
	}
}
func (h *neverEarly) Missed(Request) {}

func TestRunRealClockExactCountNeverEarly(t *testing.T) {
	for name, clk := range map[string]clock.Clock{"RealClock": clock.Real{}, "wrapped": wrappedClock{}} {
		t.Run(name, func(t *testing.T) {
			h := &neverEarly{early: make([]int64, 16)}
			cfg := Config{Profile: Profile{{From: 2000, To: 2000, Duration: 100 * time.Millisecond}}, MaxInFlight: 16}
			st, err := Run(context.Background(), cfg, clk, h)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			// The count does not depend on timing: every arrival before the
			// end is sent or reported missed, none after it.
			if st.Scheduled != 200 || st.Sent+st.Missed != 200 {
				t.Errorf("Stats = %+v, want 200 scheduled = sent + missed", st)
			}
			var early int64
			for _, n := range h.early {
				early += n
			}
			if early > 0 {
				t.Errorf("%d requests were handled before their intended time", early)
			}
		})
	}
}
