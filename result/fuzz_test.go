package result_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/spanbench/spanbench/internal/shardtest"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/protocol"
)

// fuzzStart is the start of the run every fuzzed document claims to
// belong to: two 1 s intervals of shardtest.Workload. Seeds stay small
// (a few KiB): the fuzzer minimizes every new input, and minimizing large
// ones stalls it.
var fuzzStart = time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)

func fuzzExpect(t testing.TB) result.Expect {
	w := shardtest.Workload(2 * time.Second)
	e, err := protocol.ResultExpectation("fuzz", &w, fuzzStart, time.Minute, -1, 2)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// addSeeds adds a valid shard of the fuzzed run and every hostile class,
// as JSON.
func addSeeds(f *testing.F, add func(js []byte)) {
	w := shardtest.Workload(2 * time.Second)
	for i := range 2 {
		js, err := json.Marshal(shardtest.Shard("fuzz", w, fuzzStart, i, 2))
		if err != nil {
			f.Fatal(err)
		}
		add(js)
	}
	for _, c := range shardtest.Hostile("fuzz", w, fuzzStart, 1, 2) {
		zr, err := gzip.NewReader(bytes.NewReader(c.Result))
		if err != nil {
			add(c.Result)
			continue
		}
		// The bombs' first 2 KiB: the fuzzer grows inputs itself.
		js, _ := io.ReadAll(io.LimitReader(zr, 2<<10))
		add(js)
	}
}

// FuzzReadAndMerge: any JSON, read within the ConfigMap budget and merged
// by a checked merger with a valid shard, is refused or merges into a
// document whose figures fit the status and whose JSON can be written;
// never a panic, a hang or an allocation past the budget.
func FuzzReadAndMerge(f *testing.F) {
	addSeeds(f, func(js []byte) { f.Add(js) })
	e := fuzzExpect(f)
	good := shardtest.Shard("fuzz", shardtest.Workload(2*time.Second), fuzzStart, 0, 2)
	f.Fuzz(func(t *testing.T, js []byte) {
		d, err := result.ReadWithin(bytes.NewReader(js), protocol.ResultBudget())
		if err != nil {
			return
		}
		m := result.NewCheckedMerger(e)
		if err := m.Add(good); err != nil {
			t.Fatalf("the valid shard: %v", err)
		}
		_ = m.Add(d) // refused or merged; either way the merger stays usable
		merged, err := m.Result()
		if err != nil {
			t.Fatalf("merging after a refused or merged document: %v", err)
		}
		checkMerged(t, merged)
	})
}

// FuzzMergePair: two fuzzed documents merged in turn, as two shards of
// one run: the merge refuses what does not fit (overflowing sums
// included) and what it returns is writable and within int64.
func FuzzMergePair(f *testing.F) {
	var seeds [][]byte
	addSeeds(f, func(js []byte) { seeds = append(seeds, js) })
	for i := range seeds {
		f.Add(seeds[i], seeds[(i+1)%len(seeds)])
	}
	e := fuzzExpect(f)
	f.Fuzz(func(t *testing.T, a, b []byte) {
		m := result.NewCheckedMerger(e)
		added := 0
		for _, js := range [][]byte{a, b} {
			d, err := result.ReadWithin(bytes.NewReader(js), protocol.ResultBudget())
			if err == nil && m.Add(d) == nil {
				added++
			}
		}
		merged, err := m.Result()
		if added == 0 {
			return
		}
		if err != nil {
			t.Fatalf("%d documents merged, then Result failed: %v", added, err)
		}
		checkMerged(t, merged)
	})
}

// FuzzReadAndMergeStreams: any JSON, read within the ConfigMap budget and
// merged by a checked merger of a two-stream run with a valid shard, is
// refused or merges into a document whose every stream's figures fit the
// status; never a panic, a hang or an allocation past the budget.
func FuzzReadAndMergeStreams(f *testing.F) {
	w, e := streamsRun(f, fuzzStart)
	good := streamsShard(f, w, fuzzStart, 0)
	other := streamsShard(f, w, fuzzStart, 1)
	js, err := json.Marshal(other)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(js)
	other.Streams = append(other.Streams, other.Streams...)
	if js, err = json.Marshal(other); err != nil {
		f.Fatal(err)
	}
	f.Add(js)
	f.Fuzz(func(t *testing.T, js []byte) {
		d, err := result.ReadWithin(bytes.NewReader(js), protocol.ResultBudget())
		if err != nil {
			return
		}
		m := result.NewCheckedMerger(e)
		if err := m.Add(good); err != nil {
			t.Fatalf("the valid shard: %v", err)
		}
		_ = m.Add(d)
		merged, err := m.Result()
		if err != nil {
			t.Fatalf("merging after a refused or merged document: %v", err)
		}
		checkMerged(t, merged)
		if len(merged.Streams) > len(e.Streams) {
			t.Fatalf("the merge has %d streams; the run has %d", len(merged.Streams), len(e.Streams))
		}
		for i := range merged.Streams {
			checkMerged(t, merged.StreamDocument(&merged.Streams[i]))
		}
	})
}

// checkMerged holds a merged document to what the status and the report
// need: counts within int64, times within RFC 3339, JSON that marshals.
func checkMerged(t *testing.T, d *result.Document) {
	t.Helper()
	for _, op := range append(d.Totals, d.Overall) {
		if op.OK > result.MaxCount || op.Rows > result.MaxCount || op.ErrorCount() > result.MaxCount {
			t.Fatalf("operation %s: counts past int64: %+v", op.Name, op.Counts)
		}
	}
	if _, err := json.Marshal(d); err != nil {
		t.Fatalf("the merged document cannot be written: %v", err)
	}
	if d.WarmUp.End.Before(d.Start) || d.WarmUp.End.After(d.End.Add(time.Duration(d.IntervalSeconds*float64(time.Second)))) {
		t.Fatalf("warm-up ends at %s, outside the run's %s to %s", d.WarmUp.End, d.Start, d.End)
	}
}
