package report

import (
	"bytes"
	"fmt"
	"html"
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

// The size of every plot; the page scales it to its column. A panel of
// small multiples is panelHeight high.
const (
	plotWidth   = 18 * vg.Centimeter
	plotHeight  = 8 * vg.Centimeter
	panelHeight = 5.5 * vg.Centimeter
)

// warmUpFill shades the warm-up (#ffe4b5); the tests look for it.
var warmUpFill = color.RGBA{R: 0xff, G: 0xe4, B: 0xb5, A: 0xff}

// palette is Tableau's classic ten-colour categorical palette (D3's
// category10): ten hues made to tell series apart, each dark enough for a
// line on white.
var palette = [...]color.RGBA{
	{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, // blue
	{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, // orange
	{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, // green
	{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, // red
	{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, // purple
	{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}, // brown
	{R: 0xe3, G: 0x77, B: 0xc2, A: 0xff}, // pink
	{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}, // grey
	{R: 0xbc, G: 0xbd, B: 0x22, A: 0xff}, // olive
	{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff}, // cyan
}

// seriesColor is the i-th series' colour (an operation's, or a run's).
func seriesColor(i int) color.RGBA { return palette[i%len(palette)] }

// greyscaleDistinct is how many series colour alone tells apart in
// greyscale: beyond it, a series also gets an edge dash (edgeDashes).
const greyscaleDistinct = 8

// edgeDashes is the dash pattern of series i's edge, nil for the first
// greyscaleDistinct series: the ninth and later differ by their dashes
// too, so that a page printed in greyscale still tells them apart.
func edgeDashes(i int) []vg.Length {
	if i < greyscaleDistinct {
		return nil
	}
	patterns := [][]float64{{1.5, 1.5}, {5, 2}, {5, 2, 1.5, 2}, {8, 2, 1.5, 2, 1.5, 2}}
	var out []vg.Length
	for _, d := range patterns[(i-greyscaleDistinct)%len(patterns)] {
		out = append(out, vg.Points(d))
	}
	return out
}

// dashes is the line style of a secondary series (p50 beside p99,
// service time beside latency, the target beside the achieved rate).
func dashes() []vg.Length { return []vg.Length{vg.Points(4), vg.Points(3)} }

// legendEntry is one entry of a figure's legend. The page draws legends
// beside their plot, in HTML, so that no legend covers data.
type legendEntry struct {
	Label string
	// Swatch is "line" (a stroke, dashed when Dash is set), "area" (a
	// filled box, with a dark edge dashed as Dash when set), or a point's
	// mark: "circle" (filled) or "cross".
	Swatch string
	// Color is the series' colour, #rrggbb.
	Color string
	// Dash is the SVG stroke-dasharray of the line or edge, "" for none.
	Dash string
	// Series marks the entries of a figure's series (operations, runs),
	// whose colours are distinct; the others are references (target,
	// total, warm-up).
	Series bool
}

// lineEntry is the legend entry of a line drawn by addLine.
func lineEntry(label string, c color.Color, dash []vg.Length, series bool) legendEntry {
	return legendEntry{Label: label, Swatch: "line", Color: hexColor(c), Dash: dashArray(dash), Series: series}
}

// hexColor is c as #rrggbb.
func hexColor(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}

// dashArray is a dash pattern as an SVG stroke-dasharray.
func dashArray(d []vg.Length) string {
	parts := make([]string, len(d))
	for i, l := range d {
		parts[i] = strconv.FormatFloat(l.Points(), 'f', -1, 64)
	}
	return strings.Join(parts, " ")
}

// newPlot is a plot with the page's font (sans serif), its labels, and
// the y axis from zero. Its legend stays empty: the page draws it.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	for _, v := range []*font.Variant{
		&p.Title.TextStyle.Font.Variant,
		&p.X.Label.TextStyle.Font.Variant, &p.Y.Label.TextStyle.Font.Variant,
		&p.X.Tick.Label.Font.Variant, &p.Y.Tick.Label.Font.Variant,
	} {
		*v = "Sans"
	}
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

// addLine adds a line; its legend entry is the caller's (lineEntry).
func addLine(p *plot.Plot, label string, xys plotter.XYs, c color.Color, dash []vg.Length) error {
	if len(xys) == 0 {
		return nil
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	l.Color = c
	l.Width = vg.Points(1.5)
	l.Dashes = dash
	p.Add(l)
	return nil
}

// warmUpEntry is the legend entry of the warm-up's shade.
var warmUpEntry = legendEntry{Label: "warm-up (excluded from the totals)", Swatch: "area", Color: hexColor(warmUpFill)}

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
	return nil
}

// yTop is the top of a y axis: 15 % above the highest value (the legend
// is beside the plot, so this room only keeps a line off the frame and
// the warm-up's shade in sight above a stack), 1 when there is nothing.
func yTop(series ...plotter.XYs) float64 {
	top := 0.0
	for _, s := range series {
		for _, xy := range s {
			top = math.Max(top, xy.Y)
		}
	}
	if top == 0 {
		return 1
	}
	return top * 1.15
}

// throughputPlot draws the total achieved rate against the target, the
// total stacked by operation (the first operation at the bottom), so
// that the top of the stack is the total: ten operations at 20/s read as
// 200/s against a 200/s target, not as ten lines at a tenth of it.
func throughputPlot(s runSeries) (*plot.Plot, []legendEntry, error) {
	p := newPlot("Throughput: total achieved and target", "time since start (s)", "operations/s")
	total := stackTotal(s.ops)
	top := yTop(s.target, total)
	var legend []legendEntry
	if s.warmUpEnd > 0 {
		if err := shadeWarmUp(p, s.warmUpEnd, top); err != nil {
			return nil, nil, err
		}
	}
	below := make(plotter.XYs, len(total))
	for i := range below {
		below[i].X = total[i].X
	}
	bands := make([]legendEntry, 0, len(s.ops))
	for i, op := range s.ops {
		above := make(plotter.XYs, len(below))
		for k := range above {
			above[k] = plotter.XY{X: below[k].X, Y: below[k].Y + op.throughput[k].Y}
		}
		if err := addBand(p, op.name, below, above, i); err != nil {
			return nil, nil, err
		}
		bands = append(bands, legendEntry{Label: op.name, Swatch: "area", Color: hexColor(seriesColor(i)), Dash: dashArray(edgeDashes(i)), Series: true})
		below = above
	}
	if err := addLine(p, "total", total, color.Black, nil); err != nil {
		return nil, nil, err
	}
	legend = append(legend, lineEntry("total achieved", color.Black, nil, false))
	if err := addLine(p, "target", s.target, color.Gray{Y: 0x60}, dashes()); err != nil {
		return nil, nil, err
	}
	if len(s.target) > 0 {
		legend = append(legend, lineEntry("target (all operations)", color.Gray{Y: 0x60}, dashes(), false))
	}
	// The legend lists the operations as the stack shows them, top first.
	for i := len(bands) - 1; i >= 0; i-- {
		legend = append(legend, bands[i])
	}
	if s.warmUpEnd > 0 {
		legend = append(legend, warmUpEntry)
	}
	p.X.Min, p.X.Max, p.Y.Max = 0, s.end, top
	return p, legend, nil
}

// stackTotal is the sum of the operations' throughput per interval.
func stackTotal(ops []opSeries) plotter.XYs {
	if len(ops) == 0 {
		return nil
	}
	total := make(plotter.XYs, len(ops[0].throughput))
	for _, op := range ops {
		for k, xy := range op.throughput {
			total[k].X, total[k].Y = xy.X, total[k].Y+xy.Y
		}
	}
	return total
}

// addBand fills series i's band between below and above in its colour,
// with a white edge on top that parts it from the next band (and, beyond
// the eighth series, a dark dashed edge: edgeDashes).
func addBand(p *plot.Plot, name string, below, above plotter.XYs, i int) error {
	if len(above) == 0 {
		return nil
	}
	outline := append(plotter.XYs{}, above...)
	for k := len(below) - 1; k >= 0; k-- {
		outline = append(outline, below[k])
	}
	band, err := plotter.NewPolygon(outline)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	band.Color = seriesColor(i)
	band.LineStyle.Width = 0
	p.Add(band)
	edge, err := plotter.NewLine(above)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	edge.Color, edge.Width = color.White, vg.Points(0.75)
	if d := edgeDashes(i); d != nil {
		edge.Color, edge.Width, edge.Dashes = color.Gray{Y: 0x1a}, vg.Points(1.2), d
	}
	p.Add(edge)
	return nil
}

// latencyPanels draws each operation's p50 and p99 over time as small
// multiples: one panel per operation (in its series colour, titled with
// its name), all on the run's time axis, each with its own latency
// scale. Operations that completed nothing get no panel: the table says
// so. index is each panel's operation, by its place in s.ops.
func latencyPanels(s runSeries) (panels []*plot.Plot, index []int, err error) {
	for i, op := range s.ops {
		if len(op.p99) == 0 {
			continue
		}
		p := newPlot(op.name, "time since start (s)", "latency (ms)")
		top := yTop(op.p50, op.p99)
		if err := shadeWarmUp(p, s.warmUpEnd, top); err != nil {
			return nil, nil, err
		}
		if err := addLine(p, "p99", op.p99, seriesColor(i), nil); err != nil {
			return nil, nil, err
		}
		if err := addLine(p, "p50", op.p50, seriesColor(i), dashes()); err != nil {
			return nil, nil, err
		}
		p.X.Min, p.X.Max, p.Y.Max = 0, s.end, top
		panels = append(panels, p)
		index = append(index, i)
	}
	return panels, index, nil
}

// latencyLegend is the legend of the latency panels: the line styles,
// and the operations' colours (each panel is also titled with its name).
func latencyLegend(s runSeries, index []int) []legendEntry {
	out := []legendEntry{lineEntry("p99", color.Gray{Y: 0x30}, nil, false), lineEntry("p50", color.Gray{Y: 0x30}, dashes(), false)}
	for _, i := range index {
		out = append(out, lineEntry(s.ops[i].name, seriesColor(i), nil, true))
	}
	if s.warmUpEnd > 0 {
		out = append(out, warmUpEntry)
	}
	return out
}

// curve is one run's percentile distribution of one operation; run is
// the run's place on the page, which picks its colour.
type curve struct {
	label string
	run   int
	distribution
}

// distributionPlot draws HdrHistogram's percentile distribution of one
// operation: latency against 1/(1-q) on a log axis labelled in
// percentiles, one colour per run, service time dashed. It is titled
// with the operation's name: a panel among the others.
func distributionPlot(op string, curves []curve) (*plot.Plot, error) {
	p := newPlot(op, "percentile", "latency (ms)")
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
	for _, c := range curves {
		if err := addLine(p, c.label+" latency", c.latency, seriesColor(c.run), edgeDashes(c.run)); err != nil {
			return nil, err
		}
		if err := addLine(p, c.label+" service time", c.service, seriesColor(c.run), dashes()); err != nil {
			return nil, err
		}
	}
	p.Y.Max = yTop(all...)
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

// svg renders a plot as an SVG element to inline in the page.
func svg(p *plot.Plot) (template.HTML, error) {
	return svgSized(p, plotWidth, plotHeight)
}

// svgSized is svg at another size than the page's usual one.
func svgSized(p *plot.Plot, width, height vg.Length) (template.HTML, error) {
	return svgPanels([]*plot.Plot{p}, nil, 1, width, height)
}

// svgPanels renders plots as small multiples, cols to a row, aligned so
// that their data areas share their axes' positions, each named by the
// operation at its place in ops (when given). gonum's SVG canvas escapes
// every string it draws (labels come from users); its XML prologue is
// dropped, as HTML has none inside a document. Each panel's data area is
// marked by an invisible <rect class="data-area"> (data-operation names
// its operation, escaped), so that a reader of the page — the browser
// test — finds where the data is drawn.
func svgPanels(plots []*plot.Plot, ops []string, cols int, width, height vg.Length) (template.HTML, error) {
	rows := (len(plots) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
		for c := range grid[r] {
			if k := r*cols + c; k < len(plots) {
				grid[r][c] = plots[k]
			}
		}
	}
	c := vgsvg.New(width, height)
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 2}
	canvases := [][]draw.Canvas{{dc}}
	if len(plots) > 1 {
		canvases = plot.Align(grid, tiles, dc)
	}
	var areas strings.Builder
	for r := range grid {
		for col, p := range grid[r] {
			if p == nil {
				continue
			}
			p.Draw(canvases[r][col])
			a := p.DataCanvas(canvases[r][col]).Rectangle
			op := ""
			if k := r*cols + col; k < len(ops) {
				op = ops[k]
			}
			fmt.Fprintf(&areas, `<rect class="data-area" data-operation="%s" x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="none" stroke="none"/>`+"\n",
				html.EscapeString(op), a.Min.X.Points(), (height - a.Max.Y).Points(), (a.Max.X - a.Min.X).Points(), (a.Max.Y - a.Min.Y).Points())
		}
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	out := b.String()
	start, end := strings.Index(out, "<svg"), strings.LastIndex(out, "</svg>")
	if start < 0 || end < start {
		return "", fmt.Errorf("the SVG canvas wrote no <svg> element (%d bytes)", len(out))
	}
	// The SVG is gonum's output with every text escaped by its canvas,
	// and the data areas, whose one string is escaped above.
	return template.HTML(`<svg class="chart"` + out[start+len("<svg"):end] + areas.String() + out[end:]), nil //nolint:gosec // see above
}
