package result

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// randomSamples spreads n random samples over shards, intervals and both
// operations.
func randomSamples(seed uint64, n, shards, intervals int) []sample {
	rng := rand.New(rand.NewPCG(seed, 11))
	out := make([]sample, n)
	for i := range out {
		out[i] = sample{shard: rng.IntN(shards), interval: rng.IntN(intervals), op: []string{"read", "update"}[rng.IntN(2)],
			micros: 1 + int64(rng.ExpFloat64()*5000)}
	}
	return out
}

// TestCoarsenKeepsEveryFigureButTheResolution: merging pairs of intervals
// (an odd count: the last coarse interval has one member) leaves the totals
// exactly as they were, averages the target rate, and says so in a note;
// the original is untouched.
func TestCoarsenKeepsEveryFigureButTheResolution(t *testing.T) {
	d := shardDocs(t, testSpec(""), 1, 7, randomSamples(1, 5000, 1, 7))[0]
	c, err := d.Coarsened(2)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Intervals) != 4 || c.IntervalSeconds != 20 || len(d.Intervals) != 7 || d.IntervalSeconds != 10 {
		t.Fatalf("coarsened %d intervals of %gs into %d of %gs (original now %d of %gs); want 4 of 20s, original untouched",
			len(d.Intervals), d.IntervalSeconds, len(c.Intervals), c.IntervalSeconds, len(d.Intervals), d.IntervalSeconds)
	}
	if diff := cmp.Diff(d.Totals, c.Totals); diff != "" {
		t.Errorf("coarsening changed the totals (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(d.Overall, c.Overall); diff != "" {
		t.Errorf("coarsening changed the overall figures (-before +after):\n%s", diff)
	}
	for _, in := range c.Intervals {
		if in.TargetRate != 100 {
			t.Errorf("coarse interval %d has target rate %g; want the average of its members, 100", in.Index, in.TargetRate)
		}
	}
	if len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "coarsened from 10s to 20s") {
		t.Errorf("notes %q; want one saying the intervals were coarsened from 10s to 20s", c.Notes)
	}
}

// TestCoarsenRoundsAFixedWarmUpUpToACoarseInterval: a 10 s warm-up is one
// 10 s interval, and one 20 s interval once coarsened.
func TestCoarsenRoundsAFixedWarmUpUpToACoarseInterval(t *testing.T) {
	spec := testSpec(fixedWarmUp(10 * time.Second))
	d := shardDocs(t, spec, 1, 6, randomSamples(2, 3000, 1, 6))[0]
	c, err := d.Coarsened(2)
	if err != nil {
		t.Fatal(err)
	}
	if d.WarmUp.Intervals != 1 || c.WarmUp.Intervals != 1 || !c.WarmUp.End.Equal(t0.Add(20*time.Second)) || !c.Intervals[0].WarmUp {
		t.Errorf("warm-up %+v, coarsened %+v; want 1 interval each, ending at 20s once coarsened", d.WarmUp, c.WarmUp)
	}
	if c.Overall.OK >= d.Overall.OK {
		t.Errorf("the coarse warm-up excludes %d operations, the fine one %d; want fewer after it", c.Overall.OK, d.Overall.OK)
	}
}

// TestMergeAlignsShardsCoarsenedToFit: a shard whose runner coarsened its
// result merges with fine ones into exactly what coarsening the fine merge
// gives.
func TestMergeAlignsShardsCoarsenedToFit(t *testing.T) {
	docs := shardDocs(t, testSpec(""), 3, 8, randomSamples(3, 9000, 3, 8))
	fine, err := Merge(docs...)
	if err != nil {
		t.Fatal(err)
	}
	want, err := fine.Coarsened(4)
	if err != nil {
		t.Fatal(err)
	}
	coarse, err := docs[1].Coarsened(4)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Merge(docs[0], coarse, docs[2])
	if err != nil {
		t.Fatalf("merging a coarsened shard with fine ones: %v", err)
	}
	if diff := cmp.Diff(want.Intervals, got.Intervals); diff != "" {
		t.Errorf("merged intervals differ from the coarsened fine merge (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.Overall, got.Overall); diff != "" {
		t.Errorf("merged overall differs (-want +got):\n%s", diff)
	}
	if got.IntervalSeconds != 40 {
		t.Errorf("merged at %gs intervals; want the coarsest, 40s", got.IntervalSeconds)
	}
}
