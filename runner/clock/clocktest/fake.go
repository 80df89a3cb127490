// Package clocktest provides a fake clock.Clock for tests of the load
// layer: time stands still until the test steps it.
package clocktest

import (
	"sync"
	"time"

	"github.com/spanbench/spanbench/runner/clock"
)

// Fake is a clock.Clock whose time moves only by Step. A timer or ticker
// whose time has come fires during the Step, with a non-blocking send on a
// channel of capacity one (like a real ticker, a tick nobody took is
// dropped).
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	waiters []*waiter
}

// NewFake returns a fake clock reading t.
func NewFake(t time.Time) *Fake { return &Fake{now: t} }

// waiter is a pending timer or ticker.
type waiter struct {
	f      *Fake
	at     time.Time
	period time.Duration // > 0 for a ticker
	c      chan time.Time
}

var _ clock.Clock = (*Fake)(nil)

// Now is the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Step moves the time forward by d and fires what has come due.
func (f *Fake) Step(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	kept := f.waiters[:0]
	for _, w := range f.waiters {
		if w.at.After(f.now) {
			kept = append(kept, w)
			continue
		}
		select {
		case w.c <- f.now:
		default:
		}
		if w.period > 0 {
			for !w.at.After(f.now) {
				w.at = w.at.Add(w.period)
			}
			kept = append(kept, w)
		}
	}
	f.waiters = kept
}

// HasWaiters reports whether any timer or ticker is pending.
func (f *Fake) HasWaiters() bool { return f.Waiters() > 0 }

// Waiters counts the pending timers and tickers.
func (f *Fake) Waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters)
}

// NewTimer returns a fake timer firing d from the fake now.
func (f *Fake) NewTimer(d time.Duration) clock.Timer {
	w := &waiter{f: f, c: make(chan time.Time, 1)}
	w.Reset(d)
	return w
}

// NewTicker returns a fake ticker firing every d.
func (f *Fake) NewTicker(d time.Duration) clock.Ticker {
	if d <= 0 {
		panic("clocktest: non-positive ticker period")
	}
	w := &waiter{f: f, period: d, c: make(chan time.Time, 1)}
	w.Reset(d)
	return fakeTicker{w}
}

func (w *waiter) C() <-chan time.Time { return w.c }

// Stop removes the waiter; it reports whether it was pending.
func (w *waiter) Stop() bool {
	w.f.mu.Lock()
	defer w.f.mu.Unlock()
	return w.removeLocked()
}

// Reset re-arms the waiter d from the fake now, dropping a value not yet
// received (as Go's timers do since 1.23).
func (w *waiter) Reset(d time.Duration) bool {
	w.f.mu.Lock()
	defer w.f.mu.Unlock()
	active := w.removeLocked()
	select {
	case <-w.c:
	default:
	}
	w.at = w.f.now.Add(d)
	if d <= 0 && w.period == 0 {
		w.c <- w.f.now // due already: fires at once, as a real timer would
		return active
	}
	w.f.waiters = append(w.f.waiters, w)
	return active
}

func (w *waiter) removeLocked() bool {
	for i, o := range w.f.waiters {
		if o == w {
			w.f.waiters = append(w.f.waiters[:i], w.f.waiters[i+1:]...)
			return true
		}
	}
	return false
}

type fakeTicker struct{ w *waiter }

func (t fakeTicker) C() <-chan time.Time { return t.w.c }
func (t fakeTicker) Stop()               { t.w.Stop() }
