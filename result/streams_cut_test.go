package result

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// TestCutBatchesAreTheBatchesTheirWindowCutShort: a merged streams
// document names its batch stream (iterations in the spec) as cut short
// exactly when a shard of it has no wall time, never the open-loop
// stream beside it, which has none either; the table says so on the
// stream's line.
func TestCutBatchesAreTheBatchesTheirWindowCutShort(t *testing.T) {
	spec, err := NewSpec([]byte(`{"type":"YCSB","operations":[{"name":"read","type":"Read","weight":1},{"name":"update","type":"Update","weight":1}],` +
		`"duration":"1m0s","warmUp":{"mode":"None"},"streams":[{"name":"online","operations":[{"name":"read","weight":1}],"load":{"rate":100}},` +
		`{"name":"batch","operations":[{"name":"update","weight":1}],"load":{"concurrency":1},"iterations":500}]}`))
	if err != nil {
		t.Fatal(err)
	}
	samples := []sample{{shard: 0, op: "read", micros: 900}, {shard: 1, op: "read", micros: 800}}
	updates := []sample{{shard: 0, op: "update", micros: 2_000}, {shard: 1, op: "update", micros: 3_000}}
	for _, tc := range []struct {
		name string
		wall []float64
		want []CutBatch
	}{
		{"every shard finished", []float64{3, 4}, nil},
		{"one shard cut short", []float64{3, 0}, []CutBatch{{Stream: "batch", Iterations: 500}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			merged, err := Merge(streamsShardDocs(t, spec, 2, 6, samples, updates, tc.wall)...)
			if err != nil {
				t.Fatalf("Merge: %v", err)
			}
			if got := merged.CutBatches(); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("CutBatches() = %+v with shard wall times %v; want %+v", got, tc.wall, tc.want)
			}
			var table bytes.Buffer
			if err := WriteTable(&table, merged); err != nil {
				t.Fatal(err)
			}
			said := strings.Contains(table.String(), "its window ended before its 500 iterations did")
			if said != (tc.want != nil) {
				t.Errorf("the table says the batch was cut short: %v; want %v:\n%s", said, tc.want != nil, table.String())
			}
		})
	}
}
