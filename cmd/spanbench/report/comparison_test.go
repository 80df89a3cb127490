package report

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

const hostileVariant = `"><img src=x onerror=alert(1)>`

// sampleComparison is a campaign's table with every kind of row: with and
// without an interval, each verdict, and a hostile variant name.
func sampleComparison() Comparison {
	row := func(variant, metric, ratio, lo, hi string, v v1alpha1.CampaignVerdict) v1alpha1.ComparisonRow {
		r := v1alpha1.ComparisonRow{Variant: variant, Metric: metric, Baseline: "2000", Value: "2500", Ratio: ratio, Low: lo, High: hi, N: "5+5", Verdict: v}
		if lo != "" {
			r.Confidence, r.PValue = "96.8%", "0.0079"
		}
		return r
	}
	return Comparison{Campaign: "bench/nightly", Table: v1alpha1.ComparisonStatus{
		Iteration: "nightly-1700000000", Baseline: "tokyo", Verdict: v1alpha1.VerdictRegressed, OmittedRows: 2,
		Rows: []v1alpha1.ComparisonRow{
			row("asia1", "commit p99 µs", "1.300", "1.210", "1.420", v1alpha1.VerdictRegressed),
			row("asia1", "commit ops/s", "0.990", "0.950", "1.030", v1alpha1.VerdictNeutral),
			row("asia1", "commit errors %", "2.000", "", "", v1alpha1.VerdictInconclusive),
			row(hostileVariant, "read p50 µs", "0.800", "0.700", "0.900", v1alpha1.VerdictImproved),
		},
	}}
}

func renderComparison(t *testing.T, c Comparison) (string, *html.Node) {
	t.Helper()
	var b bytes.Buffer
	if err := WriteComparisonHTML(&b, c); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return b.String(), doc
}

// filled counts the paths of an SVG filled with colour (#rrggbb).
func filled(n *html.Node, colour string) int {
	count := 0
	walk(n, func(m *html.Node) {
		if m.Type == html.ElementNode && m.Data == "path" && strings.Contains(strings.ToLower(attr(m, "style")), "fill:"+colour) {
			count++
		}
	})
	return count
}

func TestComparisonPageDrawsRatioBarsPerVariant(t *testing.T) {
	out, doc := renderComparison(t, sampleComparison())
	var bars []*html.Node
	walk(doc, func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "figure" && attr(n, "data-plot") == "ratio" {
			bars = append(bars, n)
		}
	})
	if len(bars) != 2 || attr(bars[0], "data-variant") != "asia1" || attr(bars[1], "data-variant") != hostileVariant {
		t.Fatalf("%d ratio plots; want one per variant, asia1 then the hostile one", len(bars))
	}
	asia := bars[0]
	for colour, want := range map[string]int{"#d62728": 1, "#999999": 1, "#ff7f0e": 1, "#2ca02c": 0} {
		if got := filled(asia, colour); got != want {
			t.Errorf("asia1's plot has %d bars filled %s, want %d (one bar per row, coloured by verdict)", got, colour, want)
		}
	}
	if got := texts(asia); !containsString(got, "commit p99 µs") || !containsString(got, "asia1 / tokyo") {
		t.Errorf("asia1's plot texts %q lack its metric names or its title", got)
	}
	if filled(bars[1], "#2ca02c") != 1 {
		t.Error("the improved row of the second variant draws no green bar")
	}
	walk(doc, func(n *html.Node) {
		if n.Type == html.ElementNode && (n.Data == "img" || n.Data == "script") {
			t.Errorf("the page has a <%s> element: the variant name was not escaped", n.Data)
		}
	})
	for _, want := range []string{"<h2>Campaign bench/nightly: Regressed</h2>", "[1.210, 1.420] @96.8%", "2 more row(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(out, `class="distributions"`) || strings.Contains(out, `class="run"`) {
		t.Error("a comparison page shows run sections")
	}
}

// The interval's whiskers span exactly low to high: with the bar at the
// ratio, a plot without them would claim a certainty the table denies.
func TestComparisonPlotDrawsIntervalsOnlyWhereTheTableHasThem(t *testing.T) {
	c := sampleComparison()
	c.Table.Rows = c.Table.Rows[2:3] // no interval
	_, none := renderComparison(t, c)
	c = sampleComparison()
	c.Table.Rows = c.Table.Rows[:1]
	_, one := renderComparison(t, c)
	// gonum draws an error bar as three strokes: the line and two caps.
	if a, b := whiskers(none), whiskers(one); a != 0 || b != 3 {
		t.Errorf("a row without an interval draws %d whisker strokes, one with an interval %d; want 0 and 3 (line and caps)", a, b)
	}
}

// whiskers counts the strokes drawn at the intervals' width.
func whiskers(n *html.Node) int {
	count := 0
	walk(n, func(m *html.Node) {
		if m.Type == html.ElementNode && m.Data == "path" && strings.HasSuffix(attr(m, "style"), "stroke-width:2") {
			count++
		}
	})
	return count
}

func TestComparisonPageRefusesAnEmptyTable(t *testing.T) {
	if err := WriteComparisonHTML(&bytes.Buffer{}, Comparison{Campaign: "c"}); err == nil {
		t.Error("an empty comparison rendered a page")
	}
}

func TestPlainTicksCarryNoFloatingPointNoise(t *testing.T) {
	for _, tick := range plainTicks(0, 1.26) {
		if len(tick.Label) > 4 {
			t.Errorf("tick %v is labelled %q; want a short decimal", tick.Value, tick.Label)
		}
	}
}
