package result_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/shardtest"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/protocol"
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

// streamsRun is a two-stream run of shardtest.Workload's operations:
// "online" over the whole 10 s and "batch" from 4 s on, and the
// expectation of its documents.
func streamsRun(t testing.TB, start time.Time) (v1alpha1.WorkloadSpec, result.Expect) {
	t.Helper()
	w := shardtest.Workload(10 * time.Second)
	w.Streams = []v1alpha1.StreamSpec{
		{Name: "online", Operations: []v1alpha1.StreamOperation{{Name: "read", Weight: 1}}, Load: w.Load},
		{Name: "batch", Operations: []v1alpha1.StreamOperation{{Name: "update", Weight: 1}}, Load: v1alpha1.LoadSpec{Concurrency: ptr.To[int32](1)},
			Iterations: ptr.To[int64](10), StartOffset: &metav1.Duration{Duration: 4 * time.Second}},
	}
	w = w.Resolved()
	e, err := protocol.ResultExpectation("streams", &w, start, time.Minute, -1, 2)
	if err != nil {
		t.Fatal(err)
	}
	return w, e
}

// streamsShard is shard i of 2's document of streamsRun.
func streamsShard(t testing.TB, w v1alpha1.WorkloadSpec, start time.Time, i int) *result.Document {
	t.Helper()
	online := shardtest.Shard("streams", w, start, i, 2)
	batch := shardtest.Shard("streams", w, start.Add(4*time.Second), i, 2)
	shardtest.Truncate(batch, 6)
	batch.Shards[0].WallTimeSeconds = 1.5
	online.Stream, batch.Stream = "online", "batch"
	base := &result.Document{SchemaVersion: result.SchemaVersion, Run: "streams", Spec: online.Spec, Target: online.Target,
		Environment: online.Environment, Start: start, IntervalSeconds: 1, Shards: []result.Shard{{Index: i, Count: 2}}}
	d, err := result.StreamsDocument(base, []*result.Document{online, batch})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestCheckedMergeOfStreamsRefusesHostileSections: a streams run's shard
// documents merge per stream; a document with a stream the run lacks, a
// stream twice, more streams than the run, a section outside its
// stream's window, a section of another shard or a top-level time series
// is refused whole, leaving the merge of the others as it was.
func TestCheckedMergeOfStreamsRefusesHostileSections(t *testing.T) {
	start := time.Now().Add(-time.Hour).Truncate(time.Second)
	w, e := streamsRun(t, start)
	good0, good1 := streamsShard(t, w, start, 0), streamsShard(t, w, start, 1)
	// merge offers good0, then bad, which must be refused with an error
	// containing want: the check of that case, not another that happens to
	// catch it too (three cases did pass with their own check removed).
	merge := func(t *testing.T, bad *result.Document, want string) string {
		t.Helper()
		m := result.NewCheckedMerger(e)
		if err := m.Add(good0); err != nil {
			t.Fatalf("a good streams document is refused: %v", err)
		}
		if bad != nil {
			if err := m.Add(bad); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("a hostile streams document: error %v; want a refusal containing %q", err, want)
			}
		}
		d, err := m.Result()
		if err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(d)
		return string(js)
	}
	want := merge(t, nil, "")
	for name, tc := range map[string]struct {
		mutate  func(d *result.Document)
		refusal string
	}{
		"unknown stream": {func(d *result.Document) { d.Streams[0].Name = "other" }, `stream section "other" is not a stream of the run`},
		"stream twice":   {func(d *result.Document) { d.Streams[1].Name = d.Streams[0].Name }, `stream section "batch" is not a stream of the run, or appears twice`},
		"too many streams": {func(d *result.Document) {
			for range 20 {
				d.Streams = append(d.Streams, d.Streams[0])
			}
		}, "the result has 22 stream sections; the run has 2 streams"},
		// Beyond the clock skew a runner's times may have: a section
		// merely 4 s early is within it, refused only by the merge's
		// alignment with good0.
		"batch before its offset": {func(d *result.Document) {
			d.Streams[0].Start = d.Streams[0].Start.Add(-protocol.MaxClockSkew - time.Second)
		}, "stream batch: start"},
		"another shard's section": {func(d *result.Document) { d.Streams[1].Shards[0].Index = 0 }, "shard 0 is not among the result's shards"},
		"top-level intervals": {func(d *result.Document) { d.Intervals = good1.StreamDocument(&good1.Streams[1]).Intervals },
			"the result has top-level intervals"},
		"histogram disagrees": {func(d *result.Document) {
			d.Streams[1].Intervals[0].Operations[0].OK++
		}, "stream online: interval 0, operation read: the latency histogram holds"},
	} {
		js, _ := json.Marshal(good1)
		bad, err := result.Read(bytes.NewReader(js))
		if err != nil {
			t.Fatal(err)
		}
		tc.mutate(bad)
		t.Run(name, func(t *testing.T) {
			if got := merge(t, bad, tc.refusal); got != want {
				t.Errorf("the merge after the refused document differs from the merge without it")
			}
		})
	}
	m := result.NewCheckedMerger(e)
	for _, d := range []*result.Document{good0, good1} {
		if err := m.Add(d); err != nil {
			t.Fatalf("good streams documents are refused: %v", err)
		}
	}
	d, err := m.Result()
	if err != nil || len(d.Streams) != 2 || len(d.Streams[0].Shards) != 2 || d.Streams[0].WallTimeSeconds != 1.5 {
		t.Fatalf("the merge of both shards (err %v): %+v", err, d.Streams)
	}
}
