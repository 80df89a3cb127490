package protocol

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
	"github.com/spanbench/spanbench/runner/protocol/chunks"
)

// bigResult is a long run's result: intervals of 1 s, two operations, each
// interval's histograms full of distinct random latencies (which compress
// badly), finalized like a runner's.
func bigResult(t *testing.T, intervals int) *result.Document {
	t.Helper()
	spec := ycsb(1000, time.Duration(intervals)*time.Second, readOp, updateOp)
	start := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	recorded, err := RecordedSpec(&spec)
	if err != nil {
		t.Fatal(err)
	}
	d := &result.Document{SchemaVersion: result.SchemaVersion, Run: "long", Spec: recorded, Start: start,
		End: start.Add(time.Duration(intervals) * time.Second), IntervalSeconds: 1, Shards: []result.Shard{{Index: 0, Count: 1}}}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range intervals {
		in := result.Interval{Index: i, TargetRate: 200}
		for _, op := range spec.Operations {
			lat, svc := histogram.New(), histogram.New()
			for range 400 {
				v := 1 + rng.Int64N(2_000_000)
				_ = lat.RecordValue(v)
				_ = svc.RecordValue(v / 2)
			}
			io, err := result.NewIntervalOperation(op.Name, result.Counts{OK: uint64(lat.TotalCount())}, lat, svc, histogram.New())
			if err != nil {
				t.Fatal(err)
			}
			in.Operations = append(in.Operations, io)
		}
		d.Intervals = append(d.Intervals, in)
	}
	if err := result.Finalize(d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestALongResultIsStoredWholeInChunks: a result over what one ConfigMap
// holds (which EncodeResult used to coarsen to fit) is stored in chunks and
// read back with every interval at its own resolution, no note added.
func TestALongResultIsStoredWholeInChunks(t *testing.T) {
	d := bigResult(t, 1000)
	b, err := EncodeResult(d)
	if err != nil {
		t.Fatalf("EncodeResult refused a result it can store in chunks: %v", err)
	}
	if len(b) <= MaxResultBytes {
		t.Fatalf("the fixture is %d bytes compressed, within one ConfigMap; it must not be, for this test to mean anything", len(b))
	}
	stored, err := StoreResult(b, ShardLimits(), "ns", "long-shard-0", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Inline != nil || stored.Head == nil || len(stored.Chunks) < 2 {
		t.Fatalf("a %d-byte result stored inline %d bytes, head %v, %d chunks; want chunks only", len(b), len(stored.Inline), stored.Head, len(stored.Chunks))
	}
	byName := map[string][]byte{}
	for _, cm := range stored.Chunks {
		byName[cm.Name] = cm.BinaryData[chunks.KeyChunk]
	}
	got, err := decodeResultFrom(chunks.NewReader(*stored.Head, "long-shard-0", func(k int) ([]byte, error) {
		return byName[chunks.Name("long-shard-0", k)], nil
	}), ResultBudget())
	if err != nil {
		t.Fatal(err)
	}
	if got.IntervalSeconds != 1 || len(got.Intervals) != 1000 || len(got.Notes) != len(d.Notes) {
		t.Errorf("read back %d intervals of %gs with notes %q; want all 1000 of 1s and no note added", len(got.Intervals), got.IntervalSeconds, got.Notes)
	}
	if got.Overall.OK != d.Overall.OK || got.Overall.Latency != d.Overall.Latency {
		t.Errorf("overall read back: %d ops, %+v; want exactly %d ops, %+v", got.Overall.OK, got.Overall.Latency, d.Overall.OK, d.Overall.Latency)
	}
}

// TestEncodeResultRefusesRatherThanCoarsens: a result its reader would
// refuse is refused when written, saying what the user can choose, and is
// never coarsened behind the user's back.
func TestEncodeResultRefusesRatherThanCoarsens(t *testing.T) {
	d := bigResult(t, 10)
	for i := range 2000 {
		d.Notes = append(d.Notes, fmt.Sprintf("note %d", i))
	}
	_, err := EncodeResult(d)
	if err == nil || !strings.Contains(err.Error(), "spec.workload.interval") {
		t.Fatalf("EncodeResult of a result over its decode budget: %v; want a refusal naming spec.workload.interval", err)
	}
	if d.IntervalSeconds != 1 || len(d.Intervals) != 10 {
		t.Errorf("EncodeResult changed its input: %d intervals of %gs", len(d.Intervals), d.IntervalSeconds)
	}
}
