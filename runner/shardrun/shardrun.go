// Package shardrun binds one shard of a resolved BenchmarkRun workload to an
// open Spanner session: it turns the API's workload spec into the load
// engine's configuration, with the workload's operations bound to the
// session's client. The CLI (`spanbench run`) and the runner pod both build
// their engine here, so the two cannot drift; the controllers never import
// it, so the manager does not link the engine.
package shardrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/engine"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/runner/schedule"
	"github.com/spanbench/spanbench/spanner/session"
	"github.com/spanbench/spanbench/spanner/workload"
)

// errStreams refuses Config for a workload with streams, whose load is
// its streams' (Shard runs them).
var errStreams = errors.New("workload.streams: a streams workload runs through shardrun.Shard, not one engine configuration")

// Config is the engine configuration of shard i of n of run's resolved
// (defaulted, valid) workload spec without streams, its operations bound
// to s. The caller adds what depends on where it runs: Start, Seed,
// Environment, Observer, Progress.
func Config(run string, spec *v1alpha1.WorkloadSpec, s *session.Session, shard, shards int) (engine.Config, error) {
	if spec.HasStreams() {
		return engine.Config{}, errStreams // its load would be empty
	}
	cfg, _, err := bound(run, spec, s, shard, shards)
	return cfg, err
}

// Shard is one shard of a run bound to a session: the engine
// configuration and, for a workload with streams, the streams this shard
// runs. The runner pod and `spanbench run` both run it, so a streams run
// writes the same one document either way.
type Shard struct {
	// Config is the engine configuration; the caller adds Start, Seed,
	// Environment, Observer and Progress (with streams, both are told the
	// streams' progress added up).
	Config engine.Config
	// Streams are the streams this shard runs, when the workload has
	// streams: possibly none, if all are pinned to other runners.
	Streams []engine.Stream
	// streams says the workload has streams.
	streams bool
}

// NewShard binds shard i of n of run's resolved workload spec, with or
// without streams, to s.
func NewShard(run string, spec *v1alpha1.WorkloadSpec, s *session.Session, shard, shards int) (*Shard, error) {
	if !spec.HasStreams() {
		cfg, err := Config(run, spec, s, shard, shards)
		return &Shard{Config: cfg}, err
	}
	cfg, streams, err := StreamsConfig(run, spec, s, shard, shards)
	return &Shard{Config: cfg, Streams: streams, streams: true}, err
}

// Run runs the shard's load and returns its one result document: with
// streams, a section per stream it ran (engine.RunStreamsDocument).
func (s *Shard) Run(ctx context.Context) (*result.Document, error) {
	if s.streams {
		return engine.RunStreamsDocument(ctx, s.Config, s.Streams)
	}
	return engine.Run(ctx, s.Config)
}

// bound is Config and the workload its operations come from.
func bound(run string, spec *v1alpha1.WorkloadSpec, s *session.Session, shard, shards int) (engine.Config, *workload.Workload, error) {
	w, err := s.Workload(spec, run, shard, shards)
	if err != nil {
		return engine.Config{}, nil, err
	}
	cfg, err := Bind(run, spec, w, shard, shards)
	if err != nil {
		return engine.Config{}, nil, err
	}
	cfg.Target, cfg.Notes = s.ResultTarget(), append(s.Notes(), workload.Notes(spec, run)...)
	return cfg, w, nil
}

// Bind is Config for a workload already bound to a client (or made of
// operations that need none, workload.FromOps).
func Bind(run string, spec *v1alpha1.WorkloadSpec, w *workload.Workload, shard, shards int) (engine.Config, error) {
	recorded, err := protocol.RecordedSpec(spec)
	if err != nil {
		return engine.Config{}, err
	}
	if spec.Interval == nil {
		return engine.Config{}, fmt.Errorf("run %s: the workload spec is not resolved (no interval)", run)
	}
	cfg := engine.Config{
		Run: run, Spec: recorded, Load: Load(spec), Interval: spec.Interval.Duration,
		Shard: shard, Shards: shards,
	}
	for _, op := range w.Ops() {
		cfg.Operations = append(cfg.Operations, engine.Operation{Name: op.Spec.Name, Weight: int(op.Spec.Weight), Op: op})
	}
	return cfg, nil
}

// Load is the whole run's load (all shards together) of a resolved spec:
// the shards split it in the scheduler (schedule.Share).
func Load(spec *v1alpha1.WorkloadSpec) engine.Load {
	return loadOf(&spec.Load, spec.TotalDuration())
}

// loadOf is the engine's load of l (the run's or a stream's) over total.
func loadOf(l *v1alpha1.LoadSpec, total time.Duration) engine.Load {
	out := engine.Load{Profile: profile(l, total)}
	if l.Arrivals == v1alpha1.ArrivalsPoisson {
		out.Arrivals = schedule.Poisson
	}
	if c := l.Concurrency; c != nil {
		out.Concurrency = int(*c)
	} else if m := l.MaxInFlight; m != nil {
		out.MaxInFlight = int(*m)
	}
	return out
}

// profile is the rate over time of l, lasting total. In a closed loop it
// only carries the duration.
func profile(l *v1alpha1.LoadSpec, total time.Duration) schedule.Profile {
	switch {
	case l.Rate != nil:
		r := float64(*l.Rate)
		return schedule.Profile{{From: r, To: r, Duration: total}}
	case len(l.Steps) > 0:
		p := make(schedule.Profile, 0, len(l.Steps))
		for _, s := range l.Steps {
			p = append(p, schedule.Segment{From: float64(s.Rate), To: float64(s.Rate), Duration: s.Duration.Duration})
		}
		return p
	case l.Ramp != nil:
		from, to, d := float64(l.Ramp.From), float64(l.Ramp.To), min(l.Ramp.Duration.Duration, total)
		p := schedule.Profile{{From: from, To: from + (to-from)*d.Seconds()/l.Ramp.Duration.Seconds(), Duration: d}}
		if rest := total - d; rest > 0 {
			p = append(p, schedule.Segment{From: to, To: to, Duration: rest})
		}
		return p
	}
	return schedule.Profile{{Duration: total}}
}

// Arrivals is the open-loop schedule of a resolved workload spec without
// streams split among shards runners, shard i seeded by seed(i), as the
// result's checker reads it (result.Expect.Arrivals). It is nil for a
// load that has no arrivals to bound its counts (a closed loop), for a
// streams workload (whose streams have loads of their own), and for
// Poisson arrivals when seed is nil (a result file does not say its
// seeds); uniform arrivals do not depend on the seed. It is nil for a
// capacity search too, whose profile is decided as it runs.
func Arrivals(spec *v1alpha1.WorkloadSpec, shards int, seed func(shard int) int64) result.Arrivals {
	load := Load(spec)
	// A capacity search's rates are chosen step by step as it runs; its
	// steps' windows are checked as they are measured (capacity.Measure).
	if spec.HasStreams() || spec.Load.Search != nil || load.Concurrency > 0 || (load.Arrivals == schedule.Poisson && seed == nil) {
		return nil
	}
	return func(shard int, interval time.Duration) ([]uint64, bool, error) {
		cfg := engine.Config{Load: load, Shard: shard, Shards: shards}
		if seed != nil {
			cfg.Seed = seed(shard)
		}
		return engine.IntervalArrivals(cfg, interval)
	}
}
