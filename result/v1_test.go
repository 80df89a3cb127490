package result

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/spanbench/spanbench/result/histogram"
)

// v1Fixture is a finalized shard result written by spanbench before v2
// (commit 34f4082): two operations over six 1 s intervals, errors in odd
// intervals, every histogram in the v1 encoding.
const v1Fixture = "testdata/v1-result.json"

// v1Prefix begins every v1 histogram: base64 of "HIST".
const v1Prefix = "SElT"

// toV1 is d as a runner before v2 wrote it: the same counts, every
// histogram in the v1 encoding.
func toV1(t *testing.T, d *Document) *Document {
	var enc histogram.Encoder
	return reencoded(t, d, SchemaVersionV1, enc.EncodeV1)
}

// toV2 is d with every interval histogram re-encoded as today's writers
// write it.
func toV2(t *testing.T, d *Document) *Document {
	var enc histogram.Encoder
	return reencoded(t, d, SchemaVersion, enc.Encode)
}

// reencoded is a copy of d of schema version with every interval histogram
// re-encoded by encode.
func reencoded(t *testing.T, d *Document, version string, encode func(*histogram.Compact) (string, error)) *Document {
	t.Helper()
	var dec histogram.Decoder
	out := *d
	out.SchemaVersion = version
	out.Intervals = cloneIntervals(d.Intervals)
	for i := range out.Intervals {
		for j := range out.Intervals[i].Operations {
			for _, f := range out.Intervals[i].Operations[j].Histograms.fields() {
				c, err := dec.Decode(*f)
				if err != nil {
					t.Fatal(err)
				}
				if *f, err = encode(c); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return &out
}

func readV1Fixture(t *testing.T) *Document {
	t.Helper()
	d, err := ReadFile(v1Fixture)
	if err != nil {
		t.Fatalf("reading the v1 fixture: %v", err)
	}
	if d.SchemaVersion != SchemaVersionV1 || !strings.HasPrefix(d.Intervals[0].Operations[0].LatencyHistogram, v1Prefix) {
		t.Fatalf("the fixture is not a v1 document (%q, histogram %.8s...)", d.SchemaVersion, d.Intervals[0].Operations[0].LatencyHistogram)
	}
	return d
}

// TestV1ResultStillMergesToItsOwnFigures: an old result file is read, and
// merging and finalizing it gives exactly the figures the old code derived
// and wrote into it; the result is a v2 document in the new encoding.
func TestV1ResultStillMergesToItsOwnFigures(t *testing.T) {
	d := readV1Fixture(t)
	merged, err := Merge(d)
	if err != nil {
		t.Fatalf("merging the v1 fixture: %v", err)
	}
	if merged.SchemaVersion != SchemaVersion {
		t.Errorf("merged schema version %q, want %q", merged.SchemaVersion, SchemaVersion)
	}
	want := map[string]Operation{"overall": d.Overall}
	for _, op := range d.Totals {
		want[op.Name] = op
	}
	got := map[string]Operation{"overall": merged.Overall}
	for _, op := range merged.Totals {
		got[op.Name] = op
	}
	for name, w := range want {
		g := got[name]
		if g.Counts.OK != w.Counts.OK || g.Latency != w.Latency || g.Service != w.Service || !sameSummary(g.ErrorLatency, w.ErrorLatency) {
			t.Errorf("%s: merged %+v / %+v / %+v, the v1 writer derived %+v / %+v / %+v",
				name, g.Latency, g.Service, g.ErrorLatency, w.Latency, w.Service, w.ErrorLatency)
		}
		if strings.HasPrefix(g.LatencyHistogram, v1Prefix) || g.LatencyHistogram == "" {
			t.Errorf("%s: merged histogram %.8s... is not in the v2 encoding", name, g.LatencyHistogram)
		}
		if g.GFELatency != nil || g.GFELatencyHistogram != "" {
			t.Errorf("%s: a document of a runner that did not read the GFE's timing merged into a GFE latency %+v", name, g.GFELatency)
		}
	}
}

// TestV1AndV2ShardsMergeAlike: a v1 shard merged with a v2 one gives the
// document two v1 shards (or two v2 ones) with the same counts give.
func TestV1AndV2ShardsMergeAlike(t *testing.T) {
	a := readV1Fixture(t)
	a.Shards[0].Count = 2
	b := *a
	b.Shards = []Shard{a.Shards[0]}
	b.Shards[0].Index = 1
	var results []string
	for _, pair := range [][2]*Document{{a, &b}, {a, toV2(t, &b)}, {toV2(t, a), toV2(t, &b)}} {
		m, err := Merge(pair[0], pair[1])
		if err != nil {
			t.Fatalf("merging %s and %s shards: %v", pair[0].SchemaVersion, pair[1].SchemaVersion, err)
		}
		js, _ := json.Marshal(m.Overall)
		results = append(results, string(js))
	}
	if results[0] != results[1] || results[1] != results[2] {
		t.Errorf("merges differ by encoding:\nv1+v1 %s\nv1+v2 %s\nv2+v2 %s", results[0], results[1], results[2])
	}
}

func sameSummary(a, b *histogram.Summary) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}
