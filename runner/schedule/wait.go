package schedule

import (
	"context"
	"time"

	"github.com/spanbench/spanbench/runner/clock"
)

// waiter blocks the calling goroutine until the clock reaches an instant.
// A Run owns one waiter, so no timer is created per request.
type waiter interface {
	// waitUntil returns the first clock reading at or after t, or the
	// context's error (with the last reading) if the context ends first.
	waitUntil(t time.Time) (time.Time, error)
	// close releases the waiter's timer.
	close()
}

// newWaiter returns the most precise waiter available for clk. Go timers are
// delivered through the runtime's netpoller, which rounds a sleep of less than
// 1ms up to 1ms whenever the process is otherwise idle, so a 50µs wait often
// takes over 1ms. For the real clock on Linux, a timerfd watched by the same
// netpoller wakes within tens of µs instead (see fdWaiter). Busy-waiting was
// rejected: besides burning a core, a goroutine spinning on runtime.Gosched
// at GOMAXPROCS=1 keeps the scheduler from polling the network, delaying
// every RPC response by up to 10ms. Any other clock, such as the fake clock
// in tests, is waited on with one reused clk timer.
func newWaiter(ctx context.Context, clk clock.Clock) waiter {
	if isRealClock(clk) {
		if w := newPreciseWaiter(ctx, clk); w != nil {
			return w
		}
	}
	return &timerWaiter{ctx: ctx, clk: clk}
}

// isRealClock reports whether clk is the real clock, whose Now is time.Now and
// whose timers can therefore be replaced by an OS timer. A wrapper type is
// deliberately not recognised: it may change what time means.
func isRealClock(clk clock.Clock) bool {
	switch clk.(type) {
	case clock.Real, *clock.Real:
		return true
	}
	return false
}

// timerWaiter waits with a single timer from the injected clock.
type timerWaiter struct {
	ctx   context.Context
	clk   clock.Clock
	timer clock.Timer // created on first use, then Reset
}

// rearmAfter is how far the clock may move while a timerWaiter arms its
// timer before the timer is armed again. A timer is armed for t minus a
// reading of the clock, so it is late by however far the clock moved in
// between: nanoseconds for the real clock, a whole step for a fake clock
// stepped by a test while one of the workers was arming (the others are
// already waiting, so the test cannot tell). Go timers are not more precise
// than about a millisecond anyway.
const rearmAfter = time.Millisecond

func (w *timerWaiter) waitUntil(t time.Time) (time.Time, error) {
	for {
		now := w.clk.Now()
		if !now.Before(t) {
			return now, nil
		}
		w.arm(t.Sub(now))
		if w.clk.Now().Sub(now) > rearmAfter {
			continue
		}
		if err := w.sleep(); err != nil {
			return now, err
		}
	}
}

// arm sets the reused timer to fire d from now.
func (w *timerWaiter) arm(d time.Duration) {
	if w.timer == nil {
		w.timer = w.clk.NewTimer(d)
	} else {
		w.timer.Reset(d)
	}
}

// sleep waits for the armed timer or until the context ends.
func (w *timerWaiter) sleep() error {
	select {
	case <-w.timer.C():
		return nil
	case <-w.ctx.Done():
		// Drain a value that fired concurrently: a stale value would end
		// the next wait early (harmless, since waitUntil rechecks the
		// clock) and hold the timer's one-slot channel.
		if !w.timer.Stop() {
			select {
			case <-w.timer.C():
			default:
			}
		}
		return w.ctx.Err()
	}
}

func (w *timerWaiter) close() {
	if w.timer != nil {
		w.timer.Stop()
	}
}
