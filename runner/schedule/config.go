package schedule

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// ErrInvalidConfig is wrapped by every error that Config.Validate, Run and
// NewIterator return for an unusable Config, so callers can tell a bad spec
// from a failed run with errors.Is.
var ErrInvalidConfig = errors.New("schedule: invalid config")

// Arrivals selects how send times are spread within the rate profile.
type Arrivals int

const (
	// Uniform spaces requests evenly: the k-th request is sent when the
	// integral of the rate reaches k. It is the zero value.
	Uniform Arrivals = iota
	// Poisson draws exponential inter-arrival gaps at the instantaneous rate
	// (a non-homogeneous Poisson process), which models independent clients.
	Poisson
)

// String returns "uniform" or "poisson".
func (a Arrivals) String() string {
	switch a {
	case Uniform:
		return "uniform"
	case Poisson:
		return "poisson"
	}
	return fmt.Sprintf("Arrivals(%d)", int(a))
}

// Config describes one process's share of a load run.
type Config struct {
	// Profile is the target rate over time for the whole run (all shards
	// together). Its total duration is the length of the run. In closed-loop
	// mode only the duration is used, so Profile{{Duration: d}} is enough.
	Profile Profile
	// Arrivals selects uniform or Poisson spacing of send times.
	Arrivals Arrivals
	// Seed seeds the Poisson generator. The stream also depends on Shard, so
	// shards sharing a seed still draw independent arrivals, and a rerun with
	// the same seed and shard repeats the same schedule.
	Seed int64
	// Shard is this process's index among Shards processes, 0 <= Shard < Shards.
	Shard int
	// Shards is the number of processes sharing the profile; each sends
	// 1/Shards of the rate. With Uniform arrivals shard i is phase-shifted by
	// i/Shards of its own interval so that the shards interleave evenly and
	// their union is exactly the single-process schedule. 0 means 1.
	Shards int
	// MaxInFlight caps the requests in flight in open-loop mode; Handle's
	// worker index is one of MaxInFlight slots. Worker goroutines are
	// started as the load needs them: one more than the most requests in
	// flight at once, the extra one sleeping on the next arrival. A request
	// due while MaxInFlight are in flight is reported to Handler.Missed
	// instead of being sent.
	MaxInFlight int
	// Concurrency > 0 selects closed-loop mode: this many workers call
	// Handler.Handle back to back for the profile's duration, with no rate.
	// MaxInFlight and Arrivals are then ignored.
	Concurrency int
	// Iterations > 0 makes a closed loop a batch: its workers make this
	// many calls in all, then Run returns (before the profile's duration
	// if they finish earlier) with Stats.Finished set. Closed loop only.
	Iterations uint64
	// Granularity is the least time between two distinct wake-up instants
	// of the open-loop workers: an arrival due less than Granularity after
	// the previous one's wake-up wakes with the next instant allowed, so
	// the workers holding it wake together (one OS timer wake-up for all of
	// them). 0 wakes up for every arrival: the lowest lag, at the cost of
	// one OS timer wake-up per request. A positive value trades lag (up to
	// Granularity more) for CPU: at most 1/Granularity wake-ups per second.
	// Requests are never sent before their intended time either way.
	Granularity time.Duration
	// InFlight, when not nil, is where Run counts the requests handed to
	// the handler and not yet returned from it, so a caller that shows
	// progress reads the scheduler's own count instead of keeping a second
	// one.
	InFlight *atomic.Int64
	// Start is the instant the run starts, shared by all shards so that their
	// schedules line up. Run waits until Start before the first send. The zero
	// value means "now" (the clock's Now when Run is called).
	Start time.Time
}

// closedLoop reports whether the config selects closed-loop mode.
func (c Config) closedLoop() bool { return c.Concurrency > 0 }

// shards returns the number of shards with the zero value mapped to 1.
func (c Config) shards() int { return max(c.Shards, 1) }

// Validate reports the first reason the config cannot be run, wrapped in
// ErrInvalidConfig, or nil.
func (c Config) Validate() error {
	if err := c.validateSchedule(); err != nil {
		return err
	}
	switch {
	case c.Granularity < 0:
		return fmt.Errorf("%w: Granularity %v is negative", ErrInvalidConfig, c.Granularity)
	case c.Concurrency < 0:
		return fmt.Errorf("%w: Concurrency %d is negative", ErrInvalidConfig, c.Concurrency)
	case !c.closedLoop() && c.Iterations > 0:
		return fmt.Errorf("%w: Iterations %d needs a closed loop (Concurrency)", ErrInvalidConfig, c.Iterations)
	case !c.closedLoop() && c.MaxInFlight < 1:
		return fmt.Errorf("%w: MaxInFlight %d must be at least 1 in open-loop mode", ErrInvalidConfig, c.MaxInFlight)
	}
	return nil
}

// validateSchedule checks the fields that the arrival-time generator uses.
func (c Config) validateSchedule() error {
	if err := c.Profile.Validate(); err != nil {
		return err
	}
	switch {
	case c.Arrivals != Uniform && c.Arrivals != Poisson:
		return fmt.Errorf("%w: unknown Arrivals %d", ErrInvalidConfig, int(c.Arrivals))
	case c.Shards < 0:
		return fmt.Errorf("%w: Shards %d is negative", ErrInvalidConfig, c.Shards)
	case c.Shard < 0 || c.Shard >= c.shards():
		return fmt.Errorf("%w: Shard %d is out of range [0, %d)", ErrInvalidConfig, c.Shard, c.shards())
	}
	return nil
}
