package schedule

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spanbench/spanbench/runner/clock"
)

// openRun is an open-loop run in which the workers claim the arrivals
// themselves: an idle worker takes the next arrival of the schedule, sleeps
// on its own timer until it is due and sends it on its own goroutine. There
// is no dispatcher to hand requests over: a dispatcher that wakes up for an
// arrival and passes it to a parked worker costs a second goroutine wake-up
// per request, and usually a second thread (the hand-off wakes an idle
// thread that spins, runs the worker and sleeps again), which at a few
// thousand requests a second is most of what the engine costs beyond the
// client call.
//
// At a steady rate the workers take turns: while one waits for its reply,
// another already sleeps on the next arrival, and the first, done, takes
// the one after. A worker that sends finding nobody holding the next
// arrival starts a worker to hold it, so there is one goroutine more than
// the most requests ever in flight (at most MaxInFlight+1). The in-flight
// cap counts slots, not goroutines: a worker whose arrival comes due while
// MaxInFlight requests are in flight reports it missed and takes the next.
//
// Everything the schedule decides stays where it was: arrivals are taken in
// schedule order, each keeps its intended time however late it is sent,
// none is sent early, and wake-ups respect Granularity.
type openRun struct {
	ctx      context.Context // Run's context, given to Handle
	waitCtx  context.Context // ends the workers' waits: ctx, or a failed timer
	fail     context.CancelFunc
	clk      clock.Clock
	h        Handler
	end      time.Time
	gran     time.Duration
	inFlight *atomic.Int64 // requests sent and not yet returned from Handle
	wg       sync.WaitGroup

	mu sync.Mutex
	it *Iterator
	// next is the next arrival nobody has claimed yet (valid if hasNext).
	next    claim
	hasNext bool
	seq     uint64    // Seq of next
	start   time.Time // the schedule's start
	// lastWake is the wake-up instant of the last claim: the next one
	// wakes with it or at least Granularity later.
	lastWake time.Time
	holders  int   // workers sleeping on a claimed arrival
	free     []int // free in-flight slots (Handle's worker index), the last freed last
	slots    int   // slots handed out so far, at most max
	max      int
	stats    Stats
	err      error // a worker's wait failed other than by ctx
}

// claim is an arrival a worker holds: the request and when to wake for it.
type claim struct {
	req  Request
	wake time.Time
}

// runOpen runs the schedule with self-claiming workers (openRun) and
// returns once the profile has ended and every worker has returned.
func runOpen(ctx context.Context, cfg Config, clk clock.Clock, w waiter, h Handler, start time.Time) (Stats, error) {
	it, err := NewIterator(cfg)
	if err != nil {
		return Stats{}, err
	}
	waitCtx, fail := context.WithCancel(ctx)
	defer fail()
	o := &openRun{
		ctx: ctx, waitCtx: waitCtx, fail: fail, clk: clk, h: h,
		end:      start.Add(cfg.Profile.Duration()),
		gran:     cfg.Granularity,
		inFlight: inFlightCounter(cfg),
		it:       it, start: start, lastWake: start,
		max:   cfg.MaxInFlight,
		free:  make([]int, 0, min(cfg.MaxInFlight, 64)),
		stats: Stats{Start: start},
	}
	o.mu.Lock()
	o.advance()
	o.spawnLocked()
	o.mu.Unlock()
	_, err = w.waitUntil(o.end)
	o.wg.Wait()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return o.stats, o.err
	}
	if err := ctx.Err(); err != nil {
		return o.stats, err
	}
	return o.stats, err
}

// inFlightCounter is the caller's in-flight counter, or a private one.
func inFlightCounter(cfg Config) *atomic.Int64 {
	if cfg.InFlight != nil {
		return cfg.InFlight
	}
	return new(atomic.Int64)
}

// advance reads the schedule's next arrival into o.next.
func (o *openRun) advance() {
	off, ok := o.it.Next()
	o.hasNext = ok
	if ok {
		o.next = claim{req: Request{Seq: o.seq, Intended: o.start.Add(off)}}
		o.seq++
	}
}

// claimLocked takes the next unclaimed arrival for the calling worker and
// decides when it wakes for it; false when the schedule is exhausted.
func (o *openRun) claimLocked() (claim, bool) {
	if !o.hasNext {
		return claim{}, false
	}
	c := o.next
	c.wake = o.wakeAt(c.req.Intended)
	o.lastWake = c.wake
	o.holders++
	o.advance()
	return c, true
}

// wakeAt returns when to wake for an arrival at `at`: never before at, with
// the previous claim if that wakes at or after at, and otherwise not sooner
// than Granularity after it, which bounds wake-ups to 1/Granularity a
// second; the end of the profile is not overslept.
func (o *openRun) wakeAt(at time.Time) time.Time {
	if !at.After(o.lastWake) {
		return o.lastWake
	}
	earliest := o.lastWake.Add(o.gran)
	if earliest.After(o.end) {
		earliest = o.end
	}
	if at.Before(earliest) {
		return earliest
	}
	return at
}

// spawnLocked starts a worker holding the next unclaimed arrival, if any.
func (o *openRun) spawnLocked() {
	c, ok := o.claimLocked()
	if !ok {
		return
	}
	o.wg.Go(func() { o.work(c) })
}

// work is one worker: it sleeps until its claimed arrival is due, sends it
// (or reports it missed), and claims the next, until the schedule is
// exhausted or the run is cancelled.
func (o *openRun) work(c claim) {
	w := newWaiter(o.waitCtx, o.clk)
	defer w.close()
	for {
		if _, err := w.waitUntil(c.wake); err != nil || o.waitCtx.Err() != nil {
			o.drop(err)
			return
		}
		slot, sent := o.take(c.req)
		if sent {
			o.h.Handle(o.ctx, slot, c.req)
		}
		var ok bool
		if c, ok = o.release(slot, sent); !ok {
			return
		}
	}
}

// take starts sending r, which has come due: it takes an in-flight slot and,
// if no other worker holds the next arrival, starts one to hold it. If all
// MaxInFlight slots are taken, r is reported missed.
func (o *openRun) take(r Request) (slot int, sent bool) {
	o.mu.Lock()
	o.holders--
	o.stats.Scheduled++
	slot, sent = o.acquireLocked()
	if !sent {
		// During a catch-up burst on few Ps, workers that are merely
		// waiting to be scheduled would turn the burst into misses. Yield
		// once to let them run; only if the slots are still taken are
		// MaxInFlight requests really in flight.
		o.mu.Unlock()
		runtime.Gosched()
		o.mu.Lock()
		slot, sent = o.acquireLocked()
	}
	if sent {
		o.stats.Sent++
		if o.holders == 0 {
			o.spawnLocked()
		}
	} else {
		o.stats.Missed++
	}
	o.mu.Unlock()
	if !sent {
		o.h.Missed(r)
	}
	return slot, sent
}

// acquireLocked takes the in-flight slot freed last, or a new one while
// fewer than MaxInFlight have been handed out.
func (o *openRun) acquireLocked() (int, bool) {
	if n := len(o.free); n > 0 {
		slot := o.free[n-1]
		o.free = o.free[:n-1]
		o.inFlight.Add(1)
		return slot, true
	}
	if o.slots < o.max {
		o.slots++
		o.inFlight.Add(1)
		return o.slots - 1, true
	}
	return 0, false
}

// release gives back the slot of a sent request and claims the worker's
// next arrival.
func (o *openRun) release(slot int, sent bool) (claim, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if sent {
		o.free = append(o.free, slot)
		o.inFlight.Add(-1)
	}
	return o.claimLocked()
}

// drop abandons a claimed arrival when the worker's wait ends early:
// cancellation, or a failed timer, which ends the run.
func (o *openRun) drop(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.holders--
	if err != nil && o.ctx.Err() == nil && o.err == nil {
		o.err = err
		o.fail()
	}
}
