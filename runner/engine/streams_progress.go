package engine

import (
	"sync"
	"time"

	"github.com/spanbench/spanbench/runner/clock"
)

// streamsProgress adds the streams' progress up into the shard's, which
// its gauges (target, achieved, in flight) and the progress log show:
// rates, in-flight counts, errors and missed sends add up across streams;
// p99 is the worst stream's; the time is the shard's, from the run's start
// to its last stream's end. Each stream's engine reports its own progress
// about once a second (set); a stream not started yet reports a target of
// 0, and one that ended keeps only its counts (ended).
type streamsProgress struct {
	start, end time.Time
	mu         sync.Mutex
	latest     []Progress
}

func newStreamsProgress(cfg Config, streams []Stream) *streamsProgress {
	p := &streamsProgress{start: cfg.Start, end: cfg.Start, latest: make([]Progress, len(streams))}
	for _, s := range streams {
		p.end = maxTime(p.end, cfg.Start.Add(s.Offset+s.Load.Profile.Duration()))
	}
	return p
}

// set records stream i's latest progress.
func (p *streamsProgress) set(i int, pr Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latest[i] = pr
}

// ended keeps stream i's counts and drops its rates: it sends no more.
func (p *streamsProgress) ended(i int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	last := p.latest[i]
	p.latest[i] = Progress{ClosedLoop: last.ClosedLoop, P99: last.P99, Errors: last.Errors, Missed: last.Missed}
}

// at is the shard's progress at now.
func (p *streamsProgress) at(now time.Time) Progress {
	p.mu.Lock()
	defer p.mu.Unlock()
	sum := Progress{Elapsed: max(now.Sub(p.start), 0), Total: p.end.Sub(p.start), ClosedLoop: true}
	for _, s := range p.latest {
		sum.Rate += s.Rate
		sum.TargetRate += s.TargetRate
		sum.ClosedLoop = sum.ClosedLoop && s.ClosedLoop
		sum.P99 = max(sum.P99, s.P99)
		sum.Errors += s.Errors
		sum.Missed += s.Missed
		sum.InFlight += s.InFlight
	}
	return sum
}

// report tells cfg's Observer and Progress the shard's progress about
// once a second until stop is closed.
func (p *streamsProgress) report(cfg Config, clk clock.Clock, stop <-chan struct{}) {
	t := clk.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C():
			pr := p.at(now)
			if cfg.Observer != nil {
				cfg.Observer.Tick(pr)
			}
			if cfg.Progress != nil {
				cfg.Progress(pr)
			}
		}
	}
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
