package engine

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
	"github.com/spanbench/spanbench/runner/schedule"
)

// series cuts the run into intervals at the instants start + k*interval,
// the same in every shard. An operation belongs to the interval of its
// intended send (open loop; in a closed loop, of its send), wherever it
// completes, and so does a missed send: an interval's counts are then at
// most the arrivals its schedule produced, however late the operations
// are sent or return. An interval is drained into the time series once
// every operation intended in it has been counted: in an open loop, when
// its count reaches the arrivals the schedule intends in it (the schedule
// is deterministic: schedule.ArrivalCounter); in a closed loop, when it
// has ended and every operation sent in it has returned. What is still
// open when the run stops (operations cancelled at the drain timeout are
// counted by then; arrivals a cancelled run never sent are not) is drained
// then. The live progress (Progress, the Observer) counts operations when
// they complete.
type series struct {
	e        *engine
	start    time.Time
	interval time.Duration
	sched    schedule.Config
	// n is the number of intervals of the run, the last possibly partial.
	n     int
	slots []slot
	// wake tells the draining goroutine that an interval may be complete.
	wake chan struct{}
	// arrivals counts the open loop's arrivals by interval; counted is
	// the number of intervals whose slots know theirs. nil in a closed
	// loop.
	arrivals *schedule.ArrivalCounter
	counted  int
	// gate orders a closed loop's sends against the ends of intervals: a
	// send reads the clock and joins its interval under the read lock, and
	// the end of interval k-1 takes the write lock once before setting
	// ended to k, so that no send joins an interval that has ended.
	gate  sync.RWMutex
	ended atomic.Int64
	// next is the next interval to drain; the draining goroutine's.
	next int

	mu        sync.Mutex
	intervals []result.Interval
	sofar     *histogram.Compact // all operations' latency, for progress
	dec       histogram.Decoder  // reads intervals' latencies into sofar
	err       error
}

// slot is one interval's accounting. expected is its arrivals (open loop;
// -1 until counted), started its sends (closed loop), done the operations
// recorded in it and the missed sends.
type slot struct {
	expected      atomic.Int64
	started, done atomic.Uint64
	missed        atomic.Uint64
}

func newSeries(e *engine, start time.Time, interval time.Duration, sc schedule.Config) (*series, error) {
	s := &series{e: e, start: start, interval: interval, sched: sc, sofar: histogram.NewCompact(), wake: make(chan struct{}, 1)}
	s.n = max(schedule.Intervals(sc.Profile.Duration(), interval), 1)
	if s.n > result.MaxIntervals {
		return nil, fmt.Errorf("%d intervals of %v: more than a result holds (%d)", s.n, interval, result.MaxIntervals)
	}
	s.slots = make([]slot, s.n)
	for i := range s.slots {
		s.slots[i].expected.Store(-1)
	}
	if sc.Concurrency == 0 {
		var err error
		if s.arrivals, err = schedule.NewArrivalCounter(sc, interval); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// index is the interval of instant t, within the run's.
func (s *series) index(t time.Time) int {
	k := int(t.Sub(s.start) / s.interval)
	return min(max(k, 0), s.n-1)
}

// begin is the interval of request r, sent at the clock reading now:
// its intended time's in an open loop, its send's in a closed one.
func (s *series) begin(r schedule.Request) (k int, now time.Time) {
	if s.arrivals != nil {
		return s.index(r.Intended), s.e.clk.Now()
	}
	s.gate.RLock()
	defer s.gate.RUnlock()
	now = s.e.clk.Now()
	k = s.index(now)
	s.slots[k].started.Add(1)
	return k, now
}

// done counts an operation recorded in, or a send missed of, interval k,
// and wakes the draining goroutine if that may complete it.
func (s *series) done(k int) {
	sl := &s.slots[k]
	n := sl.done.Add(1)
	if e := sl.expected.Load(); (e >= 0 && n == uint64(e)) || (s.arrivals == nil && int64(k) < s.ended.Load()) {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// missed counts a send of r missed.
func (s *series) missed(r schedule.Request) {
	k := s.index(r.Intended)
	s.slots[k].missed.Add(1)
	s.done(k)
}

// tick drains the intervals as they complete, and when stop is closed
// (every operation has returned) the ones still open.
func (s *series) tick(stop <-chan struct{}) {
	s.count(0)
	for k := 1; k <= s.n; k++ {
		t := s.e.clk.NewTimer(s.start.Add(time.Duration(k) * s.interval).Sub(s.e.clk.Now()))
		if !s.await(stop, t.C()) {
			t.Stop()
			s.drainRest()
			return
		}
		if s.arrivals == nil {
			s.gate.Lock()
			s.ended.Store(int64(k))
			s.gate.Unlock()
		}
		s.count(k)
		s.drainComplete()
	}
	s.await(stop, nil)
	s.drainRest()
}

// await drains completed intervals whenever woken, until at fires (true)
// or stop is closed (false).
func (s *series) await(stop <-chan struct{}, at <-chan time.Time) bool {
	for {
		select {
		case <-stop:
			return false
		case <-at:
			return true
		case <-s.wake:
			s.drainComplete()
		}
	}
}

// count learns interval k's arrivals (open loop), which begins now.
func (s *series) count(k int) {
	if s.arrivals == nil || k >= s.n {
		return
	}
	for ; s.counted <= k; s.counted++ {
		s.slots[s.counted].expected.Store(int64(s.arrivals.Next()))
	}
}

// drainComplete drains the intervals, in order, whose operations have
// all been counted.
func (s *series) drainComplete() {
	for s.next < s.n && s.complete(s.next) {
		s.drain(s.next)
		s.next++
	}
}

// complete says interval k will count nothing more.
func (s *series) complete(k int) bool {
	sl := &s.slots[k]
	if s.arrivals != nil {
		e := sl.expected.Load()
		return e >= 0 && sl.done.Load() == uint64(e)
	}
	return int64(k) < s.ended.Load() && sl.done.Load() == sl.started.Load()
}

// drainRest drains every interval not drained yet: the run has stopped.
func (s *series) drainRest() {
	for ; s.next < s.n; s.next++ {
		s.drain(s.next)
	}
}

// drain records interval idx.
func (s *series) drain(idx int) {
	from := s.start.Add(time.Duration(idx) * s.interval)
	in := result.Interval{Index: idx, Missed: s.slots[idx].missed.Load(),
		TargetRate: s.meanTargetRate(from, from.Add(s.interval))}
	for _, r := range s.e.recs {
		op, err := r.drain(idx)
		if err != nil {
			s.fail(err)
			return
		}
		in.Operations = append(in.Operations, op)
	}
	s.mu.Lock()
	for _, op := range in.Operations {
		_ = s.dec.AddTo(s.sofar, op.LatencyHistogram) // the recorder's own encoding: cannot fail
	}
	s.intervals = append(s.intervals, in)
	s.mu.Unlock()
	if s.e.cfg.Drained != nil {
		s.e.cfg.Drained(in)
	}
}

func (s *series) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

// meanTargetRate is this shard's target rate averaged over [from, to),
// clipped to the run.
func (s *series) meanTargetRate(from, to time.Time) float64 {
	if s.sched.Concurrency > 0 {
		return 0
	}
	end := s.start.Add(s.sched.Profile.Duration())
	if to.After(end) {
		to = end
	}
	r := meanRate(s.sched.Profile, from.Sub(s.start), to.Sub(s.start))
	return schedule.Share(r, s.sched.Shard, s.sched.Shards)
}

// targetRate is this shard's target rate at t.
func (s *series) targetRate(t time.Time) float64 {
	if s.sched.Concurrency > 0 || t.Before(s.start) {
		return 0
	}
	return schedule.Share(s.sched.Profile.Rate(t.Sub(s.start)), s.sched.Shard, s.sched.Shards)
}

func (s *series) p99SoFar() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sofar.ValueAtPercentiles(99)[0]
}

func (s *series) result() ([]result.Interval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.intervals, s.err
}
