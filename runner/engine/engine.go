// Package engine runs a mix of operations on an open-loop (or closed-loop)
// schedule, measures every operation from its intended send time into
// per-interval HDR histograms, and returns the shard's result document. It
// ties together the scheduler, the operations and the result format; none of
// those know about each other, and the engine knows neither Spanner nor the
// API's types: package shardrun binds a BenchmarkRun's workload to it.
package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/operation"
	"github.com/spanbench/spanbench/runner/clock"
	"github.com/spanbench/spanbench/runner/schedule"
)

// DrainTimeout is how long operations still in flight at the end of a run
// may take before they are cancelled (and counted with their error code).
const DrainTimeout = 30 * time.Second

// Config is one shard's run.
type Config struct {
	// Run names the run.
	Run string
	// Spec is the resolved workload spec, recorded with the result; its
	// operations are Operations, in the same order.
	Spec result.Spec
	// Operations is the mix, in spec order.
	Operations []Operation
	// Load is the whole run's load (all shards together).
	Load Load
	// Interval is the length of one interval of the result's time series.
	Interval time.Duration
	// Shard and Shards say this is runner i of n.
	Shard, Shards int
	// LoadShare, when its Count is positive, is this runner's part of the
	// load instead of Shard of Shards: a stream pinned to some runners
	// shares its load among those only. The result still names the runner.
	LoadShare Share
	// Stream names the load stream the result measures; empty for a run
	// without streams.
	Stream string
	// Start is the common start instant; zero means now.
	Start time.Time
	// Seed makes the operation choices and arrivals reproducible.
	Seed int64
	// Target and Environment are recorded with the result.
	Target      result.Target
	Environment result.Environment
	// Notes are caveats recorded with the result.
	Notes []string
	// Clock is the scheduler's clock; nil means the real one.
	Clock clock.Clock
	// Observer sees every operation live (Prometheus); may be nil.
	Observer Observer
	// Progress is called about once a second; may be nil.
	Progress func(Progress)
	// Drained is called with each interval of the time series once it is
	// complete, in order, from the goroutine that drains them: exact
	// figures for live reports (the runner's), where Progress's are
	// sampled. It must not block. May be nil; a stream's engine has none.
	Drained func(result.Interval)
}

// Operation is one operation of the mix.
type Operation struct {
	// Name is the operation's name in the spec.
	Name string
	// Weight is its share of the mix, relative to the others' (at least 1).
	Weight int
	// Op runs it.
	Op operation.Operation
}

// Load is a run's load: a target rate over time (open loop) or a number of
// workers sending back to back (closed loop).
type Load struct {
	// Profile is the target rate over time of all shards together; its
	// duration is the run's. In a closed loop only the duration counts.
	Profile schedule.Profile
	// Arrivals spaces open-loop sends.
	Arrivals schedule.Arrivals
	// MaxInFlight caps this shard's requests in flight (open loop).
	MaxInFlight int
	// Concurrency > 0 selects a closed loop of this many workers per shard.
	Concurrency int
	// Iterations > 0 makes a closed loop a batch of this many operations
	// on this shard (its share of a batch stream's).
	Iterations uint64
}

// Observer receives live measurements. Its methods run on the hot path and
// must not block.
type Observer interface {
	// Finished reports a completed operation (index in Config.Operations).
	Finished(op int, code codes.Code, latency time.Duration)
	// Missed reports a send skipped because the in-flight cap was reached.
	Missed()
	// Tick reports the run's progress about once a second.
	Tick(p Progress)
}

// engine is the state of one Run.
type engine struct {
	cfg    Config
	clk    clock.Clock
	parent context.Context
	mix    mix
	recs   []*opRecorder
	rngs   []*rand.Rand
	missed atomic.Uint64
	done   atomic.Uint64 // operations finished, for progress
	errors atomic.Uint64
	// inFlight is the scheduler's count of requests in flight: the engine
	// reads it for progress rather than keeping a second count.
	inFlight atomic.Int64
	series   *series
	// firstSend is when this shard's schedule really began (see
	// effectiveStart): the shards' start skew is only visible in it, not in
	// the common scheduled start.
	firstSend atomic.Pointer[time.Time]
	// start is the common scheduled start; openLoop says the requests'
	// Intended times are a schedule (not closed-loop clock readings).
	start    time.Time
	openLoop bool
}

// Run executes the shard's schedule and returns its finalized result.
func Run(ctx context.Context, cfg Config) (*result.Document, error) {
	if err := checkOperations(cfg); err != nil {
		return nil, err
	}
	doc, _, err := run(ctx, cfg)
	return doc, err
}

// run executes a schedule whose operations were checked, and returns its
// result and the scheduler's stats.
func run(ctx context.Context, cfg Config) (*result.Document, schedule.Stats, error) {
	e, sc, err := newEngine(ctx, cfg)
	if err != nil {
		return nil, schedule.Stats{}, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	end := sc.Start.Add(cfg.Load.Profile.Duration())
	drain := e.clk.NewTimer(end.Sub(e.clk.Now()) + DrainTimeout)
	defer drain.Stop()
	go func() {
		select {
		case <-drain.C():
			cancel()
		case <-runCtx.Done():
		}
	}()

	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() { defer wg.Done(); e.series.tick(stop) }()
	wg.Add(1)
	go func() { defer wg.Done(); e.reportProgress(stop, end) }()
	stats, runErr := schedule.Run(runCtx, sc, e.clk, e)
	close(stop)
	wg.Wait()
	if runErr != nil && ctx.Err() != nil {
		return nil, stats, fmt.Errorf("run interrupted: %w", ctx.Err())
	}
	if runErr != nil && runCtx.Err() == nil {
		return nil, stats, runErr
	}
	doc, err := e.document(sc.Start, end, stats)
	return doc, stats, err
}

func newEngine(ctx context.Context, cfg Config) (*engine, schedule.Config, error) {
	clk := cfg.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	start := cfg.Start
	if start.IsZero() {
		start = clk.Now()
	}
	if cfg.Interval <= 0 {
		return nil, schedule.Config{}, fmt.Errorf("interval %v: must be positive", cfg.Interval)
	}
	e := &engine{cfg: cfg, clk: clk, parent: ctx, mix: newMix(cfg.Operations), start: start, openLoop: cfg.Load.Concurrency == 0}
	sc := scheduleConfig(cfg, start, &e.inFlight)
	if err := sc.Validate(); err != nil {
		return nil, sc, err
	}
	for _, op := range cfg.Operations {
		e.recs = append(e.recs, newOpRecorder(op.Name))
	}
	workers := max(sc.MaxInFlight, sc.Concurrency)
	for w := range workers {
		e.rngs = append(e.rngs, rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(cfg.Shard)<<32|uint64(w))))
	}
	var err error
	if e.series, err = newSeries(e, start, cfg.Interval, sc); err != nil {
		return nil, sc, err
	}
	return e, sc, nil
}

// Handle runs one scheduled request on worker w.
func (e *engine) Handle(ctx context.Context, w int, r schedule.Request) {
	rng := e.rngs[w]
	i := e.mix.pick(rng)
	k, begin := e.series.begin(r)
	if e.firstSend.Load() == nil {
		at := e.effectiveStart(begin, r)
		e.firstSend.CompareAndSwap(nil, &at)
	}
	out, err := e.cfg.Operations[i].Op.Do(ctx, rng)
	end := e.clk.Now()
	if err != nil && e.parent.Err() != nil {
		return // the user interrupted the run; not the operation's error
	}
	code := codes.OK
	if err != nil {
		code = status.Code(err)
		e.errors.Add(1)
	}
	e.done.Add(1)
	latency := end.Sub(r.Intended)
	e.recs[i].record(w, k, code, latency, end.Sub(begin), out)
	e.series.done(k)
	if e.cfg.Observer != nil {
		if code == codes.OK && out.NotFound {
			code = codes.NotFound // what the bare client's ReadRow says
		}
		e.cfg.Observer.Finished(i, code, latency)
	}
}

// Missed counts a send the in-flight cap prevented.
func (e *engine) Missed(r schedule.Request) {
	e.missed.Add(1)
	e.series.missed(r)
	if e.cfg.Observer != nil {
		e.cfg.Observer.Missed()
	}
}

func (e *engine) document(start, end time.Time, stats schedule.Stats) (*result.Document, error) {
	intervals, err := e.series.result()
	if err != nil {
		return nil, err
	}
	doc := &result.Document{
		SchemaVersion:   result.SchemaVersion,
		Run:             e.cfg.Run,
		Stream:          e.cfg.Stream,
		Spec:            e.cfg.Spec,
		Target:          e.cfg.Target,
		Environment:     e.cfg.Environment,
		Start:           start,
		End:             end,
		IntervalSeconds: e.cfg.Interval.Seconds(),
		Intervals:       intervals,
		Notes:           e.cfg.Notes,
		Shards: []result.Shard{{
			Index: e.cfg.Shard, Count: e.cfg.Shards, Host: hostname(),
			Started: e.started(start), Ended: e.clk.Now(), Missed: stats.Missed,
			TargetRate: schedule.Share(e.series.sched.Profile.Rate(0), e.series.sched.Shard, e.series.sched.Shards),
		}},
	}
	if e.series.sched.Concurrency > 0 {
		doc.Shards[0].TargetRate = 0
	}
	return doc, result.Finalize(doc)
}

// started is when the shard really began sending; a shard that sent
// nothing keeps the scheduled start.
// effectiveStart is when this shard's schedule really began, given that
// its first request r began at begin. In open loop the first arrival is
// not at the start by design: with uniform arrivals shard i of N sends
// first at i/N of its own interval, so with 100 shards at 2 ops/s each the
// first sends spread over 0.5 s even when every shard started on time.
// Taking r's scheduled offset off its actual send leaves only how late
// the shard was, and the spread across shards is the barrier's skew. In a
// closed loop the first request is due at the start itself.
func (e *engine) effectiveStart(begin time.Time, r schedule.Request) time.Time {
	if !e.openLoop {
		return begin
	}
	return begin.Add(-r.Intended.Sub(e.start))
}

func (e *engine) started(scheduled time.Time) time.Time {
	if at := e.firstSend.Load(); at != nil {
		return *at
	}
	return scheduled
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

// Progress is a live snapshot of a run.
type Progress struct {
	// Elapsed and Total are the time into the run and its length.
	Elapsed, Total time.Duration
	// Rate is the operations finished per second over the last second.
	Rate float64
	// TargetRate is this shard's target rate now (0 in closed loop).
	TargetRate float64
	// ClosedLoop is true when the load has no target rate.
	ClosedLoop bool
	// P99 is the latency p99 over the completed intervals.
	P99 time.Duration
	// Errors and Missed count failures and missed sends so far.
	Errors, Missed uint64
	// InFlight is the number of operations sent and not yet finished: the
	// scheduler's count.
	InFlight int64
}

func (e *engine) reportProgress(stop <-chan struct{}, end time.Time) {
	t := e.clk.NewTicker(time.Second)
	defer t.Stop()
	start := e.series.start
	last, lastAt := e.done.Load(), e.clk.Now()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C():
			done := e.done.Load()
			p := Progress{
				Elapsed: max(now.Sub(start), 0), Total: end.Sub(start),
				Rate:       float64(done-last) / now.Sub(lastAt).Seconds(),
				TargetRate: e.series.targetRate(now),
				ClosedLoop: e.series.sched.Concurrency > 0,
				P99:        time.Duration(e.series.p99SoFar()) * time.Microsecond,
				Errors:     e.errors.Load(), Missed: e.missed.Load(), InFlight: e.inFlight.Load(),
			}
			last, lastAt = done, now
			if e.cfg.Observer != nil {
				e.cfg.Observer.Tick(p)
			}
			if e.cfg.Progress != nil {
				e.cfg.Progress(p)
			}
		}
	}
}
