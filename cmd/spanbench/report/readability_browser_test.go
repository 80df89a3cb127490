package report

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// figureLayout is one figure as Chromium lays it out: boxes in page
// pixels, colours as the browser computed them.
type figureLayout struct {
	Kind string `json:"kind"`
	Run  string `json:"run"`
	// Chart is the plot's SVG; Areas are its panels' data areas (the
	// rect.data-area each plot marks), with their operations.
	Chart box   `json:"chart"`
	Areas []box `json:"areas"`
	// Legend is the figure's legend (nil without one), Entries its items.
	Legend  *box          `json:"legend"`
	Entries []legendShown `json:"entries"`
	// Painted are the colours the chart's paths are filled or stroked with.
	Painted []string `json:"painted"`
	// Lines are the chart's stroked paths of several points.
	Lines []lineShown `json:"lines"`
	// Viewport is the page's width.
	Viewport float64 `json:"viewport"`
}

type box struct {
	X         float64 `json:"x"`
	Y         float64 `json:"y"`
	W         float64 `json:"w"`
	H         float64 `json:"h"`
	Operation string  `json:"operation"`
	// SVGHeight is a data area's height in the chart's own units.
	SVGHeight float64 `json:"svgHeight"`
}

// overlaps reports whether two boxes share an area of more than a pixel.
func (a box) overlaps(b box) bool {
	w := math.Min(a.X+a.W, b.X+b.W) - math.Max(a.X, b.X)
	h := math.Min(a.Y+a.H, b.Y+b.H) - math.Max(a.Y, b.Y)
	return w > 1 && h > 1
}

type legendShown struct {
	Label  string `json:"label"`
	Series bool   `json:"series"`
	Color  string `json:"color"`
	Dash   string `json:"dash"`
}

type lineShown struct {
	Stroke string  `json:"stroke"`
	Dashed bool    `json:"dashed"`
	Points int     `json:"points"`
	LastY  float64 `json:"lastY"`
}

const measureFigures = `Array.from(document.querySelectorAll('figure.plot')).map(f => {
  const box = e => { const r = e.getBoundingClientRect(); return {x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: r.height}; };
  const chart = f.querySelector('svg.chart');
  const legend = f.querySelector('ul.legend');
  const areas = chart ? Array.from(chart.querySelectorAll('rect.data-area')).map(a =>
    Object.assign(box(a), {operation: a.dataset.operation || '', svgHeight: parseFloat(a.getAttribute('height'))})) : [];
  const entries = legend ? Array.from(legend.querySelectorAll('li')).map(li => {
    const mark = li.querySelector('svg.swatch > *');
    const edge = li.querySelector('svg.swatch > line[stroke-dasharray]');
    const cs = getComputedStyle(mark);
    return {label: li.textContent.trim(), series: li.hasAttribute('data-series'),
            color: mark.tagName === 'line' ? cs.stroke : cs.fill, dash: edge ? edge.getAttribute('stroke-dasharray') : ''};
  }) : [];
  const painted = new Set(), lines = [];
  for (const p of (chart ? chart.querySelectorAll('path') : [])) {
    const cs = getComputedStyle(p);
    if (cs.fill !== 'none') painted.add(cs.fill);
    if (cs.stroke === 'none') continue;
    painted.add(cs.stroke);
    const pts = (p.getAttribute('d') || '').match(/[ML][^MLZ]*/g) || [];
    if (pts.length < 3) continue;
    lines.push({stroke: cs.stroke, dashed: cs.strokeDasharray !== 'none', points: pts.length,
                lastY: parseFloat(pts[pts.length - 1].slice(1).split(',')[1])});
  }
  const run = f.closest('section.run');
  return {kind: f.dataset.plot, run: run ? run.dataset.run : '', chart: chart ? box(chart) : null, areas: areas,
          legend: legend ? box(legend) : null, entries: entries, painted: Array.from(painted), lines: lines,
          viewport: document.documentElement.clientWidth};
})`

// TestPlotsStayReadableInChromium renders a run of one and of ten
// operations and reads, from the page as headless Chromium lays it out,
// what makes a page of many operations readable (issue: ten lines bunched
// at a tenth of the target, colours repeated, legends over the data, ten
// full-height latency plots):
//   - every legend is beside its plot: it overlaps no panel's data area,
//     and it is within the page;
//   - the throughput plot shows the total achieved against the target: a
//     solid black line whose end is within 10 % of the plot's height of
//     the dashed target's (the generated run achieves its target), and a
//     band per operation, each in a colour the legend names, painted in
//     the chart, and clearly distinct from every other (CIE76 ΔE ≥ 20);
//     operations beyond the eighth also differ by their edge's dashes;
//   - the latency plots are small multiples: one panel per operation, on
//     one time axis (the panels of a column share their left edge and
//     width), ten of them in two columns no higher than four full-size
//     plots, where ten full-size plots were ten times one.
//
// The screenshots (ten.png, one.png) are artefacts, as for
// TestReportInChromium.
func TestPlotsStayReadableInChromium(t *testing.T) {
	for _, tc := range []struct {
		name string
		ops  int
	}{{"one", 1}, {"ten", 10}} {
		t.Run(tc.name, func(t *testing.T) {
			var ops []string
			for i := range tc.ops {
				ops = append(ops, fmt.Sprintf("operation-%02d", i+1))
			}
			run := docRun(t, warmingRun(tc.name, ops...))
			var page bytes.Buffer
			if err := WriteHTML(&page, run); err != nil {
				t.Fatal(err)
			}
			figures := browsePage(t, page.Bytes(), tc.name).figures
			byKind := map[string]figureLayout{}
			for _, f := range figures {
				checkLegendBeside(t, f)
				byKind[f.Kind] = f
			}
			checkThroughput(t, byKind["throughput"], ops)
			checkLatencyPanels(t, byKind["latency"], byKind["throughput"], ops)
		})
	}
}

// checkLegendBeside wants f's legend laid out, inside the page and clear
// of every data area of its plot.
func checkLegendBeside(t *testing.T, f figureLayout) {
	t.Helper()
	if f.Legend == nil {
		t.Errorf("the %s plot has no legend", f.Kind)
		return
	}
	l := *f.Legend
	if l.W < 20 || l.H < 10 || l.X < 0 || l.X+l.W > f.Viewport+0.5 {
		t.Errorf("the %s plot's legend is %.0fx%.0f px at x=%.0f in a %.0f px page; want it laid out within the page", f.Kind, l.W, l.H, l.X, f.Viewport)
	}
	if len(f.Areas) == 0 {
		t.Errorf("the %s plot marks no data area", f.Kind)
	}
	for _, a := range f.Areas {
		if l.overlaps(a) {
			t.Errorf("the %s plot's legend (%.0f,%.0f %.0fx%.0f) overlaps the data area of %q (%.0f,%.0f %.0fx%.0f)",
				f.Kind, l.X, l.Y, l.W, l.H, a.Operation, a.X, a.Y, a.W, a.H)
		}
	}
}

// checkThroughput: the total against the target, and one distinct colour
// per operation.
func checkThroughput(t *testing.T, f figureLayout, ops []string) {
	t.Helper()
	if f.Kind == "" || len(f.Areas) != 1 {
		t.Fatalf("want one throughput plot with one data area, got %+v", f)
	}
	var total, target *lineShown
	for i, l := range f.Lines {
		switch {
		case l.Stroke == "rgb(0, 0, 0)" && !l.Dashed:
			total = &f.Lines[i]
		case l.Dashed && l.Stroke == "rgb(96, 96, 96)":
			target = &f.Lines[i]
		}
	}
	if total == nil || target == nil {
		t.Fatalf("the throughput plot draws no solid black total and dashed grey target lines: %+v", f.Lines)
	}
	if gap := math.Abs(total.LastY-target.LastY) / f.Areas[0].SVGHeight; gap > 0.1 {
		t.Errorf("the total achieved ends %.0f %% of the plot's height from the target; the run achieved its target, so they should meet", 100*gap)
	}
	var series []legendShown
	var labels []string
	for _, e := range f.Entries {
		if e.Series {
			series = append(series, e)
			labels = append(labels, e.Label)
		}
	}
	want := slices.Clone(ops)
	slices.Reverse(want) // the legend lists the stack top first
	if !slices.Equal(labels, want) {
		t.Errorf("the throughput legend names operations %q, want %q (the stack, top first)", labels, want)
	}
	for i, a := range series {
		if !slices.Contains(f.Painted, a.Color) {
			t.Errorf("operation %s's legend colour %s is painted nowhere in the plot (painted: %v)", a.Label, a.Color, f.Painted)
		}
		for _, b := range series[i+1:] {
			if d := deltaE(t, a.Color, b.Color); d < 20 {
				t.Errorf("operations %s (%s) and %s (%s) differ by ΔE %.1f; want distinct colours (ΔE ≥ 20)", a.Label, a.Color, b.Label, b.Color, d)
			}
		}
	}
	// Beyond greyscaleDistinct, series differ by their edge's dashes.
	dashes := map[string]string{}
	for k, e := range series {
		if len(series)-1-k < greyscaleDistinct { // the legend is top first
			continue
		}
		if e.Dash == "" || dashes[e.Dash] != "" {
			t.Errorf("operation %s, beyond the eighth, has edge dashes %q (also %q's); want its own, for greyscale", e.Label, e.Dash, dashes[e.Dash])
		}
		dashes[e.Dash] = e.Label
	}
}

// checkLatencyPanels: one panel per operation, aligned on one time axis,
// laid out as small multiples.
func checkLatencyPanels(t *testing.T, f, throughput figureLayout, ops []string) {
	t.Helper()
	var names []string
	columns := map[float64][]box{}
	for _, a := range f.Areas {
		names = append(names, a.Operation)
		x := math.Round(a.X)
		columns[x] = append(columns[x], a)
	}
	if !slices.Equal(names, ops) {
		t.Fatalf("the latency figure's panels are of %q, want one per operation %q", names, ops)
	}
	for x, col := range columns {
		for _, a := range col {
			if math.Abs(a.W-col[0].W) > 0.5 {
				t.Errorf("latency panels at x=%.0f are %.1f and %.1f px wide; panels of a column share one time axis", x, a.W, col[0].W)
			}
		}
	}
	full := throughput.Chart.H
	switch n := len(ops); {
	case n == 1 && math.Abs(f.Chart.H-full) > 1:
		t.Errorf("one operation's latency plot is %.0f px high; want a full-size plot (%.0f px)", f.Chart.H, full)
	case n > 3 && (len(columns) != 2 || f.Chart.H > 4*full):
		t.Errorf("%d latency panels in %d column(s), %.0f px high (a full-size plot is %.0f px); want small multiples in two columns, at most 4 plots high",
			n, len(columns), f.Chart.H, full)
	}
}

// deltaE is the CIE76 colour difference of two CSS rgb() colours.
func deltaE(t *testing.T, a, b string) float64 {
	t.Helper()
	la, lb := lab(t, a), lab(t, b)
	return math.Sqrt((la[0]-lb[0])*(la[0]-lb[0]) + (la[1]-lb[1])*(la[1]-lb[1]) + (la[2]-lb[2])*(la[2]-lb[2]))
}

// lab converts a CSS rgb(r, g, b) colour (sRGB, D65) to CIE L*a*b*.
func lab(t *testing.T, css string) [3]float64 {
	t.Helper()
	parts := strings.Split(strings.TrimSuffix(strings.TrimPrefix(css, "rgb("), ")"), ",")
	if len(parts) != 3 {
		t.Fatalf("colour %q is not rgb(r, g, b)", css)
	}
	var lin [3]float64
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil {
			t.Fatalf("colour %q: %v", css, err)
		}
		v /= 255
		if v <= 0.04045 {
			lin[i] = v / 12.92
		} else {
			lin[i] = math.Pow((v+0.055)/1.055, 2.4)
		}
	}
	x := (0.4124*lin[0] + 0.3576*lin[1] + 0.1805*lin[2]) / 0.95047
	y := 0.2126*lin[0] + 0.7152*lin[1] + 0.0722*lin[2]
	z := (0.0193*lin[0] + 0.1192*lin[1] + 0.9505*lin[2]) / 1.08883
	f := func(v float64) float64 {
		if v > 216.0/24389 {
			return math.Cbrt(v)
		}
		return (24389.0/27*v + 16) / 116
	}
	return [3]float64{116*f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))}
}
