package engine

import (
	"time"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/load/schedule"
)

// DispatchGranularity is the least time between the scheduler's wake-ups.
// Waking for every arrival gives the lowest lag but costs ~40 % of a core at
// 20,000 ops/s (docs/performance.md); 100 µs keeps the lag p99 near 0.1 ms
// at about half the CPU, leaving the core to the Spanner client.
const DispatchGranularity = 100 * time.Microsecond

// scheduleConfig turns a defaulted workload spec into this shard's schedule.
func scheduleConfig(spec *v1alpha1.WorkloadSpec, shard, shards int, start time.Time, seed int64) schedule.Config {
	cfg := schedule.Config{
		Profile: profile(spec),
		Shard:   shard, Shards: shards,
		Start:       start,
		Seed:        seed,
		Granularity: DispatchGranularity,
	}
	if spec.Load.Arrivals == v1alpha1.ArrivalsPoisson {
		cfg.Arrivals = schedule.Poisson
	}
	if c := spec.Load.Concurrency; c != nil {
		cfg.Concurrency = int(*c)
	} else {
		cfg.MaxInFlight = int(*spec.Load.MaxInFlight)
	}
	return cfg
}

// profile is the whole run's rate over time (all shards together). In a
// closed loop it only carries the duration.
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
