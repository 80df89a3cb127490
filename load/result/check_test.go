package result_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/spanbench/spanbench/internal/shardtest"
	"github.com/spanbench/spanbench/load/result"
	"github.com/spanbench/spanbench/protocol"
)

// TestHistogramsPastTheMemoryLimitAreRefused: ten minutes of 1 s
// intervals whose histograms each populate every bucket (a few hundred
// bytes each encoded, 216 KiB each decoded, over 500 MiB in all) is refused once the merged
// histograms pass the limit, and the merger, unchanged, still merges a
// valid shard.
func TestHistogramsPastTheMemoryLimitAreRefused(t *testing.T) {
	w := shardtest.Workload(10 * time.Minute)
	start := time.Now().Add(-2 * time.Hour).Truncate(time.Second)
	e, err := protocol.ResultExpectation("bomb", &w, start, time.Minute, -1, 2)
	if err != nil {
		t.Fatal(err)
	}
	e.HistogramMemory = 64 << 20
	m := result.NewCheckedMerger(e)
	bomb := shardtest.Shard("bomb", w, start, 1, 2)
	shardtest.FillBuckets(bomb)
	err = m.Add(bomb)
	if err == nil || !strings.Contains(err.Error(), "the merged histograms take more than 64 MiB") {
		t.Fatalf("adding the bucket bomb: %v; want a refusal past the 64 MiB limit", err)
	}
	good := shardtest.Shard("bomb", w, start, 0, 2)
	if err := m.Add(good); err != nil {
		t.Fatalf("a valid shard after the refused one: %v", err)
	}
	d, err := m.Result()
	if err != nil || len(d.Shards) != 1 || d.Overall.OK == 0 {
		t.Fatalf("the merge of the valid shard alone: %v, %+v", err, d.Shards)
	}
}

// TestARefusedCoarserShardLeavesTheTimeSeriesAsItWas: a shard whose
// intervals are coarser than those merged so far, refused for histograms
// that do not hold its counts, leaves the merged time series at its
// resolution.
func TestARefusedCoarserShardLeavesTheTimeSeriesAsItWas(t *testing.T) {
	w := shardtest.Workload(8 * time.Second)
	start := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	e, err := protocol.ResultExpectation("coarse", &w, start, time.Minute, -1, 2)
	if err != nil {
		t.Fatal(err)
	}
	m := result.NewCheckedMerger(e)
	if err := m.Add(shardtest.Shard("coarse", w, start, 0, 2)); err != nil {
		t.Fatal(err)
	}
	bad, err := shardtest.Shard("coarse", w, start, 1, 2).Coarsened(2)
	if err != nil {
		t.Fatal(err)
	}
	bad.Intervals[0].Operations[0].OK++
	if err := m.Add(bad); err == nil || !strings.Contains(err.Error(), "histogram holds") {
		t.Fatalf("adding a coarser shard whose histograms disagree with its counts: %v; want a refusal", err)
	}
	d, err := m.Result()
	if err != nil {
		t.Fatal(err)
	}
	if d.IntervalSeconds != 1 || len(d.Notes) != 0 {
		t.Errorf("after the refused shard the merge has %gs intervals, notes %q; want shard 0's 1 s intervals, no note", d.IntervalSeconds, d.Notes)
	}
}

// TestARefusedShardLeavesTheMergeAsItWas: a checked merge is all or
// nothing. A shard refused once its histograms are checked (one disagrees
// with its counts in its last interval) or once they are being added (past
// the memory limit, some intervals already added and taken back out)
// leaves the merged document exactly as if it had never been offered.
func TestARefusedShardLeavesTheMergeAsItWas(t *testing.T) {
	w := shardtest.Workload(10 * time.Minute)
	start := time.Now().Add(-2 * time.Hour).Truncate(time.Second)
	e, err := protocol.ResultExpectation("undo", &w, start, time.Minute, -1, 3)
	if err != nil {
		t.Fatal(err)
	}
	e.HistogramMemory = 64 << 20
	merge := func(refused *result.Document) string {
		t.Helper()
		m := result.NewCheckedMerger(e)
		if err := m.Add(shardtest.Shard("undo", w, start, 0, 3)); err != nil {
			t.Fatal(err)
		}
		if refused != nil {
			if err := m.Add(refused); err == nil {
				t.Fatal("the bad shard was merged; want a refusal")
			}
		}
		if err := m.Add(shardtest.Shard("undo", w, start, 2, 3)); err != nil {
			t.Fatal(err)
		}
		d, err := m.Result()
		if err != nil {
			t.Fatal(err)
		}
		js, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		return string(js)
	}
	want := merge(nil)
	disagrees := shardtest.Shard("undo", w, start, 1, 3)
	last := &disagrees.Intervals[len(disagrees.Intervals)-1].Operations[0]
	last.OK++
	bomb := shardtest.Shard("undo", w, start, 1, 3)
	shardtest.FillBuckets(bomb)
	for name, bad := range map[string]*result.Document{"histogram disagrees with its counts": disagrees, "past the memory limit": bomb} {
		if got := merge(bad); got != want {
			t.Errorf("%s: the merge after the refused shard differs from the merge without it", name)
		}
	}
}

// TestCheckRefusesAnotherStreamOrAnImpossibleWallTime: a runner's
// document of a streams run must be of the stream expected, and its batch
// wall time within its own start and end.
func TestCheckRefusesAnotherStreamOrAnImpossibleWallTime(t *testing.T) {
	w := shardtest.Workload(10 * time.Minute)
	start := time.Now().Add(-2 * time.Hour).Truncate(time.Second)
	e, err := protocol.ResultExpectation("streams", &w, start, time.Minute, -1, 3)
	if err != nil {
		t.Fatal(err)
	}
	e.Stream = "batch"
	good := shardtest.Shard("streams", w, start, 0, 3)
	good.Stream = "batch"
	good.Shards[0].WallTimeSeconds = good.Shards[0].Ended.Sub(good.Shards[0].Started).Seconds()
	if err := e.Check(good); err != nil {
		t.Fatalf("a batch stream's document is refused: %v", err)
	}
	for name, mutate := range map[string]func(d *result.Document){
		"another stream":         func(d *result.Document) { d.Stream = "online" },
		"no stream":              func(d *result.Document) { d.Stream = "" },
		"negative wall time":     func(d *result.Document) { d.Shards[0].WallTimeSeconds = -1 },
		"wall time past its end": func(d *result.Document) { d.Shards[0].WallTimeSeconds += 3600 },
	} {
		bad := *good
		bad.Shards = append([]result.Shard(nil), good.Shards...)
		mutate(&bad)
		if err := e.Check(&bad); err == nil {
			t.Errorf("%s: Check accepted it", name)
		}
	}
}
