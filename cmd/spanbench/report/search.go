package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/capacity"
)

// A capacity search's document (result v4) gets its own section: how it
// searched, the step table as `spanbench report` prints it, the outcome,
// and the latency-throughput curve (docs/capacity.md, "Reading the
// latency-throughput curve"). Every point of the curve is computed from
// the step's own measured intervals, merged exactly (capacity.Measure),
// never from the document's totals, which add up every step's rate.

// searchView is a search's section.
type searchView struct {
	Search *result.Search
	// Rates says how it searched: from, max, resolution, confirmation,
	// step geometry and worst case.
	Rates string
	Steps []stepRow
	// Outcome is the capacity line(s), as the text report prints them.
	Outcome []string
	// Unfinished marks a search that did not end.
	Unfinished bool
	// Curve is the latency-throughput curve; CurveNote says why there is
	// none.
	Curve     *figure
	CurveNote string
}

// stepRow is one step of the table.
type stepRow struct {
	N                      int
	Offered, Achieved, CPU string
	Figures                []figureCell
	Pass                   bool
}

// figureCell is one SLO figure of a step; Fail marks a measured figure
// that failed its condition.
type figureCell struct {
	Text string
	Fail bool
}

func newSearchView(d *result.Document) *searchView {
	s := d.Search
	if s == nil {
		return nil
	}
	v := &searchView{Search: s, Unfinished: !s.Outcome.Done,
		Rates: fmt.Sprintf("%s to %s ops/s, resolution %s ops/s, confirmation %s; each step %s of warm-up then %s measured; at most %d steps (worst case %s)",
			result.FormatRate(s.From), result.FormatRate(s.Max), result.FormatRate(s.Resolution), s.Confirm,
			secondsText(s.WarmUpSeconds), secondsText(s.StepSeconds), s.MaxSteps, secondsText(float64(s.MaxSteps)*(s.WarmUpSeconds+s.StepSeconds)))}
	for i, st := range s.Outcome.Steps {
		r := stepRow{N: i + 1, Offered: result.FormatRate(st.Offered), Achieved: fmt.Sprintf("%.1f", st.Achieved), CPU: "not measured", Pass: st.Pass}
		if st.CPU != nil {
			r.CPU = fmt.Sprintf("%.1f%%", *st.CPU*100)
		}
		for _, f := range st.Figures {
			r.Figures = append(r.Figures, figureCell{Text: f.Text(), Fail: f.Measured && !f.Pass})
		}
		v.Steps = append(v.Steps, r)
	}
	var b bytes.Buffer
	result.WriteSearchOutcome(&b, s)
	v.Outcome = strings.Split(strings.TrimSpace(b.String()), "\n")
	curve, err := curveFigure(d)
	switch {
	case err != nil:
		v.CurveNote = "The latency-throughput curve is not drawn: " + err.Error()
	case curve == nil:
		v.CurveNote = "The latency-throughput curve is not drawn: no step completed a successful operation."
	default:
		v.Curve = curve
	}
	return v
}

func secondsText(s float64) string { return time.Duration(s * float64(time.Second)).String() }

// curvePoint is one step on an operation's curve: x the step's achieved
// throughput over all operations, latencies in milliseconds by
// percentile.
type curvePoint struct {
	achieved float64
	pass     bool
	latency  map[float64]float64
}

// opCurve is one operation's points, the SLO's latency conditions that
// read it, and the percentiles drawn (p50, p99 and the SLO's).
type opCurve struct {
	name        string
	points      []curvePoint
	bounds      []capacity.Condition
	percentiles []float64
}

// curvePercentiles are the percentiles every curve draws; an SLO on
// another percentile adds its own.
var curvePercentiles = []float64{50, 99}

// stepCurves measures every step from its own intervals and returns each
// operation's curve, in the page's operation order, steps in order of
// offered rate (a search's bisection visits rates out of order; so read,
// past saturation the curve bends back as offered load grows and achieved
// does not).
func stepCurves(d *result.Document) ([]opCurve, error) {
	s := d.Search
	slo, err := capacity.ParseSLO(s.SLO)
	if err != nil {
		return nil, fmt.Errorf("its SLO does not parse: %w", err)
	}
	curves := newOpCurves(operationNames(d), slo)
	steps := make([]int, len(s.Outcome.Steps))
	for i := range steps {
		steps[i] = i
	}
	sort.SliceStable(steps, func(a, b int) bool { return s.Outcome.Steps[steps[a]].Offered < s.Outcome.Steps[steps[b]].Offered })
	end := 0 // past the document's last interval
	for _, in := range d.Intervals {
		end = max(end, in.Index+1)
	}
	for _, k := range steps {
		st := &s.Outcome.Steps[k]
		// A step's window must lie within the document: a result file is
		// untrusted, and Measure sizes its work by the window.
		if st.FirstInterval < 0 || st.EndInterval <= st.FirstInterval || st.EndInterval > end {
			return nil, fmt.Errorf("step %d measures intervals [%d, %d), outside the result's %d", k+1, st.FirstInterval, st.EndInterval, end)
		}
		m, err := capacity.Measure(d.Intervals, st.FirstInterval, st.EndInterval, d.IntervalSeconds, st.Offered)
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", k+1, err)
		}
		for i := range curves {
			c := &curves[i]
			om := m.Operations[c.name]
			if om == nil || om.Latency.TotalCount() == 0 {
				continue
			}
			p := curvePoint{achieved: st.Achieved, pass: st.Pass, latency: map[float64]float64{}}
			for j, v := range om.Latency.ValueAtPercentiles(c.percentiles...) {
				p.latency[c.percentiles[j]] = millis(v)
			}
			c.points = append(c.points, p)
		}
	}
	return curves, nil
}

// newOpCurves are the operations' curves before any point: each with the
// SLO's latency conditions that read it, and the percentiles to draw.
func newOpCurves(names []string, slo capacity.SLO) []opCurve {
	curves := make([]opCurve, len(names))
	for i, name := range names {
		c := &curves[i]
		c.name, c.percentiles = name, slices.Clone(curvePercentiles)
		for _, cond := range slo {
			if cond.Kind == capacity.Latency && (len(cond.Operations) == 0 || slices.Contains(cond.Operations, name)) {
				c.bounds = append(c.bounds, cond)
				if !slices.Contains(c.percentiles, cond.Percentile) {
					c.percentiles = append(c.percentiles, cond.Percentile)
				}
			}
		}
		sort.Float64s(c.percentiles)
	}
	return curves
}

// The curve's reference lines: the SLO's bound in dark red (the page's
// warning colour, in no operation's palette), the capacity in black.
var (
	sloColor      = color.RGBA{R: 0xa4, A: 0xff}
	capacityColor = color.Black
)

// curveFigure draws the latency-throughput curve: one panel per operation
// with a successful operation in some step, nil when none has.
func curveFigure(d *result.Document) (*figure, error) {
	if len(d.Intervals) == 0 || d.IntervalSeconds <= 0 {
		return nil, fmt.Errorf("the result holds no intervals to measure the steps from")
	}
	curves, err := stepCurves(d)
	if err != nil {
		return nil, err
	}
	o := d.Search.Outcome
	capX, capOK := capacityAchieved(o)
	var panels []*plot.Plot
	var names []string
	var legend []legendEntry
	var extra []float64 // the SLO's percentiles other than p50 and p99
	bounds := map[string]bool{}
	for i, c := range curves {
		if len(c.points) == 0 {
			continue
		}
		p, err := curvePlot(c, seriesColor(i), capX, capOK)
		if err != nil {
			return nil, fmt.Errorf("curve of %s: %w", c.name, err)
		}
		panels, names = append(panels, p), append(names, c.name)
		legend = append(legend, lineEntry(c.name, seriesColor(i), nil, true))
		for _, q := range c.percentiles {
			if !slices.Contains(curvePercentiles, q) && !slices.Contains(extra, q) {
				extra = append(extra, q)
			}
		}
		for _, b := range c.bounds {
			bounds[b.String()] = true
		}
	}
	if len(panels) == 0 {
		return nil, nil
	}
	cols, height := panelLayout(len(panels))
	titleBottomOnly(panels, cols)
	svg, err := svgPanels(panels, names, cols, plotWidth, height)
	if err != nil {
		return nil, fmt.Errorf("curve plots: %w", err)
	}
	refs := curveLegend(extra, sortedKeys(bounds))
	if capOK {
		refs = append(refs, lineEntry(fmt.Sprintf("capacity %s ops/s (achieved %.1f/s)", result.FormatRate(o.Capacity), capX), capacityColor, dashes(), false))
	}
	return &figure{Kind: "curve", SVG: svg, Legend: append(refs, legend...),
		Caption: "Latency against throughput, one point per step: the operation's p99 (solid) and p50 (dashed) latency from the intended send time, over the step's measured intervals only, against the step's achieved throughput over all operations; points joined in order of offered rate, so that past saturation, where more is offered and no more is done, the curve bends back. The dark red line is an SLO latency bound that reads the operation (over the operations it names merged); the dashed black line marks the capacity, the highest offered rate that passed, at its achieved throughput. Logarithmic latency axis."}, nil
}

// curveLegend is the curve's reference entries: the line styles (p99,
// p50, the SLO's other percentiles), the marks of passing and failing
// steps, and the SLO's bounds.
func curveLegend(extra []float64, bounds []string) []legendEntry {
	grey := color.Gray{Y: 0x30}
	refs := []legendEntry{lineEntry("p99", grey, nil, false), lineEntry("p50", grey, dashes(), false)}
	sort.Float64s(extra)
	for _, q := range extra {
		refs = append(refs, lineEntry("p"+formatPercentile(q)+" (the SLO's)", grey, dots(), false))
	}
	refs = append(refs, legendEntry{Label: "step passed the SLO", Swatch: "circle", Color: hexColor(grey)},
		legendEntry{Label: "step failed the SLO", Swatch: "cross", Color: hexColor(grey)})
	for _, b := range bounds {
		refs = append(refs, lineEntry("SLO "+b, sloColor, nil, false))
	}
	return refs
}

// capacityAchieved is where the capacity sits on the achieved axis: the
// highest achieved throughput of a passing step at the capacity's
// offered rate; false when no step passed.
func capacityAchieved(o result.SearchOutcome) (float64, bool) {
	x, ok := 0.0, false
	for _, st := range o.Steps {
		if st.Pass && st.Offered == o.Capacity && o.Capacity > 0 {
			x, ok = math.Max(x, st.Achieved), true
		}
	}
	return x, ok
}

// curvePlot draws one operation's panel.
func curvePlot(c opCurve, col color.Color, capX float64, capOK bool) (*plot.Plot, error) {
	p := newPlot(c.name, "achieved throughput, all operations (ops/s)", "latency (ms)")
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.TickerFunc(logTicks)
	lo, hi, right := math.Inf(1), 0.0, 0.0
	for _, pt := range c.points {
		right = math.Max(right, pt.achieved)
		for _, v := range pt.latency {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	for _, b := range c.bounds {
		ms := float64(b.Latency) / float64(time.Millisecond)
		lo, hi = math.Min(lo, ms), math.Max(hi, ms)
	}
	lo = math.Max(lo, 0.001) // the histograms' floor is 1 µs
	right = math.Max(right, capX) * 1.08
	p.X.Min, p.X.Max = 0, math.Max(right, 1)
	p.Y.Min, p.Y.Max = lo/1.5, hi*1.5
	for _, b := range c.bounds {
		ms := float64(b.Latency) / float64(time.Millisecond)
		if err := addLine(p, "SLO "+b.String(), plotter.XYs{{X: 0, Y: ms}, {X: p.X.Max, Y: ms}}, sloColor, nil); err != nil {
			return nil, err
		}
	}
	if capOK {
		if err := addLine(p, "capacity", plotter.XYs{{X: capX, Y: p.Y.Min}, {X: capX, Y: p.Y.Max}}, capacityColor, dashes()); err != nil {
			return nil, err
		}
	}
	for _, q := range c.percentiles {
		line := make(plotter.XYs, len(c.points))
		for k, pt := range c.points {
			line[k] = plotter.XY{X: pt.achieved, Y: math.Max(pt.latency[q], lo)}
		}
		dash := dots()
		switch q {
		case 99:
			dash = nil
		case 50:
			dash = dashes()
		}
		if err := addLine(p, fmt.Sprintf("p%s", formatPercentile(q)), line, col, dash); err != nil {
			return nil, err
		}
		if err := addStepMarks(p, c.points, q, lo, col); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// addStepMarks marks each step's point at percentile q: a circle where
// the step passed, a cross where it failed.
func addStepMarks(p *plot.Plot, points []curvePoint, q, floor float64, col color.Color) error {
	var pass, fail plotter.XYs
	for _, pt := range points {
		xy := plotter.XY{X: pt.achieved, Y: math.Max(pt.latency[q], floor)}
		if pt.pass {
			pass = append(pass, xy)
		} else {
			fail = append(fail, xy)
		}
	}
	for _, m := range []struct {
		xys   plotter.XYs
		shape draw.GlyphDrawer
	}{{pass, draw.CircleGlyph{}}, {fail, draw.CrossGlyph{}}} {
		if len(m.xys) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(m.xys)
		if err != nil {
			return err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(3), Shape: m.shape}
		p.Add(sc)
	}
	return nil
}

// dots is the line style of an SLO's own percentile, when it is neither
// p50 nor p99.
func dots() []vg.Length { return []vg.Length{vg.Points(1.5), vg.Points(2)} }

// logTicks label a logarithmic latency axis at each power of ten, and
// at 2 and 5 times each where the range spans at most two of them, so
// that a narrow range still has labels and a wide one is not crowded.
func logTicks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	steps := []float64{1, 2, 5}
	if math.Log10(hi/lo) > 2 {
		steps = steps[:1]
	}
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		for _, m := range steps {
			v := m * math.Pow(10, e)
			if v >= lo && v <= hi {
				ticks = append(ticks, plot.Tick{Value: v, Label: plainNumber(v)})
			}
		}
	}
	return ticks
}

// plainNumber prints v without floating-point noise (0.002, not
// 0.0020000000000000005).
func plainNumber(v float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.6f", v), "0"), ".")
}

// formatPercentile prints a percentile as the SLO's text does: 99, 99.9.
func formatPercentile(q float64) string { return plainNumber(q) }

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
