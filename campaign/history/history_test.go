package history

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/comparison"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
)

var t0 = time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)

// runDoc is a finalized result of one run: 12 one-second intervals of
// 300 reads (2 not found, 1 error each), lognormal latency × scale.
func runDoc(t *testing.T, name string, seed uint64, scale float64) *result.Document {
	t.Helper()
	spec, err := result.NewSpec([]byte(`{"type":"YCSB","operations":[{"name":"read","type":"Read","weight":1}],` +
		`"load":{"rate":300},"duration":"12s","warmUp":{"mode":"None"}}`))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	d := &result.Document{SchemaVersion: result.SchemaVersion, Run: name, Spec: spec, Start: t0, End: t0.Add(12 * time.Second), IntervalSeconds: 1}
	for i := range 12 {
		h := histogram.New()
		for range 300 {
			_ = h.RecordValue(int64(2000 * scale * (1 + 0.3*rng.ExpFloat64())))
		}
		enc, err := histogram.Encode(h)
		if err != nil {
			t.Fatal(err)
		}
		d.Intervals = append(d.Intervals, result.Interval{Index: i, TargetRate: 300, Operations: []result.IntervalOperation{{Name: "read",
			Counts: result.Counts{OK: 300, NotFound: 2, Errors: map[string]uint64{"Unavailable": 1}}, Histograms: result.Histograms{LatencyHistogram: enc}}}})
	}
	if err := result.Finalize(d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestSummaryFiguresAreTheComparisonTablesFigures: a cell's summary holds
// the counts of all its runs and the very p50, p99 and throughput the
// comparison table shows for it (one pooling rule), and a histogram
// holding every successful request.
func TestSummaryFiguresAreTheComparisonTablesFigures(t *testing.T) {
	cells := []comparison.Cell{
		{Name: "base", Runs: []*result.Document{runDoc(t, "b1", 1, 1), runDoc(t, "b2", 2, 1)}},
		{Name: "slow", Runs: []*result.Document{runDoc(t, "s1", 3, 1.4), runDoc(t, "s2", 4, 1.4)}},
	}
	spec := &v1alpha1.ComparisonSpec{}
	table, err := comparison.Assemble(spec, cells, 0)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Summarize("it-1", t0, "hash", cells)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, row := range table.Rows {
		for _, m := range spec.EffectiveMetrics() {
			if comparison.MetricName("read", m.Statistic) != row.Metric {
				continue
			}
			for cell, want := range map[string]float64{"base": row.Baseline, "slow": row.Value} {
				op, ok := e.Find(cell, "read")
				if !ok {
					t.Fatalf("no %s/read in %+v", cell, e)
				}
				got, err := comparison.Value(m.Statistic, comparison.Figures{Throughput: op.Throughput, Latency: op.Latency, OK: op.OK, Failed: op.Errors})
				if err != nil || got != want {
					t.Errorf("%s %s: summary %g (%v), table %g", cell, row.Metric, got, err, want)
				}
				checked++
			}
		}
	}
	if checked != 6 {
		t.Errorf("compared %d figures, want p50, p99 and ops/s of both cells: 6", checked)
	}
	op, _ := e.Find("slow", "read")
	if op.OK != 2*12*300 || op.NotFound != 2*12*2 || op.Errors != 2*12 || op.Seconds != 24 || e.Cells[1].Runs != 2 {
		t.Errorf("slow/read counts %+v, runs %d; want 7200 ok, 48 not found, 24 errors over 24 s of 2 runs", op, e.Cells[1].Runs)
	}
	h := histogram.NewCompact()
	var dec histogram.Decoder
	if err := dec.AddBinaryTo(h, op.Histogram); err != nil || h.TotalCount() != 7200 || histogram.SummarizeCompact(h) != op.Latency {
		t.Errorf("histogram of %d values (%v), summary %+v; want the 7200 successes, summarised as %+v", h.TotalCount(), err, histogram.SummarizeCompact(h), op.Latency)
	}
}

// summarized is the entry of cells' iteration as a reader gets it back:
// summarized, encoded and decoded.
func summarized(t *testing.T, cells []comparison.Cell) Entry {
	t.Helper()
	e, err := Summarize("it-1", t0, "hash", cells)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Encode(e)
	if err != nil {
		t.Fatal(err)
	}
	if e, err = Decode(b); err != nil {
		t.Fatalf("the entry does not decode: %v", err)
	}
	return e
}
