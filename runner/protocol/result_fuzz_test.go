package protocol_test

import (
	"testing"
	"time"

	"github.com/spanbench/spanbench/internal/shardtest"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/protocol"
)

// FuzzDecodeResult: any bytes in a shard ConfigMap's result key decode
// within ResultBudget or are refused, and what decodes is checked and
// merged without a panic.
func FuzzDecodeResult(f *testing.F) {
	start := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	w := shardtest.Workload(2 * time.Second)
	valid, err := protocol.EncodeResult(shardtest.Shard("fuzz", w, start, 1, 2))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	for _, c := range shardtest.Hostile("fuzz", w, start, 1, 2) {
		f.Add(c.Result)
	}
	e, err := protocol.ResultExpectation("fuzz", &w, start, time.Minute, -1, 2)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := protocol.DecodeResult(b)
		if err != nil {
			return
		}
		m := result.NewCheckedMerger(e)
		if m.Add(d) == nil {
			if _, err := m.Result(); err != nil {
				t.Fatalf("a document the merger accepted does not finalize: %v", err)
			}
		}
	})
}
