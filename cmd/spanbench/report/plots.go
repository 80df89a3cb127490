package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The size of every plot; the page scales it to its column.
const (
	plotWidth  = 18 * vg.Centimeter
	plotHeight = 8 * vg.Centimeter
)

// warmUpFill shades the warm-up (#ffe4b5); the tests look for it.
var warmUpFill = color.RGBA{R: 0xff, G: 0xe4, B: 0xb5, A: 0xff}

// lineColor is the i-th line's colour: dark enough to read on white,
// distinct for the first eight lines.
func lineColor(i int) color.Color {
	palette := [...]color.RGBA{
		{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
		{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
		{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
		{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
		{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
		{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
		{R: 0xe3, G: 0x77, B: 0xc2, A: 0xff},
		{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff},
	}
	return palette[i%len(palette)]
}

// dashes is the line style of a secondary series (p50 beside p99,
// service time beside latency, the target beside the achieved rate).
func dashes() []vg.Length { return []vg.Length{vg.Points(4), vg.Points(3)} }

// newPlot is a plot with the page's font (sans serif), its labels, and
// the y axis from zero.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	for _, v := range []*font.Variant{
		&p.Title.TextStyle.Font.Variant,
		&p.X.Label.TextStyle.Font.Variant, &p.Y.Label.TextStyle.Font.Variant,
		&p.X.Tick.Label.Font.Variant, &p.Y.Tick.Label.Font.Variant,
		&p.Legend.TextStyle.Font.Variant,
	} {
		*v = "Sans"
	}
	p.Legend.Top = true
	p.Y.Min = 0
	p.Y.Tick.Marker = plot.TickerFunc(plainTicks)
	p.X.Tick.Marker = plot.TickerFunc(plainTicks)
	return p
}

// plainTicks are gonum's default ticks labelled without trailing zeros
// (250, not 250.00) or floating-point noise (1.2, not 1.2000000000000002).
func plainTicks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i, t := range ticks {
		if t.Label != "" {
			// Rounded to 12 significant digits first: a tick computed
			// as 3 × 0.4 is 1.2000000000000002.
			v, _ := strconv.ParseFloat(strconv.FormatFloat(t.Value, 'g', 12, 64), 64)
			ticks[i].Label = strconv.FormatFloat(v, 'f', -1, 64)
		}
	}
	return ticks
}

// addLine adds a line with a legend entry.
func addLine(p *plot.Plot, label string, xys plotter.XYs, c color.Color, dashed bool) error {
	if len(xys) == 0 {
		return nil
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	l.Color = c
	l.Width = vg.Points(1.5)
	if dashed {
		l.Dashes = dashes()
	}
	p.Add(l)
	p.Legend.Add(label, l)
	return nil
}

// shadeWarmUp shades the warm-up, [0, end) seconds, over the full height
// of the y range [0, top]; it is added first so lines are drawn over it.
func shadeWarmUp(p *plot.Plot, end, top float64) error {
	if end <= 0 {
		return nil
	}
	poly, err := plotter.NewPolygon(plotter.XYs{{X: 0, Y: 0}, {X: end, Y: 0}, {X: end, Y: top}, {X: 0, Y: top}})
	if err != nil {
		return err
	}
	poly.Color = warmUpFill
	poly.LineStyle.Width = 0
	p.Add(poly)
	p.Legend.Add("warm-up", poly)
	return nil
}

// yTop is the top of a y axis that leaves room above the highest value
// for a legend of n entries in the top corner (1 when there is nothing to
// show): each entry takes about 7 % of the plot's height.
func yTop(n int, series ...plotter.XYs) float64 {
	top := 0.0
	for _, s := range series {
		for _, xy := range s {
			top = math.Max(top, xy.Y)
		}
	}
	if top == 0 {
		return 1
	}
	return top / math.Max(0.4, 0.95-0.07*float64(n))
}

// throughputPlot draws each operation's completed operations per second
// over time, and the target rate.
func throughputPlot(s runSeries) (*plot.Plot, error) {
	p := newPlot("Throughput", "time since start (s)", "operations/s")
	all := []plotter.XYs{s.target}
	for _, op := range s.ops {
		all = append(all, op.throughput)
	}
	top := yTop(len(s.ops)+2, all...)
	if err := shadeWarmUp(p, s.warmUpEnd, top); err != nil {
		return nil, err
	}
	if err := addLine(p, "target (all operations)", s.target, color.Gray{Y: 0x60}, true); err != nil {
		return nil, err
	}
	for i, op := range s.ops {
		if err := addLine(p, op.name, op.throughput, lineColor(i), false); err != nil {
			return nil, err
		}
	}
	p.X.Min, p.X.Max, p.Y.Max = 0, s.end, top
	return p, nil
}

// latencyPlot draws one operation's p50 and p99 over time.
func latencyPlot(s runSeries, i int) (*plot.Plot, error) {
	op := s.ops[i]
	p := newPlot("Latency of "+op.name, "time since start (s)", "latency (ms)")
	top := yTop(3, op.p50, op.p99)
	if err := shadeWarmUp(p, s.warmUpEnd, top); err != nil {
		return nil, err
	}
	if err := addLine(p, "p99", op.p99, lineColor(i), false); err != nil {
		return nil, err
	}
	if err := addLine(p, "p50", op.p50, lineColor(i), true); err != nil {
		return nil, err
	}
	p.X.Min, p.X.Max, p.Y.Max = 0, s.end, top
	return p, nil
}

// curve is one run's percentile distribution of one operation.
type curve struct {
	label string
	distribution
}

// distributionPlot draws HdrHistogram's percentile distribution of one
// operation: latency against 1/(1-q) on a log axis labelled in
// percentiles, one colour per run, service time dashed.
func distributionPlot(op string, curves []curve) (*plot.Plot, error) {
	p := newPlot("Latency by percentile of "+op+" (after warm-up)", "percentile", "latency (ms)")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.TickerFunc(percentileTicks)
	right := 10.0
	var all []plotter.XYs
	for _, c := range curves {
		all = append(all, c.latency, c.service)
		for _, xy := range c.latency {
			right = math.Max(right, xy.X)
		}
	}
	// 6 % of the width to the right of the last decade leaves room for
	// its label.
	p.X.Min, p.X.Max = 1, right*math.Pow(right, 0.06)
	for i, c := range curves {
		if err := addLine(p, c.label+" latency", c.latency, lineColor(i), false); err != nil {
			return nil, err
		}
		if err := addLine(p, c.label+" service time", c.service, lineColor(i), true); err != nil {
			return nil, err
		}
	}
	p.Legend.Left = true
	p.Y.Max = yTop(2*len(curves), all...)
	return p, nil
}

// percentileTicks marks each factor of ten of 1/(1-q) with its
// percentile: 0%, 90%, 99%, 99.9%...
func percentileTicks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for k := 0; math.Pow(10, float64(k)) <= hi*1.0001; k++ {
		x := math.Pow(10, float64(k))
		if x < lo/1.0001 {
			continue
		}
		ticks = append(ticks, plot.Tick{Value: x, Label: percentileLabel(k)})
	}
	return ticks
}

// percentileLabel names the quantile 1-10^-k as a percentage, written
// without rounding: 0%, 90%, 99%, 99.9%, 99.99%...
func percentileLabel(k int) string {
	switch k {
	case 0:
		return "0%"
	case 1:
		return "90%"
	case 2:
		return "99%"
	}
	return "99." + strings.Repeat("9", k-2) + "%"
}

// svg renders a plot as an SVG element to inline in the page. gonum's
// SVG canvas escapes every string it draws (labels come from users); its
// XML prologue is dropped, as HTML has none inside a document.
func svg(p *plot.Plot) (template.HTML, error) {
	return svgSized(p, plotWidth, plotHeight)
}

// svgSized is svg at another size than the page's usual one.
func svgSized(p *plot.Plot, width, height vg.Length) (template.HTML, error) {
	c := vgsvg.New(width, height)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	out := b.String()
	start := strings.Index(out, "<svg")
	if start < 0 {
		return "", fmt.Errorf("the SVG canvas wrote no <svg> element (%d bytes)", len(out))
	}
	// The SVG is gonum's output with every text escaped by its canvas.
	return template.HTML(out[start:]), nil //nolint:gosec // see above
}
