package engine

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/spanbench/spanbench/runner/schedule"
)

// DispatchGranularity is the least time between the scheduler's wake-ups.
// Waking for every arrival gives the lowest lag but costs ~40 % of a core at
// 20,000 ops/s (docs/performance.md); 100 µs keeps the lag p99 near 0.1 ms
// on an idle core at about half the CPU, leaving the core to the Spanner
// client. On a loaded host the lag is how long a worker waits for a
// core, whatever this value.
const DispatchGranularity = 100 * time.Microsecond

// scheduleConfig is this shard's schedule; the scheduler counts requests in
// flight into inFlight.
func scheduleConfig(cfg Config, start time.Time, inFlight *atomic.Int64) schedule.Config {
	shard, shards := cfg.Shard, cfg.Shards
	if cfg.LoadShare.Count > 0 {
		shard, shards = cfg.LoadShare.Index, cfg.LoadShare.Count
	}
	return schedule.Config{
		Profile:     cfg.Load.Profile,
		Arrivals:    cfg.Load.Arrivals,
		MaxInFlight: cfg.Load.MaxInFlight,
		Concurrency: cfg.Load.Concurrency,
		Iterations:  cfg.Load.Iterations,
		Shard:       shard, Shards: shards,
		Start:       start,
		Seed:        cfg.Seed,
		Granularity: DispatchGranularity,
		InFlight:    inFlight,
	}
}

// Share is a runner's part of a load: the index-th of count equal parts.
type Share struct{ Index, Count int }

// checkOperations makes sure the operations are the spec's, in its order:
// the result's totals are keyed by the spec's names.
func checkOperations(cfg Config) error {
	names := cfg.Spec.Settings().Operations
	if len(cfg.Operations) == 0 || len(cfg.Operations) != len(names) {
		return fmt.Errorf("%d operations for a spec of %d", len(cfg.Operations), len(names))
	}
	for i, op := range cfg.Operations {
		switch {
		case op.Name != names[i].Name:
			return fmt.Errorf("operation %d is %q, the spec's is %q", i, op.Name, names[i].Name)
		case op.Weight < 1:
			return fmt.Errorf("operation %s: weight %d must be at least 1", op.Name, op.Weight)
		case op.Op == nil:
			return fmt.Errorf("operation %s has nothing to run", op.Name)
		}
	}
	return nil
}

// mix picks operations by weight.
type mix struct {
	cumulative []int64
	total      int64
}

func newMix(ops []Operation) mix {
	var m mix
	for _, op := range ops {
		m.total += int64(op.Weight)
		m.cumulative = append(m.cumulative, m.total)
	}
	return m
}

// pick returns an index into the operations, each with probability
// weight/total.
func (m mix) pick(rng *rand.Rand) int {
	x := rng.Int64N(m.total)
	for i, c := range m.cumulative {
		if x < c {
			return i
		}
	}
	return len(m.cumulative) - 1
}

// meanRate is the profile's average rate between two offsets, by the
// midpoint rule on a few sub-intervals (exact for piecewise-linear profiles
// except where a step falls inside one).
func meanRate(p schedule.Profile, from, to time.Duration) float64 {
	const parts = 20
	if to <= from {
		return 0
	}
	step := (to - from) / parts
	var sum float64
	for i := range parts {
		sum += p.Rate(from + step*time.Duration(i) + step/2)
	}
	return sum / parts
}

// IntervalArrivals is how many arrivals cfg's open-loop schedule intends
// in each interval of the given length: what the series waits for before
// it drains an interval, and what a result's checker bounds its counts by
// (result.Arrivals). ok is false in a closed loop, which has no arrivals.
func IntervalArrivals(cfg Config, interval time.Duration) (counts []uint64, ok bool, err error) {
	sc := scheduleConfig(cfg, time.Time{}, nil)
	if sc.Concurrency > 0 {
		return nil, false, nil
	}
	counts, err = schedule.IntervalArrivals(sc, interval)
	return counts, err == nil, err
}
