package schedule

import (
	"math/rand/v2"
	"slices"
	"time"
)

// Iterator generates the intended send times of one shard as offsets from the
// start of the run. It is a pure function of the Config (no clock), so the
// schedule can be tested and precomputed without running anything.
//
// Arrivals are generated in "operation space": Λ(t), the integral of the full
// (unsharded) rate from 0 to t, counts the operations that should have been
// sent by t. An arrival happens when Λ reaches the next target:
//   - Uniform, shard i of N: targets i, i+N, i+2N, … So one process (N=1) sends
//     at Λ = 0, 1, 2, … and the N shards together send at exactly the same
//     instants, each shard at 1/N of the rate, phase-shifted by i/N of its own
//     interval.
//   - Poisson: targets are separated by N·Exp(1), which by the time-rescaling
//     theorem yields Poisson arrivals at rate(t)/N.
//
// Each segment is half-open: an arrival exactly at a boundary belongs to the
// later segment, and none is generated at or after the profile's end.
type Iterator struct {
	profile  Profile
	seg      int           // index of the current segment
	segStart time.Duration // offset at which the current segment starts
	segBase  float64       // Λ at the start of the current segment
	segEnd   float64       // Λ at the end of the current segment
	done     bool

	shard, shards uint64
	k             uint64     // index of this shard's next arrival (Uniform)
	rng           *rand.Rand // non-nil for Poisson
	target        float64    // Λ of the last Poisson arrival
}

// NewIterator returns the arrival generator for cfg's Profile, Arrivals,
// Seed, Shard and Shards. Other fields are not checked, so table tests need
// not fill them in.
func NewIterator(cfg Config) (*Iterator, error) {
	if err := cfg.validateSchedule(); err != nil {
		return nil, err
	}
	it := &Iterator{
		profile: slices.Clone(cfg.Profile), // the caller may reuse its slice
		segEnd:  cfg.Profile[0].ops(),
		shard:   uint64(cfg.Shard),
		shards:  uint64(cfg.shards()),
	}
	if cfg.Arrivals == Poisson {
		// Mixing the shard into the PCG state keeps shards independent even
		// when the controller gives them all the same seed.
		it.rng = rand.New(rand.NewPCG(uint64(cfg.Seed), it.shard))
	}
	return it, nil
}

// Next returns the offset from the start of the run of the next arrival, or
// ok == false once the profile is exhausted (and on every later call).
func (it *Iterator) Next() (offset time.Duration, ok bool) {
	if it.done {
		return 0, false
	}
	target := it.nextTarget()
	for target >= it.segEnd {
		if !it.advance() {
			return 0, false
		}
	}
	return it.segStart + it.profile[it.seg].offsetOf(target-it.segBase), true
}

// nextTarget returns the value of Λ at which the next arrival happens.
func (it *Iterator) nextTarget() float64 {
	if it.rng != nil {
		it.target += float64(it.shards) * it.rng.ExpFloat64()
		return it.target
	}
	// Computed from integers rather than accumulated, so that it is exact
	// (below 2^53) and the shards' union matches the unsharded schedule bit
	// for bit.
	t := float64(it.shard + it.shards*it.k)
	it.k++
	return t
}

// advance moves to the next segment, reporting false at the end of the
// profile.
func (it *Iterator) advance() bool {
	it.segStart += it.profile[it.seg].Duration
	it.seg++
	if it.seg == len(it.profile) {
		it.done = true
		return false
	}
	it.segBase = it.segEnd
	it.segEnd = it.segBase + it.profile[it.seg].ops()
	return true
}
