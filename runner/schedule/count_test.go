package schedule

import (
	"testing"
	"time"
)

// TestIntervalArrivalsAreTheIteratorsOwn counts each interval's arrivals
// of uniform and Poisson schedules, ramped and sharded, and compares them
// with the iterator's offsets counted by hand: the same arrivals, each in
// the interval its offset falls in, none left over.
func TestIntervalArrivalsAreTheIteratorsOwn(t *testing.T) {
	p := Profile{{From: 10, To: 300, Duration: 2 * time.Second}, {From: 300, To: 300, Duration: 1500 * time.Millisecond},
		{From: 0, To: 0, Duration: 300 * time.Millisecond}, {From: 7, To: 7, Duration: time.Second}, {From: 450, To: 3, Duration: 700 * time.Millisecond}}
	for _, cfg := range []Config{
		{Profile: p},
		{Profile: p, Shard: 2, Shards: 3},
		{Profile: Profile{{From: 3, To: 3, Duration: 2 * time.Second}}, Shard: 1, Shards: 2}, // arrivals on interval boundaries
		{Profile: p, Arrivals: Poisson, Seed: 9, Shard: 1, Shards: 2},
	} {
		for _, iv := range []time.Duration{time.Millisecond, 250 * time.Millisecond, 300 * time.Millisecond, 5 * time.Second} {
			got, err := IntervalArrivals(cfg, iv)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]uint64, Intervals(cfg.Profile.Duration(), iv))
			for _, off := range offsets(t, cfg) {
				want[off/iv]++
			}
			if len(got) != len(want) {
				t.Fatalf("%+v, intervals of %v: %d intervals, want %d", cfg, iv, len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("%+v, intervals of %v: interval %d counts %d arrivals, the iterator has %d", cfg, iv, i, got[i], want[i])
				}
			}
		}
	}
}
