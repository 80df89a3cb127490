// Package shardrun binds one shard of a resolved BenchmarkRun workload to an
// open Spanner session: it turns the API's workload spec into the load
// engine's configuration, with the workload's operations bound to the
// session's client. The CLI (`spanbench run`) and the runner pod both build
// their engine here, so the two cannot drift; the controllers never import
// it, so the manager does not link the engine.
package shardrun

import (
	"fmt"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/load/engine"
	"github.com/spanbench/spanbench/load/schedule"
	"github.com/spanbench/spanbench/protocol"
	"github.com/spanbench/spanbench/spanner/session"
	"github.com/spanbench/spanbench/spanner/workload"
)

// Config is the engine configuration of shard i of n of run's resolved
// (defaulted, valid) workload spec, its operations bound to s. The caller
// adds what depends on where it runs: Start, Seed, Environment, Observer,
// Progress.
func Config(run string, spec *v1alpha1.WorkloadSpec, s *session.Session, shard, shards int) (engine.Config, error) {
	w, err := s.Workload(spec, run, shard, shards)
	if err != nil {
		return engine.Config{}, err
	}
	cfg, err := Bind(run, spec, w, shard, shards)
	if err != nil {
		return engine.Config{}, err
	}
	cfg.Target, cfg.Notes = s.ResultTarget(), append(s.Notes(), workload.Notes(spec, run)...)
	return cfg, nil
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
	l := engine.Load{Profile: profile(spec)}
	if spec.Load.Arrivals == v1alpha1.ArrivalsPoisson {
		l.Arrivals = schedule.Poisson
	}
	if c := spec.Load.Concurrency; c != nil {
		l.Concurrency = int(*c)
	} else if m := spec.Load.MaxInFlight; m != nil {
		l.MaxInFlight = int(*m)
	}
	return l
}

// profile is the whole run's rate over time. In a closed loop it only
// carries the duration.
func profile(spec *v1alpha1.WorkloadSpec) schedule.Profile {
	total := spec.TotalDuration()
	l := spec.Load
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
