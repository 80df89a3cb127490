package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/clock"
)

// Stream is one load stream of a shard's run: its own mix, load and
// window, paced by its own scheduler with its own in-flight accounting.
// Streams share the operations' client.
type Stream struct {
	// Name is the stream's name in the spec.
	Name string
	// Operations is the stream's mix: operations of the spec, by name, with
	// the stream's weights. An operation may be in several streams.
	Operations []Operation
	// Load is the stream's load across the shards it runs on: its
	// profile's duration is the stream's; Iterations (this shard's share)
	// makes a closed loop a batch.
	Load Load
	// Offset is when the stream starts after Config.Start.
	Offset time.Duration
	// Share is this runner's part of the stream's load: of all runners,
	// or of those the stream is pinned to.
	Share Share
}

// StreamResult is what one stream measured on this shard.
type StreamResult struct {
	// Name is the stream's.
	Name string
	// Document is the stream's result: its intervals start at the stream's
	// start, its totals count only its operations.
	Document *result.Document
	// WallTime is a batch's time from its first send to its last
	// operation's return; zero for other loads, and for a batch the end of
	// its window cut short.
	WallTime time.Duration
}

// RunStreams runs every stream at once on this shard: cfg gives what they
// share (run, spec, start, interval, seed, shard identity, and the live
// Observer, to which cfg.Operations give each operation's index, and
// Progress, both told the streams' progress added up); cfg.Load is
// ignored. Each stream is measured on its own. It returns when every
// stream has ended, or the first error.
func RunStreams(ctx context.Context, cfg Config, streams []Stream) ([]StreamResult, error) {
	if len(streams) == 0 {
		return nil, fmt.Errorf("no streams to run")
	}
	if cfg.Start.IsZero() {
		cfg.Start = time.Now()
		if cfg.Clock != nil {
			cfg.Start = cfg.Clock.Now()
		}
	}
	progress := newStreamsProgress(cfg, streams)
	cfgs := make([]Config, len(streams))
	for i, s := range streams {
		c, err := streamConfig(cfg, s, i)
		if err != nil {
			return nil, fmt.Errorf("stream %s: %w", s.Name, err)
		}
		c.Progress = func(p Progress) { progress.set(i, p) }
		cfgs[i] = c
	}
	clk := cfg.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	stop := make(chan struct{})
	reported := make(chan struct{})
	go func() { defer close(reported); progress.report(cfg, clk, stop) }()
	defer func() { close(stop); <-reported }()
	out := make([]StreamResult, len(streams))
	errs := make([]error, len(streams))
	var wg sync.WaitGroup
	for i := range streams {
		wg.Go(func() {
			doc, stats, err := run(ctx, cfgs[i])
			progress.ended(i)
			if err != nil {
				errs[i] = fmt.Errorf("stream %s: %w", streams[i].Name, err)
				return
			}
			out[i] = StreamResult{Name: streams[i].Name, Document: doc}
			if !stats.Finished.IsZero() && len(doc.Shards) == 1 {
				out[i].WallTime = stats.Finished.Sub(doc.Shards[0].Started)
				doc.Shards[0].WallTimeSeconds = out[i].WallTime.Seconds()
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// streamConfig is the engine configuration of stream s, the i-th: the
// shared settings of cfg with the stream's mix, load, start and share.
// Observer and Progress index cfg's operations and see the whole shard: a
// stream's operations reach the Observer by the spec's index
// (streamObserver), its progress is added up by RunStreams.
func streamConfig(cfg Config, s Stream, i int) (Config, error) {
	if err := checkStreamOperations(cfg, s.Operations); err != nil {
		return Config{}, err
	}
	if s.Offset < 0 {
		return Config{}, fmt.Errorf("offset %v is negative", s.Offset)
	}
	c := cfg
	c.Operations, c.Load = s.Operations, s.Load
	c.Start = cfg.Start.Add(s.Offset)
	c.LoadShare, c.Stream = s.Share, s.Name
	// Streams draw independent choices and arrivals from the shared seed.
	c.Seed = cfg.Seed ^ int64(i+1)<<48
	// Live reports (Drained) cover runs without streams only: a stream's
	// intervals count from its own start.
	c.Observer, c.Progress, c.Drained = nil, nil, nil
	if cfg.Observer != nil {
		c.Observer = newStreamObserver(cfg, s.Operations)
	}
	return c, nil
}

// streamObserver passes a stream's operations and missed sends to the
// shard's observer, indexed as cfg.Operations (the spec's): live
// histograms and counters add up across streams. A stream's ticks are its
// own progress; RunStreams tells the observer the shard's, added up
// (streamsProgress), so a stream's are dropped here.
type streamObserver struct {
	shard Observer
	// index maps the stream's operation i to the shard's.
	index []int
}

func newStreamObserver(cfg Config, ops []Operation) streamObserver {
	o := streamObserver{shard: cfg.Observer, index: make([]int, len(ops))}
	for i, op := range ops {
		o.index[i] = slices.IndexFunc(cfg.Operations, func(c Operation) bool { return c.Name == op.Name })
	}
	return o
}

// Finished implements Observer.
func (o streamObserver) Finished(op int, code codes.Code, latency time.Duration) {
	if i := o.index[op]; i >= 0 {
		o.shard.Finished(i, code, latency)
	}
}

// Missed implements Observer.
func (o streamObserver) Missed() { o.shard.Missed() }

// Tick implements Observer.
func (streamObserver) Tick(Progress) {}

// checkStreamOperations makes sure a stream runs operations of the spec
// (whose names key the result), each once.
func checkStreamOperations(cfg Config, ops []Operation) error {
	spec := map[string]bool{}
	for _, o := range cfg.Spec.Settings().Operations {
		spec[o.Name] = true
	}
	if len(ops) == 0 {
		return fmt.Errorf("no operations")
	}
	seen := map[string]bool{}
	for _, op := range ops {
		switch {
		case !spec[op.Name]:
			return fmt.Errorf("operation %q is not the spec's", op.Name)
		case seen[op.Name]:
			return fmt.Errorf("operation %q appears twice", op.Name)
		case op.Weight < 1:
			return fmt.Errorf("operation %s: weight %d must be at least 1", op.Name, op.Weight)
		case op.Op == nil:
			return fmt.Errorf("operation %s has nothing to run", op.Name)
		}
		seen[op.Name] = true
	}
	return nil
}

// RunStreamsDocument runs streams (RunStreams) and returns this shard's
// one result document holding every stream it ran as a section of its own
// (result.StreamsDocument). A shard that runs no stream (each pinned to
// other runners, or a batch with fewer iterations than runners) returns a
// document without sections at once.
func RunStreamsDocument(ctx context.Context, cfg Config, streams []Stream) (*result.Document, error) {
	if cfg.Start.IsZero() {
		cfg.Start = time.Now()
		if cfg.Clock != nil {
			cfg.Start = cfg.Clock.Now()
		}
	}
	base := &result.Document{
		SchemaVersion: result.SchemaVersion, Run: cfg.Run, Spec: cfg.Spec, Target: cfg.Target,
		Environment: cfg.Environment, Start: cfg.Start, IntervalSeconds: cfg.Interval.Seconds(), Notes: cfg.Notes,
		Shards: []result.Shard{{Index: cfg.Shard, Count: cfg.Shards, Host: hostname()}},
	}
	var docs []*result.Document
	if len(streams) > 0 {
		res, err := RunStreams(ctx, cfg, streams)
		if err != nil {
			return nil, err
		}
		for _, r := range res {
			docs = append(docs, r.Document)
		}
	}
	return result.StreamsDocument(base, docs)
}
