package serverstats

import (
	"errors"
	"time"
)

// MinuteCounts spreads a run's per-interval client counts over Spanner's
// statistics minutes, giving Operation.Ops. counts[i] is the count of
// [start + i·interval, start + (i+1)·interval). An interval inside one
// minute goes to it whole; one straddling minute boundaries is split in
// proportion to its overlap with each minute, which assumes a steady rate
// within the interval: the one estimate in the join, absent when the run's
// intervals fall on minute boundaries. apportioned is how many operations
// were split so, for the result to say.
func MinuteCounts(start time.Time, interval time.Duration, counts []int64) (ops map[time.Time]int64, apportioned int64, err error) {
	return IntervalCounts(start, interval, counts, time.Minute)
}

// IntervalCounts is MinuteCounts for statistics intervals of length (a
// Granularity's): the client's counts of the 10-minute or hour tables.
func IntervalCounts(start time.Time, interval time.Duration, counts []int64, length time.Duration) (
	ops map[time.Time]int64, apportioned int64, err error) {
	if interval <= 0 || length <= 0 {
		return nil, 0, errors.New("the intervals must be positive")
	}
	ops = map[time.Time]int64{}
	for i, n := range counts {
		if n < 0 {
			return nil, 0, errors.New("an interval's count is negative")
		}
		from := start.Add(time.Duration(i) * interval).UTC()
		to := from.Add(interval)
		end := from.Truncate(length).Add(length) // the first minute's INTERVAL_END
		if !to.After(end) {
			ops[end] += n
			continue
		}
		apportioned += n
		var given int64
		for ; from.Before(to); from, end = end, end.Add(length) {
			// In float64: n × nanoseconds would overflow int64 for large counts.
			share := int64(float64(n) * float64(earliest(end, to).Sub(from)) / float64(interval))
			if !end.Before(to) {
				share = n - given // the last piece takes the rounding
			}
			ops[end] += share
			given += share
		}
	}
	return ops, apportioned, nil
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
