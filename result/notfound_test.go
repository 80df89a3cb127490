package result

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestNotFoundCountsMergeExactly: for random not-found counts spread over
// shards, intervals and operations, the merged document's per-interval and
// total not-found counts are the exact sums of the shards' (the totals
// after the warm-up only), and none of them leaks into OK or errors.
func TestNotFoundCountsMergeExactly(t *testing.T) {
	for seed := range uint64(25) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			shards, intervals := 1+rng.IntN(8), 6
			var samples []sample
			for range 1 + rng.IntN(2000) {
				samples = append(samples, sample{shard: rng.IntN(shards), interval: rng.IntN(intervals),
					op: []string{"read", "update"}[rng.IntN(2)], micros: 1 + rng.Int64N(10_000)})
			}
			docs := shardDocs(t, testSpec(fixedWarmUp(15*time.Second)), shards, intervals, samples)
			perInterval := make([]uint64, intervals)
			wantTotal := map[string]uint64{}
			var wantOK uint64
			for _, d := range docs {
				for i := range d.Intervals {
					in := &d.Intervals[i]
					for j := range in.Operations {
						op := &in.Operations[j]
						op.NotFound = rng.Uint64N(1 << 40)
						perInterval[in.Index] += op.NotFound
						if in.Index >= 2 { // a 15 s warm-up excludes whole 10 s intervals 0 and 1
							wantTotal[op.Name] += op.NotFound
							wantTotal["overall"] += op.NotFound
							wantOK += op.OK
						}
					}
				}
				if err := Finalize(d); err != nil {
					t.Fatal(err)
				}
			}
			merged, err := Merge(docs...)
			if err != nil {
				t.Fatalf("Merge: %v", err)
			}
			for _, in := range merged.Intervals {
				var got uint64
				for _, op := range in.Operations {
					got += op.NotFound
				}
				if got != perInterval[in.Index] {
					t.Errorf("interval %d over %d shards: merged %d not-found, the shards hold %d", in.Index, shards, got, perInterval[in.Index])
				}
			}
			got := map[string]uint64{"overall": merged.Overall.NotFound}
			for _, op := range merged.Totals {
				got[op.Name] = op.NotFound
			}
			for name, w := range wantTotal {
				if got[name] != w {
					t.Errorf("%s over %d shards: merged total %d not-found, want %d", name, shards, got[name], w)
				}
			}
			if merged.Overall.OK != wantOK || merged.Overall.ErrorCount() != 0 {
				t.Errorf("not-found counts leaked: overall OK %d (want %d), errors %d (want 0)", merged.Overall.OK, wantOK, merged.Overall.ErrorCount())
			}
		})
	}
}
