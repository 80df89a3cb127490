package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/spanbench/spanbench/result/histogram"
)

// streamsShardDocs builds, per shard, one streams document of two
// streams, "online" (samples online, starting with the run) and "batch"
// (samples batch, starting 20 s later, each shard with a wall time), the
// way a runner combines its engine's stream documents.
func streamsShardDocs(t *testing.T, spec Spec, shards, intervals int, online, batch []sample, wall []float64) []*Document {
	t.Helper()
	on := shardDocs(t, spec, shards, intervals, online)
	ba := shardDocs(t, spec, shards, intervals, batch)
	var out []*Document
	for sh := range shards {
		on[sh].Stream, ba[sh].Stream = "online", "batch"
		shift(ba[sh], 20*time.Second)
		ba[sh].Shards[0].WallTimeSeconds = wall[sh]
		base := &Document{SchemaVersion: SchemaVersion, Run: "r", Spec: spec, Start: t0, IntervalSeconds: 10,
			Shards: []Shard{{Index: sh, Count: shards, Host: fmt.Sprint("pod-", sh)}}}
		d, err := StreamsDocument(base, []*Document{on[sh], ba[sh]})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// shift moves a document's start (and its shards' and end) by d.
func shift(doc *Document, d time.Duration) {
	doc.Start, doc.End = doc.Start.Add(d), doc.End.Add(d)
	for i := range doc.Shards {
		doc.Shards[i].Started, doc.Shards[i].Ended = doc.Start, doc.End
	}
	doc.WarmUp.End = doc.WarmUp.End.Add(d)
}

// TestStreamsMergeExactlyPerStream extends the exact-merge property to
// streams: one document per shard holds both streams; merged (after a
// round trip through JSON, some shards in the v1 encoding), each stream's
// totals equal one histogram of that stream's samples after its warm-up,
// the top level's one histogram of every sample, and the batch's wall time
// spans its shards' first send to their last return.
func TestStreamsMergeExactlyPerStream(t *testing.T) {
	for seed := range uint64(12) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			shards, intervals := 1+rng.IntN(6), 6
			spec := testSpec(fixedWarmUp(15 * time.Second))
			want := map[string]map[string]*hdr.Histogram{}
			for _, s := range []string{"online", "batch", "all"} {
				want[s] = map[string]*hdr.Histogram{"read": histogram.New(), "update": histogram.New(), "overall": histogram.New()}
			}
			samples := map[string][]sample{}
			for range 1 + rng.IntN(10_000) {
				stream := []string{"online", "batch"}[rng.IntN(2)]
				s := sample{shard: rng.IntN(shards), interval: rng.IntN(intervals), op: []string{"read", "update"}[rng.IntN(2)],
					micros: 1 + int64(rng.ExpFloat64()*float64(1+rng.IntN(100_000)))}
				samples[stream] = append(samples[stream], s)
				if s.interval >= 2 { // each stream's 15 s warm-up excludes its intervals 0 and 1
					for _, k := range []string{stream, "all"} {
						_ = want[k][s.op].RecordValue(s.micros)
						_ = want[k]["overall"].RecordValue(s.micros)
					}
				}
			}
			wall := make([]float64, shards)
			var wantWall float64
			for i := range wall {
				wall[i] = float64(1 + rng.IntN(50))
				wantWall = max(wantWall, wall[i]) // every shard's batch starts at t0+20s
			}
			docs := streamsShardDocs(t, spec, shards, intervals, samples["online"], samples["batch"], wall)
			for i := range docs {
				docs[i] = roundTrip(t, docs[i])
				if rng.IntN(2) == 0 {
					for j := range docs[i].Streams {
						sd := toV1(t, docs[i].StreamDocument(&docs[i].Streams[j]))
						docs[i].Streams[j].Intervals = sd.Intervals
					}
				}
			}
			rand.New(rand.NewPCG(seed, 9)).Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
			merged, err := Merge(docs...)
			if err != nil {
				t.Fatalf("Merge: %v", err)
			}
			if merged.SchemaVersion != SchemaVersionStreams || len(merged.Intervals) != 0 || len(merged.Shards) != shards {
				t.Fatalf("merged: version %s, %d top-level intervals, %d shards; want %s, none, %d", merged.SchemaVersion, len(merged.Intervals), len(merged.Shards), SchemaVersionStreams, shards)
			}
			if len(merged.Streams) != 2 || merged.Streams[0].Name != "batch" || merged.Streams[1].Name != "online" {
				t.Fatalf("merged streams %+v, want batch and online", merged.Streams)
			}
			checkTotals(t, "batch", merged.Streams[0].Totals, merged.Streams[0].Overall, want["batch"])
			checkTotals(t, "online", merged.Streams[1].Totals, merged.Streams[1].Overall, want["online"])
			checkTotals(t, "top level", merged.Totals, merged.Overall, want["all"])
			if got := merged.Streams[0].WallTimeSeconds; got != wantWall {
				t.Errorf("the batch's merged wall time is %gs, want %gs (the longest shard's, all starting together)", got, wantWall)
			}
			if merged.Streams[1].WallTimeSeconds != 0 {
				t.Errorf("the online stream has a wall time %gs; only batches do", merged.Streams[1].WallTimeSeconds)
			}
			if !merged.Streams[0].Start.Equal(t0.Add(20 * time.Second)) {
				t.Errorf("the batch section starts at %s, want its own start %s", merged.Streams[0].Start, t0.Add(20*time.Second))
			}
			again, err := Merge(merged)
			if err != nil || !sameJSON(t, again, merged) {
				t.Errorf("merging the merged document alone changes it (err %v)", err)
			}
		})
	}
}

// checkTotals checks totals and overall against one histogram per
// operation of every sample.
func checkTotals(t *testing.T, where string, totals []Operation, overall Operation, want map[string]*hdr.Histogram) {
	t.Helper()
	got := map[string]Operation{"overall": overall}
	for _, op := range totals {
		got[op.Name] = op
	}
	for name, h := range want {
		if g, w := got[name].Latency, histogram.Summarize(h); g != w {
			t.Errorf("%s, %s: merged %+v, one histogram of its samples %+v", where, name, g, w)
		}
		if uint64(h.TotalCount()) != got[name].OK {
			t.Errorf("%s, %s: merged count %d, samples %d", where, name, got[name].OK, h.TotalCount())
		}
	}
}

func roundTrip(t *testing.T, d *Document) *Document {
	t.Helper()
	js, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Read(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	return back
}

func sameJSON(t *testing.T, a, b *Document) bool {
	t.Helper()
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// TestSingleStreamDocumentKeepsItsShape: a run without streams writes
// version v2 and no streams key, as before streams existed.
func TestSingleStreamDocumentKeepsItsShape(t *testing.T) {
	d := shardDocs(t, testSpec(""), 1, 2, []sample{{0, 0, "read", 5, 0}})[0]
	js, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if d.SchemaVersion != SchemaVersion || strings.Contains(string(js), `"streams"`) || strings.Contains(string(js), `"stream"`) {
		t.Errorf("a single-stream document is of version %s or mentions streams: %.300s", d.SchemaVersion, js)
	}
}

// TestMergeRefusesStreamsBesideIntervals: a document with stream
// sections and one with a top-level time series are of different runs.
func TestMergeRefusesStreamsBesideIntervals(t *testing.T) {
	spec := testSpec("")
	streams := streamsShardDocs(t, spec, 2, 2, []sample{{0, 0, "read", 5, 0}}, []sample{{1, 1, "update", 7, 0}}, []float64{1, 1})
	plain := shardDocs(t, spec, 2, 2, []sample{{1, 0, "read", 5, 0}})
	if _, err := Merge(streams[0], plain[1]); err == nil {
		t.Error("a streams document merged with a plain one")
	}
	if _, err := Merge(plain[1], streams[0]); err == nil {
		t.Error("a plain document merged with a streams one")
	}
	dup := *streams[1]
	dup.Streams = append([]StreamSection(nil), streams[1].Streams...)
	dup.Streams[1].Name = dup.Streams[0].Name
	if _, err := Merge(streams[0], &dup); err == nil {
		t.Error("a document naming one stream twice merged")
	}
}

// TestStreamSectionsAreBudgetedAsDocuments: a section's time series gets
// a document's limits and memory charge (a long run's 1500 intervals
// read; a section costs what the same intervals cost at the top level),
// and a document with more sections than MaxStreams is refused before it
// is decoded.
func TestStreamSectionsAreBudgetedAsDocuments(t *testing.T) {
	spec := testSpec("")
	var samples []sample
	for i := range 1500 {
		samples = append(samples, sample{0, i, "read", int64(1 + i), 0})
	}
	plain := shardDocs(t, spec, 1, 1500, samples)[0]
	plain.Stream = "long"
	base := &Document{SchemaVersion: SchemaVersion, Run: "r", Spec: spec, Start: t0, IntervalSeconds: 10, Shards: []Shard{{Index: 0, Count: 1}}}
	streams, err := StreamsDocument(base, []*Document{plain})
	if err != nil {
		t.Fatal(err)
	}
	plain.Stream = ""
	pj, _ := json.Marshal(plain)
	sj, _ := json.Marshal(streams)
	if _, err := ReadWithin(bytes.NewReader(sj), FileBudget()); err != nil {
		t.Fatalf("a stream of 1500 intervals is refused: %v", err)
	}
	b := FileBudget()
	for b.Memory = 1 << 10; b.Fits(pj) != nil; b.Memory *= 2 {
	}
	// b fits the plain document within a factor of 2; the streams one
	// holds the same intervals and must not fit in a quarter of it.
	b.Memory /= 4
	if err := b.Fits(sj); err == nil {
		t.Errorf("a section's intervals are charged less than a document's: the streams document fits %d bytes", b.Memory)
	}
	many := *streams
	for i := range MaxStreams + 1 {
		many.Streams = append(many.Streams, StreamSection{Name: fmt.Sprint("s", i)})
	}
	mj, _ := json.Marshal(&many)
	var be *BudgetError
	if _, err := ReadWithin(bytes.NewReader(mj), FileBudget()); !errors.As(err, &be) {
		t.Errorf("a document of %d stream sections: %v; want a budget error", len(many.Streams), err)
	}
}
