package benchmarkrun

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
)

// TestStatusCarriesGFELatencyOrSaysWhyNot: an operation whose responses
// carried the GFE's timing gets its p50, p99 and count in the status; one
// that did not says "not available", on the emulator that it is the
// emulator, and never shows a zero.
func TestStatusCarriesGFELatencyOrSaysWhyNot(t *testing.T) {
	gfe := &histogram.Summary{Count: 90, P50: 4200, P99: 9100}
	doc := &result.Document{Target: result.Target{Endpoint: "spanner"}, Totals: []result.Operation{
		{Name: "read", Counts: result.Counts{OK: 100}, Latency: histogram.Summary{Count: 100, P50: 6000, P99: 12000}, GFELatency: gfe},
		{Name: "update", Counts: result.Counts{OK: 10}, Latency: histogram.Summary{Count: 10, P50: 6000, P99: 12000}},
	}}
	run := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "ladder"}}
	var status v1alpha1.BenchmarkRunStatus
	applyResult(&status, doc, run)
	got := map[string]*v1alpha1.GFELatency{}
	for _, op := range status.Operations {
		got[op.Name] = op.GFELatency
	}
	want := &v1alpha1.GFELatency{Count: 90, P50: &metav1.Duration{Duration: 4200 * time.Microsecond}, P99: &metav1.Duration{Duration: 9100 * time.Microsecond}}
	if g := got["read"]; g == nil || g.Count != want.Count || *g.P50 != *want.P50 || *g.P99 != *want.P99 || g.NotAvailable != "" {
		t.Errorf("read's GFE latency in the status is %+v, want %+v", g, want)
	}
	if g := got["update"]; g == nil || g.P50 != nil || g.P99 != nil || g.NotAvailable != result.GFEUnavailable {
		t.Errorf("update carried no GFE timing; its status says %+v, want no percentiles and %q", g, result.GFEUnavailable)
	}
	doc.Target.Endpoint = "emulator"
	doc.Totals[0].GFELatency = nil
	applyResult(&status, doc, run)
	for _, op := range status.Operations {
		if g := op.GFELatency; g == nil || g.P99 != nil || g.NotAvailable != result.GFEUnavailableEmulator {
			t.Errorf("%s on the emulator: status says %+v, want %q", op.Name, g, result.GFEUnavailableEmulator)
		}
	}
}
