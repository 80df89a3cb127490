package result

import (
	"strings"
	"testing"

	"github.com/spanbench/spanbench/result/histogram"
)

// TestTheTableShowsGFEColumnsOnlyWhenThereAreAny: the GFE p50 and p99
// columns appear when an operation has a GFE latency ("n/a" for one
// without); otherwise the table says why there is none, never zeros.
func TestTheTableShowsGFEColumnsOnlyWhenThereAreAny(t *testing.T) {
	d := &Document{Run: "r", Target: Target{Endpoint: "spanner"}, Totals: []Operation{
		{Name: "read", Counts: Counts{OK: 10}, Latency: histogram.Summary{Count: 10, P50: 6100, P99: 12000},
			GFELatency: &histogram.Summary{Count: 10, P50: 4200, P99: 9100}},
		{Name: "update", Counts: Counts{OK: 5}, Latency: histogram.Summary{Count: 5, P50: 6100, P99: 12000}},
	}, Overall: Operation{Name: "overall"}}
	var b strings.Builder
	if err := WriteTable(&b, d); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.Contains(lines[1], "GFE p50") || !strings.Contains(lines[1], "GFE p99") {
		t.Errorf("an operation has a GFE latency, but the header has no GFE columns:\n%s", b.String())
	}
	if f, g := strings.Fields(lines[2]), strings.Fields(lines[3]); strings.Join(f[len(f)-2:], " ") != "4.2ms 9.1ms" || strings.Join(g[len(g)-2:], " ") != "n/a n/a" {
		t.Errorf("read's GFE p50/p99 should read 4.2ms 9.1ms and update's n/a:\n%s", b.String())
	}

	for _, c := range []struct{ endpoint, want string }{{"emulator", GFEUnavailableEmulator}, {"spanner", GFEUnavailable}} {
		d.Target.Endpoint, d.Totals[0].GFELatency = c.endpoint, nil
		b.Reset()
		if err := WriteTable(&b, d); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), "GFE p50") || !strings.Contains(b.String(), c.want) {
			t.Errorf("no GFE latency on %s: the table should have no GFE columns and say %q:\n%s", c.endpoint, c.want, b.String())
		}
	}
}
