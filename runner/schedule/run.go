package schedule

import (
	"context"
	"errors"
	"time"

	"github.com/spanbench/spanbench/runner/clock"
)

// Request is one scheduled operation.
type Request struct {
	// Seq numbers this shard's requests. In open-loop mode it counts arrivals
	// from 0 in schedule order, including missed ones. In closed-loop mode
	// worker w's k-th request has Seq k*Concurrency+w: unique without a shared
	// counter, but not in time order.
	Seq uint64
	// Intended is when the request was scheduled to be sent. A late dispatch
	// keeps the original time, so latency measured from Intended includes the
	// scheduler's delay (no coordinated omission). In closed-loop mode it is
	// the clock reading just before Handle is called.
	Intended time.Time
}

// Handler does the work of the load run. Run calls it concurrently from
// several goroutines.
type Handler interface {
	// Handle performs one request on worker goroutine `worker`, in
	// [0, MaxInFlight) in open-loop mode and [0, Concurrency) in closed-loop
	// mode. Calls with the same worker index never overlap, so the handler may
	// keep per-worker state (sessions, histograms) indexed by it without
	// locks. ctx is Run's context: Handle should return promptly once it is
	// done. Every sent request is handled exactly once, even after ctx is
	// cancelled.
	Handle(ctx context.Context, worker int, r Request)
	// Missed reports an open-loop request that was due but not sent because
	// MaxInFlight requests were already in flight. It runs on the worker
	// that held the request, possibly on several at once, so it must be safe
	// for concurrent use, quick and non-blocking: that worker takes the next
	// arrival only once it returns.
	Missed(r Request)
}

// Stats counts what a Run did.
type Stats struct {
	// Scheduled is the number of requests whose intended time was reached:
	// Sent + Missed.
	Scheduled uint64
	// Sent is the number of requests handed to Handle.
	Sent uint64
	// Missed is the number of requests reported to Handler.Missed.
	Missed uint64
	// Start is the instant the schedule was computed from: Config.Start, or
	// the clock's Now when Run was called if Config.Start was zero.
	Start time.Time
	// Finished is when a batch's last call returned (Config.Iterations);
	// zero for other loads and for a batch the profile's end cut short.
	Finished time.Time
}

// Run executes the schedule described by cfg, calling h for every request,
// and returns once the profile's duration has elapsed since the start and all
// in-flight requests have finished. In closed-loop mode Scheduled == Sent and
// Missed is 0.
//
// In open-loop mode no request with an intended time at or after
// start+duration is sent; requests intended before it are sent even if their
// worker wakes up a little late, because dropping them would turn ordinary
// timer jitter into missed requests.
//
// If ctx is cancelled Run stops sending, waits for the workers to return
// from Handle (which should observe ctx) and returns ctx's error with the
// counts so far. An invalid cfg yields an error wrapping ErrInvalidConfig.
//
// Waits use clk. When clk is clock.Real (not a wrapper around it) Run
// waits on a Linux timerfd instead of a Go timer, because Go timers overshoot
// sub-millisecond sleeps by up to 1ms while the process is idle.
func Run(ctx context.Context, cfg Config, clk clock.Clock, h Handler) (Stats, error) {
	if err := cfg.Validate(); err != nil {
		return Stats{}, err
	}
	if clk == nil || h == nil {
		return Stats{}, errors.New("schedule: Run needs a non-nil clock and handler")
	}
	w := newWaiter(ctx, clk)
	defer w.close()
	start := startInstant(cfg.Start, clk.Now())
	if cfg.closedLoop() && cfg.Iterations > 0 {
		return runBatch(ctx, cfg, clk, w, h, start)
	}
	if cfg.closedLoop() {
		return runClosed(ctx, cfg, clk, w, h, start)
	}
	return runOpen(ctx, cfg, clk, w, h, start)
}

// startInstant returns want re-expressed relative to now. A start instant
// published by a controller carries no monotonic clock reading; anchoring it
// to now gives it one, so the run is not disturbed if the wall clock is
// stepped.
func startInstant(want, now time.Time) time.Time {
	if want.IsZero() {
		return now
	}
	return now.Add(want.Sub(now))
}
