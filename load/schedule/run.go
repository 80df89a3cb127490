package schedule

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/spanbench/spanbench/load/clock"
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
	// MaxInFlight requests were already in flight. It runs on the dispatcher
	// goroutine, so it must be quick and must not block: every moment spent
	// in it delays the following sends.
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
// start+duration is sent; requests intended before it are sent even if the
// dispatcher reaches them a little late, because dropping them would turn
// ordinary timer jitter into missed requests.
//
// If ctx is cancelled Run stops dispatching, waits for the workers to return
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
	return runOpen(ctx, cfg, w, h, start)
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

// dispatcher is the open-loop state owned by the single dispatching
// goroutine. Only inFlight is shared with the workers.
type dispatcher struct {
	ctx      context.Context
	it       *Iterator
	w        waiter
	h        Handler
	start    time.Time
	end      time.Time
	max      int64
	gran     time.Duration
	inFlight *atomic.Int64 // requests sent but not yet handled, queued or running
	workers  *pool
	stats    Stats
}

// runOpen dispatches the schedule to up to MaxInFlight workers, started as
// needed, and waits for them to finish.
func runOpen(ctx context.Context, cfg Config, w waiter, h Handler, start time.Time) (Stats, error) {
	it, err := NewIterator(cfg)
	if err != nil {
		return Stats{}, err
	}
	d := &dispatcher{
		ctx: ctx, it: it, w: w, h: h,
		start:    start,
		end:      start.Add(cfg.Profile.Duration()),
		max:      int64(cfg.MaxInFlight),
		gran:     cfg.Granularity,
		stats:    Stats{Start: start},
		inFlight: inFlightCounter(cfg),
	}
	d.workers = newPool(cfg.MaxInFlight, d.handle)
	err = d.run()
	d.workers.close()
	return d.stats, err
}

// inFlightCounter is the caller's in-flight counter, or a private one.
func inFlightCounter(cfg Config) *atomic.Int64 {
	if cfg.InFlight != nil {
		return cfg.InFlight
	}
	return new(atomic.Int64)
}

// handle runs r on worker i, then makes the worker idle again before it
// gives the in-flight slot back, so that a slot taken always finds a worker.
func (d *dispatcher) handle(i int, r Request) {
	d.h.Handle(d.ctx, i, r)
	d.workers.idleAgain(i)
	d.inFlight.Add(-1)
}

// run dispatches every arrival at its intended time (or at once if that has
// passed) and then waits for the end of the profile.
func (d *dispatcher) run() error {
	now, err := d.w.waitUntil(d.start)
	if err != nil {
		return err
	}
	for seq := uint64(0); ; seq++ {
		off, ok := d.it.Next()
		if !ok {
			break
		}
		at := d.start.Add(off)
		// Everything due by the last clock reading goes out without another
		// reading or wait; only a future arrival costs a wait.
		if at.After(now) {
			if now, err = d.w.waitUntil(d.wakeAt(at, now)); err != nil {
				return err
			}
		}
		if err := d.ctx.Err(); err != nil {
			return err // also ends a catch-up burst promptly
		}
		d.send(Request{Seq: seq, Intended: at})
	}
	_, err = d.w.waitUntil(d.end)
	return err
}

// wakeAt returns when to wake up for an arrival at `at` given the clock
// reading `now` taken at the previous wake-up: not before at (requests are
// never sent early), and not sooner than Granularity after the previous
// wake-up, which bounds the wake-up rate to 1/Granularity, except that the
// end of the profile is not overslept.
func (d *dispatcher) wakeAt(at, now time.Time) time.Time {
	earliest := now.Add(d.gran)
	if earliest.After(d.end) {
		earliest = d.end
	}
	if at.Before(earliest) {
		return earliest
	}
	return at
}

// send hands r to a worker unless MaxInFlight requests are in flight, in
// which case it reports r as missed.
func (d *dispatcher) send(r Request) {
	d.stats.Scheduled++
	if !d.acquire() {
		d.miss(r)
		return
	}
	if !d.workers.hand(r) { // cannot happen (see pool.hand); never lose r
		d.inFlight.Add(-1)
		d.miss(r)
		return
	}
	d.stats.Sent++
}

func (d *dispatcher) miss(r Request) {
	d.stats.Missed++
	d.h.Missed(r)
}

// acquire takes an in-flight slot, reporting false if all are taken.
func (d *dispatcher) acquire() bool {
	if d.inFlight.Add(1) <= d.max {
		return true
	}
	d.inFlight.Add(-1)
	// During a catch-up burst on few Ps the dispatcher never blocks, so
	// workers that are merely waiting to be scheduled (or to decrement the
	// counter) would turn the burst into misses. Yield once to let them run;
	// only if the slots are still taken are MaxInFlight requests really in
	// flight.
	runtime.Gosched()
	if d.inFlight.Add(1) <= d.max {
		return true
	}
	d.inFlight.Add(-1)
	return false
}
