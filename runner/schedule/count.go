package schedule

import (
	"fmt"
	"time"
)

// ArrivalCounter counts a shard's arrivals interval by interval: the k-th
// call of Next returns how many arrivals the schedule intends in
// [k·interval, (k+1)·interval) from its start. Its counts are the
// Iterator's, which Run sends from: what an interval of a result may count
// at most, when each operation is counted in the interval of its intended
// send. Poisson arrivals are drawn one by one, as Run draws them; uniform
// ones are counted without visiting each (uniformBefore), so that a
// checker bounds a run of any rate in little time.
type ArrivalCounter struct {
	it       *Iterator
	interval time.Duration
	k        int
	// pending is the first arrival not yet counted, if hasPending
	// (Poisson).
	pending    time.Duration
	hasPending bool
	// uniform counts uniform arrivals; before is its count up to the
	// start of interval k.
	uniform *uniformCount
	before  uint64
}

// NewArrivalCounter counts cfg's arrivals (Profile, Arrivals, Seed, Shard,
// Shards) in intervals of the given length.
func NewArrivalCounter(cfg Config, interval time.Duration) (*ArrivalCounter, error) {
	if interval <= 0 {
		return nil, fmt.Errorf("%w: interval %v is not positive", ErrInvalidConfig, interval)
	}
	it, err := NewIterator(cfg)
	if err != nil {
		return nil, err
	}
	c := &ArrivalCounter{it: it, interval: interval}
	if it.rng == nil {
		c.uniform = newUniformCount(it)
		return c, nil
	}
	c.pending, c.hasPending = it.Next()
	return c, nil
}

// Next returns the number of arrivals in the next interval.
func (c *ArrivalCounter) Next() uint64 {
	end := time.Duration(c.k+1) * c.interval
	c.k++
	if c.uniform != nil {
		upTo := c.uniform.before(end)
		n := upTo - c.before
		c.before = upTo
		return n
	}
	var n uint64
	for c.hasPending && c.pending < end {
		n++
		c.pending, c.hasPending = c.it.Next()
	}
	return n
}

// Intervals is the number of intervals of the given length a profile of
// duration d spans, the last one possibly partial.
func Intervals(d, interval time.Duration) int {
	if interval <= 0 || d <= 0 {
		return 0
	}
	return int((d + interval - 1) / interval)
}

// IntervalArrivals is every interval's count of cfg's arrivals
// (ArrivalCounter), for intervals of the given length over the profile.
func IntervalArrivals(cfg Config, interval time.Duration) ([]uint64, error) {
	c, err := NewArrivalCounter(cfg, interval)
	if err != nil {
		return nil, err
	}
	out := make([]uint64, Intervals(cfg.Profile.Duration(), interval))
	for i := range out {
		out[i] = c.Next()
	}
	return out, nil
}

// uniformCount counts a shard's uniform arrivals before any offset by
// bisection over their index k, whose target is shard + shards·k (see
// Iterator): the offsets are the iterator's own, computed with the same
// segment bases and formula, and they never decrease with k.
type uniformCount struct {
	profile       Profile
	shard, shards uint64
	// starts, bases and ends are each segment's offset and the integral
	// of the rate at its start and end, accumulated as Iterator.advance
	// accumulates them, so that they are the same floating-point values.
	starts      []time.Duration
	bases, ends []float64
}

func newUniformCount(it *Iterator) *uniformCount {
	u := &uniformCount{profile: it.profile, shard: it.shard, shards: it.shards}
	var start time.Duration
	var base float64
	end := it.profile[0].ops()
	for i, seg := range it.profile {
		if i > 0 {
			start += it.profile[i-1].Duration
			base = end
			end = base + seg.ops()
		}
		u.starts, u.bases, u.ends = append(u.starts, start), append(u.bases, base), append(u.ends, end)
	}
	return u
}

// offset is the offset of the arrival of index k, as Iterator.Next returns
// it; false past the profile's end.
func (u *uniformCount) offset(k uint64) (time.Duration, bool) {
	target := float64(u.shard + u.shards*k)
	for i, end := range u.ends {
		if target < end {
			return u.starts[i] + u.profile[i].offsetOf(target-u.bases[i]), true
		}
	}
	return 0, false
}

// before is the number of arrivals whose offset is before t.
func (u *uniformCount) before(t time.Duration) uint64 {
	// The arrivals number at most the profile's integral over shards, plus
	// one: the bisection's upper end.
	hi := uint64(u.ends[len(u.ends)-1]/float64(u.shards)) + 2
	lo := uint64(0)
	for lo < hi { // the first k whose offset is not before t
		mid := lo + (hi-lo)/2
		if off, ok := u.offset(mid); ok && off < t {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}
