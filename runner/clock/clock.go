// Package clock is the load generator's view of time: the few things the
// scheduler and the engine need (now, one-shot timers, tickers), so that
// tests can drive them with a fake clock (package clocktest) and the load
// layer depends on no Kubernetes library for it.
package clock

import "time"

// Clock tells the time and makes timers.
type Clock interface {
	// Now is the current time.
	Now() time.Time
	// NewTimer returns a timer that fires once, d from now.
	NewTimer(d time.Duration) Timer
	// NewTicker returns a ticker that fires every d.
	NewTicker(d time.Duration) Ticker
}

// Timer is a one-shot timer, like time.Timer.
type Timer interface {
	// C delivers the time the timer fired.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it was active.
	Stop() bool
	// Reset makes the timer fire d from now; it reports whether it was
	// active.
	Reset(d time.Duration) bool
}

// Ticker fires periodically, like time.Ticker.
type Ticker interface {
	// C delivers the ticks.
	C() <-chan time.Time
	// Stop turns the ticker off.
	Stop()
}

// Real is the system clock. The scheduler recognises it and waits on an OS
// timer instead of a Go timer when it can (see schedule.Run).
type Real struct{}

// Now is time.Now.
func (Real) Now() time.Time { return time.Now() }

// NewTimer wraps time.NewTimer.
func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

// NewTicker wraps time.NewTicker.
func (Real) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time        { return t.t.C }
func (t realTimer) Stop() bool                 { return t.t.Stop() }
func (t realTimer) Reset(d time.Duration) bool { return t.t.Reset(d) }

type realTicker struct{ t *time.Ticker }

func (t realTicker) C() <-chan time.Time { return t.t.C }
func (t realTicker) Stop()               { t.t.Stop() }
