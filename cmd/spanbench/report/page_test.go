package report

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/spanbench/spanbench/result/histogram"
)

// render writes the page of runs and parses it as a browser would.
func render(t *testing.T, runs ...Run) (string, *html.Node) {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHTML(&b, runs...); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return b.String(), doc
}

func docRun(t *testing.T, r testRun) Run {
	d := r.document(t)
	return Run{Label: d.Run, Doc: d}
}

// walk calls fn for n and every node under it.
func walk(n *html.Node, fn func(*html.Node)) {
	fn(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// hasAttr reports whether n carries the attribute key, even empty.
func hasAttr(n *html.Node, key string) bool {
	return slices.ContainsFunc(n.Attr, func(a html.Attribute) bool { return a.Key == key })
}

// panelOperations are the operations a figure's panels name (their data
// areas' data-operation), in order.
func panelOperations(n *html.Node) []string {
	var out []string
	walk(n, func(m *html.Node) {
		if m.Type == html.ElementNode && m.Data == "rect" && attr(m, "class") == "data-area" {
			out = append(out, attr(m, "data-operation"))
		}
	})
	return out
}

// legendLabels are the labels of a figure's legend, in order.
func legendLabels(n *html.Node) []string {
	var out []string
	walk(n, func(m *html.Node) {
		if m.Type == html.ElementNode && m.Data == "li" {
			var b strings.Builder
			walk(m, func(t *html.Node) {
				if t.Type == html.TextNode {
					b.WriteString(t.Data)
				}
			})
			out = append(out, strings.TrimSpace(b.String()))
		}
	})
	return out
}

// figures are the page's plots by their data-plot and data-operation.
func figures(doc *html.Node) map[string][]*html.Node {
	out := map[string][]*html.Node{}
	walk(doc, func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "figure" {
			key := strings.TrimSpace(attr(n, "data-plot") + " " + attr(n, "data-operation"))
			out[key] = append(out[key], n)
		}
	})
	return out
}

// texts collects the text of every <text> element of an SVG.
func texts(n *html.Node) []string {
	var out []string
	walk(n, func(m *html.Node) {
		if m.Type == html.ElementNode && m.Data == "text" && m.FirstChild != nil {
			out = append(out, m.FirstChild.Data)
		}
	})
	return out
}

// dataLines counts the paths of at least 10 points: the data lines.
func dataLines(n *html.Node) int {
	lines := 0
	walk(n, func(m *html.Node) {
		if m.Type == html.ElementNode && m.Data == "path" && strings.Count(attr(m, "d"), "L")+1 >= 10 {
			lines++
		}
	})
	return lines
}

// TestHostileNamesAreEscaped: run, operation and host names and notes come
// from users; none may become markup, in the page or in a plot.
func TestHostileNamesAreEscaped(t *testing.T) {
	const script = `<script>alert(1)</script>`
	const img = `"><img src=x onerror=alert(1)>`
	r := docRun(t, warmingRun(script, "read", img))
	r.Label = script + img
	r.Doc.Notes = []string{img}
	r.Doc.Target.Database = script
	out, doc := render(t, r)

	walk(doc, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		if n.Data == "script" || n.Data == "img" {
			t.Errorf("the page has a <%s> element: a name was not escaped", n.Data)
		}
		for _, a := range n.Attr {
			if strings.HasPrefix(a.Key, "on") || a.Key == "src" || a.Key == "href" {
				t.Errorf("<%s> has attribute %s=%q: a name was not escaped", n.Data, a.Key, a.Val)
			}
		}
	})
	if !strings.Contains(out, "&lt;img src=x onerror=alert(1)&gt;") {
		t.Error("the hostile operation name is not shown, escaped, as text")
	}
	lat := figures(doc)["latency"][0]
	if got := texts(lat); !containsString(got, img) {
		t.Errorf("the latency panels' texts %q lack the operation's name as a panel title, as text", got)
	}
	if got := panelOperations(lat); !containsString(got, img) {
		t.Errorf("the latency panels are of operations %q; want the hostile name, as an attribute's text", got)
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// warmUpShades counts the paths filled with the warm-up colour.
func warmUpShades(n *html.Node) int {
	shades := 0
	walk(n, func(m *html.Node) {
		if m.Type == html.ElementNode && m.Data == "path" && strings.Contains(strings.ToLower(attr(m, "style")), "fill:#ffe4b5") {
			shades++
		}
	})
	return shades
}

// TestWarmUpIsShadedInEveryTimePlot: the time plots shade the warm-up
// (the throughput plot once, each latency panel once) and name it in
// their legends when the run had one, and only then.
func TestWarmUpIsShadedInEveryTimePlot(t *testing.T) {
	warm := docRun(t, warmingRun("warm", "read", "update"))
	if warm.Doc.WarmUp.Intervals == 0 {
		t.Fatal("the generated run has no warm-up; the test needs one")
	}
	none := warmingRun("cold", "read", "update")
	none.warmUp = ""
	for _, tc := range []struct {
		run    Run
		shaded bool
	}{{warm, true}, {docRun(t, none), false}} {
		_, doc := render(t, tc.run)
		for key, panels := range map[string]int{"throughput": 1, "latency": 2} {
			fig := figures(doc)[key]
			if len(fig) != 1 {
				t.Fatalf("%s: %d %q plots, want 1", tc.run.Label, len(fig), key)
			}
			legend := slices.ContainsFunc(legendLabels(fig[0]), func(l string) bool { return strings.HasPrefix(l, "warm-up") })
			if want := map[bool]int{true: panels, false: 0}[tc.shaded]; warmUpShades(fig[0]) != want || legend != tc.shaded {
				t.Errorf("%s, %s plot: %d warm-up shades (want %d: one per panel), legend entry %v (want %v)",
					tc.run.Label, key, warmUpShades(fig[0]), want, legend, tc.shaded)
			}
		}
	}
}

// TestSeveralRunsAreOverlaidInThePercentilePlots: each operation's
// percentile panel draws every run (latency and service time), named in
// the legend, while each run keeps its own section and time plots.
func TestSeveralRunsAreOverlaidInThePercentilePlots(t *testing.T) {
	b := warmingRun("b", "read", "update")
	b.baseMicros, b.seed = 6000, 9
	runs := []Run{docRun(t, warmingRun("a", "read", "update")), docRun(t, b)}
	_, doc := render(t, runs...)
	figs := figures(doc)
	fig := figs["distribution"]
	if len(fig) != 1 {
		t.Fatalf("%d percentile figures, want 1 with a panel per operation", len(fig))
	}
	if got := panelOperations(fig[0]); !slices.Equal(got, []string{"read", "update"}) {
		t.Errorf("the percentile panels are of %q, want read and update", got)
	}
	if n := dataLines(fig[0]); n != 8 {
		t.Errorf("the percentile panels draw %d lines, want 8 (2 operations x 2 runs x latency and service time)", n)
	}
	want := []string{"a latency", "a service time", "b latency", "b service time"}
	if got := legendLabels(fig[0]); !slices.Equal(got, want) {
		t.Errorf("the percentile legend is %q, want %q", got, want)
	}
	if n := len(figs["latency"]); n != 2 {
		t.Errorf("%d latency-over-time figures, want one per run", n)
	}
	if n := len(figs["throughput"]); n != 2 {
		t.Errorf("%d throughput plots, want one per run", n)
	}
}

// TestTimePlotsComputeQuantilesFromHistograms: the p50/p99 fields an
// interval stores are derived data a file may get wrong; the plots
// read the histograms.
func TestTimePlotsComputeQuantilesFromHistograms(t *testing.T) {
	r := docRun(t, warmingRun("r", "read"))
	before, _ := render(t, r)
	for i := range r.Doc.Intervals {
		for j := range r.Doc.Intervals[i].Operations {
			op := &r.Doc.Intervals[i].Operations[j]
			op.P50, op.P99, op.Max = 1e9, 2e9, 3e9
		}
	}
	after, _ := render(t, r)
	if before != after {
		t.Error("changing the intervals' stored p50/p99 changed the page: quantiles must come from the histograms")
	}
}

// TestQuantileCurveEndsAtTheMaximum: a curve spans the decades of 1/(1-q)
// its values resolve and ends at the histogram's maximum.
func TestQuantileCurveEndsAtTheMaximum(t *testing.T) {
	h := histogram.New()
	for v := int64(1); v <= 1000; v++ {
		_ = h.RecordValue(v * 1000) // 1 ms .. 1 s
	}
	c := quantileCurve(h)
	last := c[len(c)-1]
	if last.X != 1000 || last.Y != float64(h.Max())/1000 {
		t.Errorf("the curve ends at (%v, %v ms), want (1000, the max %v ms)", last.X, last.Y, float64(h.Max())/1000)
	}
	p99 := c[2*pointsPerDecade]
	if math.Abs(p99.X-100) > 1e-9 || math.Abs(p99.Y-990) > 1 {
		t.Errorf("the point at x=100 is (%v, %v ms), want p99 = 990 ms", p99.X, p99.Y)
	}
	if c[0].X != 1 || c[0].Y > 1.001 {
		t.Errorf("the curve starts at (%v, %v ms), want (1, the minimum 1 ms)", c[0].X, c[0].Y)
	}
}

func TestPercentileLabels(t *testing.T) {
	want := []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%"}
	for _, tick := range percentileTicks(1, 1e5) {
		k := int(math.Round(math.Log10(tick.Value)))
		if tick.Label != want[k] {
			t.Errorf("tick at %v labelled %q, want %q", tick.Value, tick.Label, want[k])
		}
	}
	if n := len(percentileTicks(1, 1e5)); n != len(want) {
		t.Errorf("%d ticks from 1 to 1e5, want %d", n, len(want))
	}
}
