package schedule

import (
	"math"
	"testing"
)

func TestShareSplitsARateSoThatThePartsSumToIt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		total  float64
		shards int
	}{
		{"one shard takes all", 800, 1},
		{"zero shards count as one", 800, 0},
		{"divides evenly", 800, 4},
		{"10 over 3", 10, 3},
		{"7 over 4", 7, 4},
		{"1 over 7", 1, 7},
		{"1000 over 7", 1000, 7},
		{"a mean ramp rate over 3", 333.3333333333333, 3},
		{"0.1 over 10", 0.1, 10},
		{"max rate over 1000 runners", 10_000_000, 1000},
		{"prime rate over many", 9_999_991, 997},
		{"nothing", 0, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := max(tc.shards, 1)
			var sum float64
			for i := range n {
				s := Share(tc.total, i, tc.shards)
				if even := tc.total / float64(n); math.Abs(s-even) > 1e-9*math.Max(1, even) {
					t.Errorf("Share(%v, %d, %d) = %v, want about %v", tc.total, i, tc.shards, s, even)
				}
				sum += s
			}
			if sum != tc.total {
				t.Errorf("the %d shares of %v sum to %v (off by %g); they must give back the total exactly", n, tc.total, sum, sum-tc.total)
			}
		})
	}
}

// TestShareMatchesTheArrivalsEachShardSends: a shard's share is what the
// iterator actually sends it, not just a division on paper.
func TestShareMatchesTheArrivalsEachShardSends(t *testing.T) {
	const total, shards = 10, 3
	p := Profile{{From: total, To: total, Duration: 30e9}} // 30 s at 10/s: 300 arrivals
	for i := range shards {
		it, err := NewIterator(Config{Profile: p, Shard: i, Shards: shards})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, ok := it.Next(); ok; _, ok = it.Next() {
			n++
		}
		if want := Share(total, i, shards) * 30; math.Abs(float64(n)-want) > 1 {
			t.Errorf("shard %d of %d sends %d arrivals in 30 s at %d/s; its share says %.1f", i, shards, n, total, want)
		}
	}
}
