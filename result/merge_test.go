package result

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/spanbench/spanbench/result/histogram"
)

var t0 = time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)

// testSpec is a resolved YCSB spec as the API writes it, with two
// operations, read (weight 9) and update, and the given warmUp JSON ("" for
// none).
func testSpec(warmUp string) Spec {
	return specJSON9(warmUp, 9)
}

func specJSON9(warmUp string, readWeight int) Spec {
	if warmUp == "" {
		warmUp = `{"mode":"None"}`
	}
	s, err := NewSpec([]byte(fmt.Sprintf(`{"type":"YCSB","operations":[{"name":"read","type":"Read","weight":%d},`+
		`{"name":"update","type":"Update","weight":1}],"load":{"rate":100},"duration":"1m0s","warmUp":%s}`, readWeight, warmUp)))
	if err != nil {
		panic(err)
	}
	return s
}

// fixedWarmUp is a Fixed warm-up's JSON.
func fixedWarmUp(d time.Duration) string {
	return fmt.Sprintf(`{"mode":"Fixed","duration":%q}`, d.String())
}

// sample is one measured operation.
type sample struct {
	shard, interval int
	op              string
	micros          int64
	// gfe is the GFE's timing of the operation, 0 when its responses
	// carried none.
	gfe int64
}

// shardDocs builds one document per shard from samples, the way a runner
// would: one histogram per interval and operation.
func shardDocs(t *testing.T, spec Spec, shards, intervals int, samples []sample) []*Document {
	t.Helper()
	type key struct {
		shard, interval int
		op              string
	}
	hs, gfe := map[key]*hdr.Histogram{}, map[key]*hdr.Histogram{}
	for _, s := range samples {
		k := key{s.shard, s.interval, s.op}
		if hs[k] == nil {
			hs[k] = histogram.New()
		}
		_ = hs[k].RecordValue(s.micros)
		if s.gfe > 0 {
			if gfe[k] == nil {
				gfe[k] = histogram.New()
			}
			_ = gfe[k].RecordValue(s.gfe)
		}
	}
	var docs []*Document
	for sh := range shards {
		d := &Document{SchemaVersion: SchemaVersion, Run: "r", Spec: spec, Start: t0,
			End: t0.Add(time.Duration(intervals) * 10 * time.Second), IntervalSeconds: 10,
			Shards: []Shard{{Index: sh, Count: shards}}}
		for i := range intervals {
			in := Interval{Index: i, TargetRate: 100 / float64(shards)}
			for _, o := range spec.Settings().Operations {
				h := hs[key{sh, i, o.Name}]
				if h == nil {
					continue
				}
				enc, err := histogram.Encode(h)
				if err != nil {
					t.Fatal(err)
				}
				op := IntervalOperation{Name: o.Name, Counts: Counts{OK: uint64(h.TotalCount())},
					Histograms: Histograms{LatencyHistogram: enc, ServiceHistogram: enc}}
				if err := op.SetGFELatency(gfe[key{sh, i, o.Name}]); err != nil {
					t.Fatal(err)
				}
				in.Operations = append(in.Operations, op)
			}
			d.Intervals = append(d.Intervals, in)
		}
		if err := Finalize(d); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	return docs
}

// TestMergeEqualsOneHistogramOfAllSamples is the property that makes merged
// results exact: for random samples split randomly over shards, intervals and
// operations, the merged totals' percentiles equal those of one histogram fed
// every sample after the warm-up. The GFE latency, which only some
// operations of some shards carry (an older runner's or the emulator's
// carry none), merges the same way.
func TestMergeEqualsOneHistogramOfAllSamples(t *testing.T) {
	for seed := range uint64(25) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			shards, intervals := 1+rng.IntN(8), 6
			spec := testSpec(fixedWarmUp(15 * time.Second))
			var samples []sample
			want := map[string]*hdr.Histogram{"read": histogram.New(), "update": histogram.New(), "overall": histogram.New()}
			wantGFE := map[string]*hdr.Histogram{"read": histogram.New(), "update": histogram.New(), "overall": histogram.New()}
			withGFE := rng.IntN(shards + 1) // shards from withGFE on carry none
			for range 1 + rng.IntN(20_000) {
				s := sample{shard: rng.IntN(shards), interval: rng.IntN(intervals), op: []string{"read", "update"}[rng.IntN(2)],
					micros: 1 + int64(rng.ExpFloat64()*float64(1+rng.IntN(100_000)))}
				if s.shard < withGFE && rng.IntN(4) > 0 {
					s.gfe = 1 + rng.Int64N(s.micros)
				}
				samples = append(samples, s)
				if s.interval >= 2 { // a 15 s warm-up excludes whole 10 s intervals 0 and 1
					_ = want[s.op].RecordValue(s.micros)
					_ = want["overall"].RecordValue(s.micros)
					if s.gfe > 0 {
						_ = wantGFE[s.op].RecordValue(s.gfe)
						_ = wantGFE["overall"].RecordValue(s.gfe)
					}
				}
			}
			docs := shardDocs(t, spec, shards, intervals, samples)
			// Every shard's document of one load stream (or of a run
			// without streams), a batch stream's with its wall time.
			stream := []string{"", "online", "batch"}[seed%3]
			wall := map[int]float64{}
			for i := range docs {
				docs[i].Stream = stream
				if stream == "batch" {
					docs[i].Shards[0].WallTimeSeconds = float64(1 + rng.IntN(30))
					wall[docs[i].Shards[0].Index] = docs[i].Shards[0].WallTimeSeconds
				}
				if rng.IntN(2) == 0 { // shards of an older runner: the v1 encoding
					docs[i] = toV1(t, docs[i])
				}
			}
			rand.New(rand.NewPCG(seed, 9)).Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
			merged, err := Merge(docs...)
			if err != nil {
				t.Fatalf("Merge: %v", err)
			}
			if merged.Stream != stream {
				t.Errorf("the merge of stream %q's documents is of stream %q", stream, merged.Stream)
			}
			for _, sh := range merged.Shards {
				if sh.WallTimeSeconds != wall[sh.Index] {
					t.Errorf("shard %d's wall time is %gs after the merge, %gs before", sh.Index, sh.WallTimeSeconds, wall[sh.Index])
				}
			}
			got := map[string]Operation{"overall": merged.Overall}
			for _, op := range merged.Totals {
				got[op.Name] = op
			}
			for name, h := range want {
				if g, w := got[name].Latency, histogram.Summarize(h); g != w {
					t.Errorf("%s over %d shards: merged %+v, one histogram of all samples %+v", name, shards, g, w)
				}
				// The merged histogram itself, not only its summary: every
				// count, hence min and max, as one histogram of all samples.
				if enc := got[name].LatencyHistogram; h.TotalCount() > 0 {
					back, err := histogram.Decode(enc)
					if err != nil || !back.Equals(h) {
						t.Errorf("%s: merged histogram (err %v) differs from one histogram of all samples", name, err)
					}
				}
				checkGFE(t, name, got[name], wantGFE[name])
			}
		})
	}
}

// checkGFE checks an operation's merged GFE latency against one
// histogram of all its samples: absent, not zero, when there were none.
func checkGFE(t *testing.T, name string, got Operation, want *hdr.Histogram) {
	t.Helper()
	if want.TotalCount() == 0 {
		if got.GFELatency != nil || got.GFELatencyHistogram != "" {
			t.Errorf("%s: no sample had a GFE latency, but the merge reports %+v", name, got.GFELatency)
		}
		return
	}
	if got.GFELatency == nil || *got.GFELatency != histogram.Summarize(want) {
		t.Errorf("%s: merged GFE latency %+v, one histogram of all samples %+v", name, got.GFELatency, histogram.Summarize(want))
	}
	back, err := histogram.Decode(got.GFELatencyHistogram)
	if err != nil || !back.Equals(want) {
		t.Errorf("%s: merged GFE histogram (err %v) differs from one histogram of all samples", name, err)
	}
}

func TestMergeRefusesMismatchedShards(t *testing.T) {
	spec := testSpec("")
	a := shardDocs(t, spec, 2, 2, []sample{{0, 0, "read", 5, 0}, {1, 1, "read", 7, 0}})
	cases := map[string]func(d *Document){
		"schema version": func(d *Document) { d.SchemaVersion = "spanbench.io/result/v0" },
		"run":            func(d *Document) { d.Run = "other" },
		"stream":         func(d *Document) { d.Stream = "other" },
		"start":          func(d *Document) { d.Start = d.Start.Add(time.Second) },
		"spec":           func(d *Document) { d.Spec = specJSON9("", 1) },
		"shard index":    func(d *Document) { d.Shards[0].Index = 0 },
		"histogram":      func(d *Document) { d.Intervals[1].Operations[0].LatencyHistogram = "garbage!" },
	}
	for name, mutate := range cases {
		b := *a[1]
		b.Shards = append([]Shard(nil), a[1].Shards...)
		b.Intervals = cloneIntervals(a[1].Intervals)
		mutate(&b)
		if _, err := Merge(a[0], &b); err == nil {
			t.Errorf("Merge with a different %s succeeded; want an error", name)
		}
	}
}

func cloneIntervals(in []Interval) []Interval {
	out := make([]Interval, len(in))
	for i, x := range in {
		x.Operations = append([]IntervalOperation(nil), x.Operations...)
		out[i] = x
	}
	return out
}

// TestErrorLatencyIsMergedAndShownOnlyWhenThereAreErrors: failed
// operations' latencies have their own histogram, merged like the others.
func TestErrorLatencyIsMergedAndShownOnlyWhenThereAreErrors(t *testing.T) {
	spec := testSpec("")
	want := histogram.New()
	var docs []*Document
	for sh := range 2 {
		lat, errLat := histogram.New(), histogram.New()
		_ = lat.RecordValue(100)
		for v := range int64(50) {
			_ = errLat.RecordValue(1000*(v+1) + int64(sh))
			_ = want.RecordValue(1000*(v+1) + int64(sh))
		}
		read, err := NewIntervalOperation("read", Counts{OK: 1, Errors: map[string]uint64{"DeadlineExceeded": 50}}, lat, lat, errLat)
		if err != nil {
			t.Fatal(err)
		}
		update, err := NewIntervalOperation("update", Counts{OK: 1}, lat, lat, histogram.New())
		if err != nil {
			t.Fatal(err)
		}
		if update.ErrorLatencyHistogram != "" {
			t.Fatalf("an operation without errors carries an error histogram")
		}
		docs = append(docs, &Document{SchemaVersion: SchemaVersion, Run: "r", Spec: spec, Start: t0, End: t0.Add(10 * time.Second),
			IntervalSeconds: 10, Shards: []Shard{{Index: sh, Count: 2}},
			Intervals: []Interval{{Index: 0, Operations: []IntervalOperation{read, update}}}})
	}
	merged, err := Merge(docs...)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range merged.Totals {
		switch op.Name {
		case "read":
			w := histogram.Summarize(want)
			if op.ErrorLatency == nil || op.ErrorLatency.Count != 100 || op.ErrorLatency.P99 != w.P99 || op.Errors["DeadlineExceeded"] != 100 {
				t.Errorf("read's merged error latency %+v, errors %v; want 100 samples with p99 %d", op.ErrorLatency, op.Errors, w.P99)
			}
		case "update":
			if op.ErrorLatency != nil {
				t.Errorf("update had no errors but reports an error latency %+v", op.ErrorLatency)
			}
		}
	}
}
