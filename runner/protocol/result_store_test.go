package protocol

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
	"github.com/spanbench/spanbench/runner/protocol/chunks"
)

// throughChunks stores d as a runner does (EncodeResult, StoreResult) and
// reads it back from its chunks as the controller does, with the chunk
// ConfigMaps held in memory instead of the API server.
func throughChunks(t *testing.T, d *result.Document) *result.Document {
	t.Helper()
	enc, err := EncodeResult(d)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := StoreResult(enc, ShardLimits(), "ns", "r-shard-0", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Head == nil || len(stored.Chunks) < 2 {
		t.Fatalf("a %d-byte result was stored in %d chunks; the property needs several", len(enc), len(stored.Chunks))
	}
	byIndex := map[int][]byte{}
	for k, cm := range stored.Chunks {
		byIndex[k] = cm.BinaryData[chunks.KeyChunk]
	}
	back, err := decodeResultFrom(chunks.NewReader(*stored.Head, "r-shard-0", func(k int) ([]byte, error) { return byIndex[k], nil }), ResultBudget())
	if err != nil {
		t.Fatalf("reading the result back from its chunks: %v", err)
	}
	return back
}

// TestMergeThroughChunksEqualsOneHistogramOfAllSamples extends the merge's
// property (result, TestMergeEqualsOneHistogramOfAllSamples) to the
// chunked store: random latencies, in histograms drawn at random for each
// shard, interval and operation, each shard's result long enough to take
// several chunks, stored and read back through them, merge to the very
// histogram of all the latencies, per operation and overall.
func TestMergeThroughChunksEqualsOneHistogramOfAllSamples(t *testing.T) {
	const intervals = 1200
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			shards := 1 + rng.IntN(3)
			w := ycsb(1000, intervals*time.Second, readOp, updateOp)
			w.WarmUp = &v1alpha1.WarmUpSpec{Mode: v1alpha1.WarmUpNone}
			w = w.Resolved()
			spec, err := RecordedSpec(&w)
			if err != nil {
				t.Fatal(err)
			}
			// A pool of random histograms, drawn from for each interval
			// and operation: recording every latency afresh would take
			// minutes at this length.
			pool, encoded := make([]*hdr.Histogram, 64), make([]string, 64)
			for k := range pool {
				pool[k] = histogram.New()
				for range 1 + rng.IntN(800) {
					_ = pool[k].RecordValue(1 + int64(rng.ExpFloat64()*float64(1+rng.IntN(100_000))))
				}
				if encoded[k], err = histogram.Encode(pool[k]); err != nil {
					t.Fatal(err)
				}
			}
			truth := map[string]*hdr.Histogram{"overall": histogram.New()}
			var docs []*result.Document
			for sh := range shards {
				start := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
				d := &result.Document{SchemaVersion: result.SchemaVersion, Run: "r", Spec: spec, Start: start,
					End: start.Add(intervals * time.Second), IntervalSeconds: 1, Shards: []result.Shard{{Index: sh, Count: shards}}}
				for i := range intervals {
					in := result.Interval{Index: i, TargetRate: 200 / float64(shards)}
					for _, op := range w.Operations {
						if truth[op.Name] == nil {
							truth[op.Name] = histogram.New()
						}
						k := rng.IntN(len(pool))
						truth[op.Name].Merge(pool[k])
						truth["overall"].Merge(pool[k])
						in.Operations = append(in.Operations, result.IntervalOperation{Name: op.Name,
							Counts:     result.Counts{OK: uint64(pool[k].TotalCount())},
							Histograms: result.Histograms{LatencyHistogram: encoded[k], ServiceHistogram: encoded[k]}})
					}
					d.Intervals = append(d.Intervals, in)
				}
				if err := result.Finalize(d); err != nil {
					t.Fatal(err)
				}
				docs = append(docs, throughChunks(t, d))
			}
			merged, err := result.Merge(docs...)
			if err != nil {
				t.Fatalf("Merge: %v", err)
			}
			got := map[string]string{"overall": merged.Overall.LatencyHistogram}
			for _, op := range merged.Totals {
				got[op.Name] = op.LatencyHistogram
			}
			for name, want := range truth {
				h, err := histogram.Decode(got[name])
				if err != nil || !h.Equals(want) {
					t.Errorf("%s over %d shards through chunks: the merged histogram (err %v) is not one histogram of all %d latencies", name, shards, err, want.TotalCount())
				}
			}
		})
	}
}
