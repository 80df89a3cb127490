package protocol

import (
	"os"
	"testing"

	"github.com/spanbench/spanbench/result"
)

// TestAV1ShardConfigMapResultStillDecodesAndMerges: the result of a shard
// ConfigMap written by a runner before result v2 (commit 34f4082; two
// operations, six 1 s intervals, errors in odd ones) is decoded within
// ResultBudget, passes the run's checks and merges to the figures its
// runner derived.
func TestAV1ShardConfigMapResultStillDecodesAndMerges(t *testing.T) {
	b, err := os.ReadFile("testdata/v1-shard-result.gz")
	if err != nil {
		t.Fatal(err)
	}
	d, err := DecodeResult(b)
	if err != nil {
		t.Fatalf("DecodeResult refused a v1 shard result: %v", err)
	}
	if d.SchemaVersion != result.SchemaVersionV1 {
		t.Fatalf("the fixture is of version %q, want %q", d.SchemaVersion, result.SchemaVersionV1)
	}
	e, err := FileExpectation(d)
	if err != nil {
		t.Fatal(err)
	}
	m := result.NewCheckedMerger(e)
	if err := m.Add(d); err != nil {
		t.Fatalf("the checked merge refused a v1 shard result: %v", err)
	}
	merged, err := m.Result()
	if err != nil {
		t.Fatal(err)
	}
	if g, w := merged.Overall, d.Overall; g.OK != w.OK || g.Latency != w.Latency || g.Service != w.Service {
		t.Errorf("merged overall %+v / %+v, the v1 runner derived %+v / %+v", g.Latency, g.Service, w.Latency, w.Service)
	}
	if _, err := EncodeResult(merged); err != nil {
		t.Errorf("the merged v2 result does not encode for a ConfigMap: %v", err)
	}
}
