package schedule

import (
	"fmt"
	"time"
)

// ArrivalCounter counts a shard's arrivals interval by interval: the k-th
// call of Next returns how many arrivals the schedule intends in
// [k·interval, (k+1)·interval) from its start. It walks the Iterator Run
// sends from, so its counts are the schedule's own: what an interval of a
// result may count at most, when each operation is counted in the
// interval of its intended send.
type ArrivalCounter struct {
	it       *Iterator
	interval time.Duration
	k        int
	// pending is the first arrival not yet counted, if hasPending.
	pending    time.Duration
	hasPending bool
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
	c.pending, c.hasPending = it.Next()
	return c, nil
}

// Next returns the number of arrivals in the next interval.
func (c *ArrivalCounter) Next() uint64 {
	end := time.Duration(c.k+1) * c.interval
	c.k++
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
