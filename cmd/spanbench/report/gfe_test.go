package report

import (
	"strings"
	"testing"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
)

// TestGFEColumnsAppearOnlyWhenAnOperationHasThem: the summary table gets
// GFE p50 and p99 columns when some operation's responses carried the
// GFE's timing ("n/a" for those without); otherwise the page says the GFE
// latency is not available, and why, instead of showing zeros.
func TestGFEColumnsAppearOnlyWhenAnOperationHasThem(t *testing.T) {
	r := docRun(t, warmingRun("ladder", "read", "update"))
	r.Doc.Target.Endpoint = "spanner"
	r.Doc.Totals[0].GFELatency = &histogram.Summary{Count: 10, P50: 4200, P99: 9100}
	out, _ := render(t, r)
	for _, want := range []string{"<th>GFE p50</th><th>GFE p99</th>", "<td>4.2ms</td><td>9.1ms</td>", "<td>n/a</td><td>n/a</td>"} {
		if !strings.Contains(out, want) {
			t.Errorf("the page lacks %q though an operation has a GFE latency", want)
		}
	}

	r.Doc.Totals[0].GFELatency = nil
	r.Doc.Target.Endpoint = "emulator"
	out, _ = render(t, r)
	if strings.Contains(out, "GFE p50") || !strings.Contains(out, result.GFEUnavailableEmulator) {
		t.Errorf("no operation has a GFE latency on the emulator: the page should have no GFE columns and say %q", result.GFEUnavailableEmulator)
	}
}
