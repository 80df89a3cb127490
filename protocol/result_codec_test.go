package protocol

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/spanbench/spanbench/load/histogram"
	"github.com/spanbench/spanbench/load/result"
)

// bigResult is a long run's result: intervals of 1 s, two operations, each
// interval's histograms full of distinct random latencies (which compress
// badly), finalized like a runner's.
func bigResult(t *testing.T, intervals int) *result.Document {
	t.Helper()
	spec := ycsb(1000, time.Duration(intervals)*time.Second, readOp, updateOp)
	start := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	recorded, err := RecordedSpec(&spec)
	if err != nil {
		t.Fatal(err)
	}
	d := &result.Document{SchemaVersion: result.SchemaVersion, Run: "long", Spec: recorded, Start: start,
		End: start.Add(time.Duration(intervals) * time.Second), IntervalSeconds: 1, Shards: []result.Shard{{Index: 0, Count: 1}}}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range intervals {
		in := result.Interval{Index: i, TargetRate: 200}
		for _, op := range spec.Operations {
			lat, svc := histogram.New(), histogram.New()
			for range 400 {
				v := 1 + rng.Int64N(2_000_000)
				_ = lat.RecordValue(v)
				_ = svc.RecordValue(v / 2)
			}
			io, err := result.NewIntervalOperation(op.Name, result.Counts{OK: uint64(lat.TotalCount())}, lat, svc, histogram.New())
			if err != nil {
				t.Fatal(err)
			}
			in.Operations = append(in.Operations, io)
		}
		d.Intervals = append(d.Intervals, in)
	}
	if err := result.Finalize(d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestEncodeResultCoarsensAResultTooLargeForAConfigMap: a result over the
// ConfigMap budget is stored with coarser intervals, exact totals and a
// note, rather than lost at the end of a long, paid-for run.
func TestEncodeResultCoarsensAResultTooLargeForAConfigMap(t *testing.T) {
	d := bigResult(t, 1000)
	if _, err := compress(d); !tooLarge(err) {
		t.Fatalf("the fixture fits a ConfigMap (err %v); it must not, for this test to mean anything", err)
	}
	b, err := EncodeResult(d)
	if err != nil {
		t.Fatalf("EncodeResult refused a result it could coarsen: %v", err)
	}
	got, err := DecodeResult(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.IntervalSeconds <= 1 || len(got.Notes) == 0 || !strings.Contains(got.Notes[len(got.Notes)-1], "coarsened from 1s") {
		t.Errorf("stored %gs intervals with notes %q; want coarser ones and a note saying so", got.IntervalSeconds, got.Notes)
	}
	if got.Overall.OK != d.Overall.OK || got.Overall.Latency != d.Overall.Latency {
		t.Errorf("overall after coarsening: %d ops, %+v; want exactly %d ops, %+v", got.Overall.OK, got.Overall.Latency, d.Overall.OK, d.Overall.Latency)
	}
	if d.IntervalSeconds != 1 || len(d.Intervals) != 1000 {
		t.Errorf("EncodeResult changed its input: %d intervals of %gs", len(d.Intervals), d.IntervalSeconds)
	}
}
