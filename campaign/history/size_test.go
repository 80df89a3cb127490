package history

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/spanbench/spanbench/result/histogram"
)

// realisticEntry is a 6-cell × 6-operation iteration whose every
// operation recorded n latencies, lognormal around 5 ms with log-sd sd
// (a cell's operations differ in median), seeded by seed.
func realisticEntry(tb testing.TB, seed uint64, n int, sd float64) Entry {
	tb.Helper()
	return entryOf(tb, seed, 6, n, sd)
}

// entryOf is an entry of cells cells × 6 operations, as realisticEntry.
func entryOf(tb testing.TB, seed uint64, cells, n int, sd float64) Entry {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	var enc histogram.Encoder
	e := Entry{SchemaVersion: SchemaVersion, Iteration: fmt.Sprintf("nightly-%d", 1_700_000_000+seed*86400),
		ScheduledTime: time.Unix(int64(1_700_000_000+seed*86400), 0).UTC(), TemplateHash: "0123456789abcdef"}
	for c := range cells {
		cell := Cell{Name: fmt.Sprintf("cell-%d", c), Runs: 5}
		for o := range 6 {
			h := histogram.NewCompact()
			median := 2000 * float64(1+o)
			for range n {
				h.RecordValues(int64(median*math.Exp(sd*rng.NormFloat64())), 1)
			}
			b, err := enc.EncodeBinary(h)
			if err != nil {
				tb.Fatal(err)
			}
			cell.Operations = append(cell.Operations, Operation{Name: fmt.Sprintf("op-%d", o), OK: uint64(n), Errors: 3, NotFound: 1,
				Seconds: 600, Throughput: float64(n) / 600, Latency: histogram.SummarizeCompact(h), Histogram: b})
		}
		e.Cells = append(e.Cells, cell)
	}
	return e
}

// TestHistoryBudgetHolds90IterationsOf6CellsAnd6Operations measures the
// size of realistic entries and checks the stated budget: one entry far
// below MaxEntryBytes, and 90 nightly iterations of 6 cells × 6
// operations, each with the exact merged histogram, within MaxTotalBytes.
func TestHistoryBudgetHolds90IterationsOf6CellsAnd6Operations(t *testing.T) {
	for _, tc := range []struct {
		n  int
		sd float64
	}{{10_000, 0.5}, {30_000, 0.5}, {30_000, 1.0}, {100_000, 0.5}} {
		e := realisticEntry(t, 1, tc.n, tc.sd)
		b, err := Encode(e)
		if err != nil {
			t.Fatal(err)
		}
		var hist int
		for _, c := range e.Cells {
			for _, o := range c.Operations {
				hist += len(o.Histogram)
			}
		}
		t.Logf("%d samples/op, log-sd %.1f: entry %d B (histograms %d B, %d B each), 90 iterations %.2f MiB",
			tc.n, tc.sd, len(b), hist, hist/36, 90*float64(len(b))/(1<<20))
		if tc.n == 30_000 && tc.sd == 0.5 {
			if 90*len(b) > MaxTotalBytes {
				t.Errorf("90 entries of %d B exceed the history budget of %d B", len(b), MaxTotalBytes)
			}
		}
		if len(b) > MaxEntryBytes {
			t.Errorf("one entry is %d B, above MaxEntryBytes %d", len(b), MaxEntryBytes)
		}
	}
}

// BenchmarkEncodeDecodeEntry measures a 6 × 6 entry of 30,000-sample
// histograms: its encoded size and the time to encode and to decode it.
func BenchmarkEncodeDecodeEntry(b *testing.B) {
	e := realisticEntry(b, 1, 30_000, 0.5)
	enc, err := Encode(e)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encode", func(b *testing.B) {
		for b.Loop() {
			if _, err := Encode(e); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(enc)), "entry-bytes")
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Decode(enc); err != nil {
				b.Fatal(err)
			}
		}
	})
}
