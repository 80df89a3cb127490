package pod

import (
	"testing"
	"time"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
	"github.com/spanbench/spanbench/runner/protocol"
)

// interval k of two operations: read succeeds 10 times at k+1 ms, write
// fails twice.
func testInterval(t *testing.T, k int) result.Interval {
	t.Helper()
	h := histogram.NewCompact()
	h.RecordValues(int64(k+1)*1000, 10)
	var enc histogram.Encoder
	s, err := enc.Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	return result.Interval{Index: k, Operations: []result.IntervalOperation{
		{Name: "read", Counts: result.Counts{OK: 10}, Histograms: result.Histograms{LatencyHistogram: s}},
		{Name: "write", Counts: result.Counts{Errors: map[string]uint64{"Aborted": 2}}},
	}}
}

// TestLiveReporterReportsEachLivePeriodExactly: with 1 s intervals the
// runner reports every tenth interval (9, 19, ...) only, with the counts
// of every interval so far and the latency of the reported interval alone; a
// report the writer has not taken yet is replaced by the newer one, never
// queued behind it.
func TestLiveReporterReportsEachLivePeriodExactly(t *testing.T) {
	start := time.Date(2026, 11, 24, 1, 2, 3, 0, time.UTC)
	l := newLiveReporter(start, time.Second)
	for k := range 15 {
		l.drained(testInterval(t, k))
	}
	var rep protocol.LiveReport
	select { // drained hands its report over before it returns
	case rep = <-l.latest:
	default:
		t.Fatal("no report after interval 14")
	}
	if rep.Interval != 9 || rep.Operations != 120 || rep.Errors != 20 || rep.IntervalOperations != 12 || !rep.Start.Equal(start) {
		t.Errorf("report after interval 14: %+v; want interval 9, 120 operations, 20 errors, 12 in the interval", rep)
	}
	var dec histogram.Decoder
	h, err := dec.Decode(rep.Latency)
	if err != nil || h.TotalCount() != 10 || h.Max() < 9_900 || h.Max() > 10_100 {
		t.Errorf("interval 9's latency: %v, %v; want its 10 reads at 10 ms alone", h, err)
	}
	for k := 15; k < 40; k++ {
		l.drained(testInterval(t, k))
	}
	select {
	case rep = <-l.latest:
	default:
		t.Fatal("no report after interval 39")
	}
	if rep.Interval != 39 || rep.Operations != 480 {
		t.Errorf("the report waiting after intervals 19, 29 and 39: %+v; want only the newest, 39, with 480 operations", rep)
	}
	select {
	case old := <-l.latest:
		t.Errorf("a second report waited behind the newest: %+v", old)
	default:
	}
	if _, err := protocol.EncodeLiveReport(rep); err != nil {
		t.Errorf("the report does not encode: %v", err)
	}
}
