package engine

import (
	"sync"
	"time"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
	"github.com/spanbench/spanbench/runner/schedule"
)

// series cuts the run into intervals: at each boundary (start + k*interval,
// the same instants in every shard) it drains the recorders into one
// interval of the time series. An operation belongs to the interval in which
// it completed.
type series struct {
	e        *engine
	start    time.Time
	interval time.Duration
	sched    schedule.Config

	mu        sync.Mutex
	intervals []result.Interval
	sofar     *histogram.Compact // all operations' latency, for progress
	dec       histogram.Decoder  // reads intervals' latencies into sofar
	err       error
}

func newSeries(e *engine, start time.Time, interval time.Duration, sc schedule.Config) *series {
	return &series{e: e, start: start, interval: interval, sched: sc, sofar: histogram.NewCompact()}
}

// tick drains at every boundary until stop, then drains the last, partial
// interval.
func (s *series) tick(stop <-chan struct{}) {
	for k := 1; ; k++ {
		boundary := s.start.Add(time.Duration(k) * s.interval)
		t := s.e.clk.NewTimer(boundary.Sub(s.e.clk.Now()))
		select {
		case <-stop:
			t.Stop()
			s.drain(k-1, true)
			return
		case <-t.C():
			s.drain(k-1, false)
		}
	}
}

// drain records interval idx. The final one is dropped when nothing
// happened in it (a run that ended on a boundary).
func (s *series) drain(idx int, final bool) {
	from := s.start.Add(time.Duration(idx) * s.interval)
	in := result.Interval{Index: idx, Missed: s.e.missed.Swap(0),
		TargetRate: s.meanTargetRate(from, from.Add(s.interval))}
	empty := in.Missed == 0
	for _, r := range s.e.recs {
		op, err := r.drain()
		if err != nil {
			s.fail(err)
			return
		}
		empty = empty && op.OK == 0 && len(op.Errors) == 0
		in.Operations = append(in.Operations, op)
	}
	if final && empty {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, op := range in.Operations {
		_ = s.dec.AddTo(s.sofar, op.LatencyHistogram) // the recorder's own encoding: cannot fail
	}
	s.intervals = append(s.intervals, in)
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
