package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/spanbench/spanbench/campaign/comparison"
	"github.com/spanbench/spanbench/campaign/plan"
	"github.com/spanbench/spanbench/campaign/stats"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
	"github.com/spanbench/spanbench/runner/protocol"
)

// TestBatchOnlineSampleComparesTheBatchAloneWithTheMix: the cells of
// config/samples/campaign-batch-online.yaml are what its comments promise,
// the batch stream alone (the patch removes the online stream by name) as
// the baseline, and the template's batch and online streams; the batch
// stream is the same in both, so only the online load differs, and it runs
// for the whole run, so that its throughput is its speed. With the
// sample's one repetition, its comparison of streams documents (their top
// level has no intervals) reads the batch stream's intervals and gives a
// verdict with an interval: Regressed when the mix slows the batch by
// 30 %, Neutral when it does not.
func TestBatchOnlineSampleComparesTheBatchAloneWithTheMix(t *testing.T) {
	c, cells, base := plannedSample(t, "campaign-batch-online.yaml")
	want := map[string][]string{"alone": {"batch"}, "mixed": {"batch", "online"}}
	if len(cells) != len(want) || cells[base].Name != "alone" {
		t.Fatalf("cells %d with baseline %q, want alone (the baseline) and mixed", len(cells), cells[base].Name)
	}
	var batch []string
	for _, cell := range cells {
		var names []string
		for _, s := range cell.Spec.Workload.Streams {
			names = append(names, s.Name)
			if s.Name == "batch" {
				batch = append(batch, s.Operations[0].Name)
				// Throughput is per measured second: a batch that ended
				// early would count its idle seconds, not its speed.
				if s.Iterations != nil || s.Load.Concurrency == nil || *s.Load.Concurrency != 1 {
					t.Errorf("cell %s: the batch stream is not one worker back to back for the whole run: %+v", cell.Name, s)
				}
			}
		}
		if !slices.Equal(names, want[cell.Name]) {
			t.Errorf("cell %s runs streams %v, want %v", cell.Name, names, want[cell.Name])
		}
	}
	if len(batch) != 2 || batch[0] != batch[1] {
		t.Errorf("the batch streams of the cells run %v, want the same operation in both", batch)
	}

	for _, tc := range []struct {
		name     string
		slowdown float64
		want     stats.Verdict
	}{{"the mix slows the batch by 30 %", 1.3, stats.Regressed}, {"the mix leaves the batch alone", 1, stats.Neutral}} {
		rng := rand.New(rand.NewPCG(25, 2))
		in := make([]comparison.Cell, len(cells))
		for i, cell := range cells {
			slow := 1.0
			if i != base {
				slow = tc.slowdown
			}
			in[i] = comparison.Cell{Name: cell.Name, Runs: []*result.Document{streamsDoc(t, rng, cell, slow)}}
		}
		table, err := comparison.Assemble(&c.Spec.Comparison, in, base)
		if err != nil {
			t.Fatal(err)
		}
		if len(table.Rows) != 2 {
			t.Fatalf("%s: %d rows, want throughput and p99 of cost-range: %+v", tc.name, len(table.Rows), table.Rows)
		}
		for _, r := range table.Rows {
			if c := r.Comparison; c.Verdict != tc.want || !c.HasInterval || c.Method != stats.MethodSectioning {
				t.Errorf("%s: %s is %s (%s), interval %v [%.3f, %.3f] by %q; want %s with a bootstrap interval",
					tc.name, r.Metric, c.Verdict, c.Reason, c.HasInterval, c.Lo, c.Hi, c.Method, tc.want)
			}
		}
	}
}

// streamsDoc is a finalized streams document of one run of cell, shaped
// like the runner writes one: a section per stream, each with its
// intervals, the top level without any. The batch stream runs one
// cost-range at a time (latency ≈ 50 ms × slow, so its throughput is
// ≈ 20/s ÷ slow); the online stream its 40 requests per second.
func streamsDoc(t *testing.T, rng *rand.Rand, cell plan.Cell, slow float64) *result.Document {
	t.Helper()
	raw, err := json.Marshal(cell.Spec.Workload)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := result.NewSpec(raw)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 29, 2, 0, 0, 0, time.UTC)
	step := cell.Spec.Workload.Interval.Duration
	n := int(cell.Spec.Workload.Duration.Duration / step)
	d := &result.Document{SchemaVersion: result.SchemaVersionStreams, Run: "batch-online-" + cell.Name, Spec: spec,
		Start: start, End: start.Add(time.Duration(n) * step), IntervalSeconds: step.Seconds()}
	for _, st := range cell.Spec.Workload.Streams {
		sec := result.StreamSection{Name: st.Name, Start: d.Start, End: d.End}
		for i := range n {
			in := result.Interval{Index: i}
			for _, op := range st.Operations {
				micros, count := 2000.0, 20*step.Seconds() // an online request
				if st.Name == "batch" {
					micros = 50_000 * slow
					count = step.Seconds() * 1e6 / micros
				}
				in.Operations = append(in.Operations, intervalOp(t, rng, op.Name, micros, int(count)))
			}
			sec.Intervals = append(sec.Intervals, in)
		}
		d.Streams = append(d.Streams, sec)
	}
	if err := result.Finalize(d); err != nil {
		t.Fatalf("cell %s: %v", cell.Name, err)
	}
	if len(d.Intervals) != 0 {
		t.Fatalf("cell %s: a streams document has %d top-level intervals, want none (what the comparison must not rely on)", cell.Name, len(d.Intervals))
	}
	return d
}

// intervalOp is count requests of op, latencies around micros (±10 %).
func intervalOp(t *testing.T, rng *rand.Rand, op string, micros float64, count int) result.IntervalOperation {
	t.Helper()
	h := histogram.New()
	for range count {
		if err := h.RecordValue(int64(micros * (0.9 + 0.2*rng.Float64()))); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := histogram.Encode(h)
	if err != nil {
		t.Fatal(fmt.Errorf("operation %s: %w", op, err))
	}
	return result.IntervalOperation{Name: op, Counts: result.Counts{OK: uint64(count)},
		Histograms: result.Histograms{LatencyHistogram: enc, ServiceHistogram: enc}}
}

// TestCompareComparesStreamsResultsPerStream: spanbench compare on the
// batch-online sample's streams results (one run per side, top level
// without intervals) sections the batch stream's own intervals, as the
// campaign comparison does, and calls a 30 % slower batch Regressed with
// an interval, not "zero on one side".
func TestCompareComparesStreamsResultsPerStream(t *testing.T) {
	_, cells, base := plannedSample(t, "campaign-batch-online.yaml")
	mixed := 1 - base
	rng := rand.New(rand.NewPCG(25, 3))
	dir := t.TempDir()
	write := func(cell plan.Cell, slow float64) string {
		d := streamsDoc(t, rng, cell, slow)
		// One runner and the resolved spec, as spanbench run records them.
		w := cell.Spec.Workload.Resolved()
		spec, err := protocol.RecordedSpec(&w)
		if err != nil {
			t.Fatal(err)
		}
		d.Spec = spec
		shard := result.Shard{Index: 0, Count: 1, Started: d.Start, Ended: d.End}
		d.Shards = []result.Shard{shard}
		for i := range d.Streams {
			d.Streams[i].Shards = []result.Shard{shard}
		}
		path := filepath.Join(dir, cell.Name+".json")
		if err := result.WriteFile(path, d); err != nil {
			t.Fatal(err)
		}
		return path
	}
	alone := write(cells[base], 1)
	// The same cell's spec on both sides: compare refuses results of
	// different workloads, and the batch stream is what is compared.
	slower := cells[base]
	slower.Name = "slower"
	code, out, stderr := runCLI(t, "compare", alone, write(slower, 1.3))
	if code != 0 {
		t.Fatalf("compare exited %d:\n%s", code, stderr)
	}
	batchOp := cells[mixed].Spec.Workload.Streams[0].Operations[0].Name
	for _, m := range []string{"p50 (µs)", "p99 (µs)"} {
		row := tableRow(t, out, "slower", batchOp+" "+m)
		if verdict(row) != "Regressed" || row[3] == "-" {
			t.Errorf("slower, %s %s: %v; want Regressed with an interval:\n%s", batchOp, m, row, out)
		}
	}
}
