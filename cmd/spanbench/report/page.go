// Package report renders result documents as one self-contained HTML page:
// summary tables and plots drawn server-side as inline SVG, with no script,
// no stylesheet, font or image to fetch, so the file can be mailed,
// archived or attached to a ticket and read offline.
//
// Every figure comes from the documents' merged HDR histograms (quantiles
// are computed from them, never averaged) or exact counts. Every string
// from a document (run, operation and host names come from users) is
// escaped: by html/template in the page, by gonum's SVG canvas in plots.
// A campaign's comparison (WriteComparisonHTML) shows its table and, per
// variant, the ratios with their confidence intervals as bars.
package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/spanbench/spanbench/result"
)

// Run is one result document to show, with the label that names it in
// headings and legends.
type Run struct {
	// Label names the run on the page (usually the document's run name).
	Label string
	// Doc is the result.
	Doc *result.Document
}

//go:embed page.html.tmpl
var pageSource string

// pageTemplate is parsed once; html/template escapes every value by context.
var pageTemplate = template.Must(template.Must(template.New("page").Parse(pageSource)).Parse(tpccSource))

// WriteHTML writes the page for runs: each run's summary and time plots,
// then per operation its percentile distribution with every run overlaid.
func WriteHTML(w io.Writer, runs ...Run) error {
	if len(runs) == 0 {
		return fmt.Errorf("no result to report")
	}
	v := pageView{Overlay: len(runs) > 1}
	for _, r := range runs {
		rv, err := newRunView(r)
		if err != nil {
			return err
		}
		v.Runs = append(v.Runs, rv)
		v.Title = append(v.Title, r.Label)
	}
	dist, err := distributionFigures(runs)
	if err != nil {
		return err
	}
	v.Distributions = dist
	return pageTemplate.Execute(w, v)
}

// pageView is what the template reads.
type pageView struct {
	Title         []string
	Overlay       bool
	Runs          []runView
	Distributions []figure
	// Comparison is a campaign's comparison; a page shows either runs or
	// a comparison.
	Comparison *comparisonView
}

// figure is one plot with its caption. Kind and Operation identify it
// (data-plot and data-operation attributes) for readers and tests.
type figure struct {
	Kind      string
	Operation string
	// Stream names the stream of a streams run's plot (data-stream).
	Stream  string
	Variant string
	Caption string
	SVG     template.HTML
	// Legend is drawn beside the plot, never over its data.
	Legend []legendEntry
}

// runView is one run's section: its facts, table and time plots (none
// when the document has no intervals).
type runView struct {
	Label     string
	Doc       *result.Document
	Duration  string
	Measured  string
	WarmUp    string
	StartSkew string
	Missed    uint64
	Rows      []row
	Overall   row
	// GFE says the table has GFE latency columns: some operation has one;
	// GFENote says why not otherwise.
	GFE     bool
	GFENote string
	Time    []figure
	// Server and Monitoring are the document's server figures, nil when
	// it has none (server.go).
	Server     *serverView
	Monitoring *monitoringView
	// Search is a capacity search's section (search.go), Cost the run's
	// cost (cost.go); nil when the document has none.
	Search *searchView
	Cost   *costView
	// Streams are a streams run's sections, one per stream; the table
	// above merges them.
	Streams []streamView
}

// streamView is one stream of a streams run: its facts, its table (the
// operations of its mix) and its own time plots.
type streamView struct {
	Name     string
	Offset   string
	Measured string
	WarmUp   string
	Missed   uint64
	// WallTime is a batch's wall time, "" for other streams.
	WallTime string
	// CutShort says what happened to a batch its window cut short, ""
	// otherwise (result.CutBatches).
	CutShort string
	Rows     []row
	Overall  row
	Time     []figure
}

// row is one line of a summary table.
type row struct {
	Name, Type                           string
	OK, Retries                          uint64
	Rate                                 string
	P50, P90, P99, P999, Max, ServiceP99 string
	Errors                               string
	// GFEP50 and GFEP99 are the GFE latency's, "n/a" without one.
	GFEP50, GFEP99 string
}

func newRow(op result.Operation) row {
	l := op.Latency
	r := row{
		Name: op.Name, Type: string(op.Type), OK: op.OK, Retries: op.Retries,
		Rate: strconv.FormatFloat(op.Throughput, 'f', 1, 64),
		P50:  result.FormatMicros(l.P50), P90: result.FormatMicros(l.P90), P99: result.FormatMicros(l.P99),
		P999: result.FormatMicros(l.P999), Max: result.FormatMicros(l.Max),
		ServiceP99: result.FormatMicros(op.Service.P99),
		Errors:     result.ErrorSummary(op.Errors),
		GFEP50:     "n/a", GFEP99: "n/a",
	}
	if g := op.GFELatency; g != nil {
		r.GFEP50, r.GFEP99 = result.FormatMicros(g.P50), result.FormatMicros(g.P99)
	}
	return r
}

func newRunView(r Run) (runView, error) {
	d := r.Doc
	v := runView{
		Label:      r.Label,
		Doc:        d,
		Duration:   d.End.Sub(d.Start).Round(time.Millisecond).String(),
		Measured:   d.End.Sub(d.WarmUp.End).Round(time.Millisecond).String(),
		WarmUp:     warmUpText(d.WarmUp, d.Start),
		Overall:    newRow(d.Overall),
		Server:     newServerView(d.Server),
		Monitoring: newMonitoringView(d),
		Search:     newSearchView(d),
		Cost:       newCostView(d.Cost),
	}
	for _, s := range d.Shards {
		v.Missed += s.Missed
	}
	v.StartSkew = startSkew(d.Shards)
	for _, op := range d.Totals {
		v.Rows = append(v.Rows, newRow(op))
		v.GFE = v.GFE || op.GFELatency != nil
	}
	if !v.GFE {
		v.GFENote = d.GFENote(d.Overall)
	}
	var err error
	if v.Time, err = timeFigures(d); err != nil {
		return v, err
	}
	v.Streams, err = streamViews(d)
	return v, err
}

// streamViews are d's streams' sections; an operation no stream's shard
// ran in that stream (another stream's) is left out of its table.
func streamViews(d *result.Document) ([]streamView, error) {
	var out []streamView
	for i := range d.Streams {
		s := &d.Streams[i]
		v := streamView{
			Name: s.Name, Offset: s.Start.Sub(d.Start).Round(time.Millisecond).String(),
			Measured: s.End.Sub(s.WarmUp.End).Round(time.Millisecond).String(),
			WarmUp:   warmUpText(s.WarmUp, s.Start), Overall: newRow(s.Overall),
		}
		for _, sh := range s.Shards {
			v.Missed += sh.Missed
		}
		if s.WallTimeSeconds > 0 {
			v.WallTime = result.FormatSeconds(s.WallTimeSeconds)
		}
		if c, ok := d.CutShort(s); ok {
			v.CutShort = "a batch: " + c.String()
		}
		for _, op := range s.Totals {
			if op.OK+op.NotFound+op.ErrorCount() > 0 {
				v.Rows = append(v.Rows, newRow(op))
			}
		}
		var err error
		if v.Time, err = timeFigures(d.StreamDocument(s)); err != nil {
			return nil, fmt.Errorf("stream %s: %w", s.Name, err)
		}
		for j := range v.Time {
			v.Time[j].Stream = s.Name
		}
		out = append(out, v)
	}
	return out, nil
}

// timeFigures draws a run's throughput, then its operations' latency as
// small multiples, over time; nothing for a document without intervals.
func timeFigures(d *result.Document) ([]figure, error) {
	if len(d.Intervals) == 0 || d.IntervalSeconds <= 0 {
		return nil, nil
	}
	series, err := timeSeries(d)
	if err != nil {
		return nil, err
	}
	tp, legend, err := throughputPlot(series)
	if err != nil {
		return nil, err
	}
	f, err := newFigure("throughput", "", "Completed operations per second, per interval, stacked by operation: the top of the stack (black) is the total achieved, the dashed line the target rate over all operations.", tp)
	if err != nil {
		return nil, err
	}
	f.Legend = legend
	out := []figure{f}
	panels, index, err := latencyPanels(series)
	if err != nil || len(panels) == 0 {
		return out, err
	}
	names := make([]string, len(index))
	for k, i := range index {
		names[k] = series.ops[i].name
	}
	cols, height := panelLayout(len(panels))
	titleBottomOnly(panels, cols)
	svg, err := svgPanels(panels, names, cols, plotWidth, height)
	if err != nil {
		return nil, fmt.Errorf("latency plots: %w", err)
	}
	caption := "p99 (solid) and p50 (dashed) of each interval, from the intended send time."
	if len(panels) > 1 {
		caption = "p99 (solid) and p50 (dashed) of each interval, from the intended send time: one panel per operation on the run's time axis, each with its own latency scale."
	}
	return append(out, figure{Kind: "latency", Caption: caption, SVG: svg, Legend: latencyLegend(series, index)}), nil
}

// panelLayout is how n latency panels are laid out: in one column up to
// three (one panel is a full-size plot), else two columns; and the height
// of the whole.
func panelLayout(n int) (cols int, height vg.Length) {
	switch {
	case n == 1:
		return 1, plotHeight
	case n <= 3:
		return 1, vg.Length(n) * panelHeight
	}
	return 2, vg.Length((n+1)/2) * panelHeight
}

// titleBottomOnly labels the shared x axis once per column, under its
// lowest panel.
func titleBottomOnly(panels []*plot.Plot, cols int) {
	for k, p := range panels {
		if k+cols < len(panels) {
			p.X.Label.Text = ""
		}
	}
}

// newFigure renders p for the page.
func newFigure(kind, op, caption string, p *plot.Plot) (figure, error) {
	out, err := svg(p)
	if err != nil {
		return figure{}, fmt.Errorf("%s plot %s: %w", kind, op, err)
	}
	return figure{Kind: kind, Operation: op, Caption: caption, SVG: out}, nil
}

// warmUpText says where the warm-up ended and how it was found.
func warmUpText(w result.WarmUp, start time.Time) string {
	if w.Intervals == 0 {
		return fmt.Sprintf("none (%s)", w.Mode)
	}
	s := fmt.Sprintf("%s, %d interval(s), %s", w.Mode, w.Intervals, w.End.Sub(start).Round(time.Millisecond))
	if !w.Stable {
		s += " — NOT stable: the warm-up hit its maximum, the totals are suspect"
	}
	return s
}

// startSkew is the spread of the shards' actual starts.
func startSkew(shards []result.Shard) string {
	if len(shards) < 2 {
		return ""
	}
	first, last := shards[0].Started, shards[0].Started
	for _, s := range shards {
		if s.Started.Before(first) {
			first = s.Started
		}
		if s.Started.After(last) {
			last = s.Started
		}
	}
	return last.Sub(first).String()
}

// distributionFigures draws one percentile-distribution plot per
// operation, overlaying every run that has it.
func distributionFigures(runs []Run) ([]figure, error) {
	byOp := map[string][]curve{}
	var order []string
	for i, r := range runs {
		dist, err := distributions(r.Doc)
		if err != nil {
			return nil, err
		}
		for _, name := range operationNames(r.Doc) {
			d, ok := dist[name]
			if !ok {
				continue
			}
			if _, seen := byOp[name]; !seen {
				order = append(order, name)
			}
			byOp[name] = append(byOp[name], curve{label: r.Label, run: i, distribution: d})
		}
	}
	if len(order) == 0 {
		return nil, nil
	}
	panels := make([]*plot.Plot, len(order))
	for k, name := range order {
		p, err := distributionPlot(name, byOp[name])
		if err != nil {
			return nil, err
		}
		panels[k] = p
	}
	cols, height := panelLayout(len(panels))
	titleBottomOnly(panels, cols)
	svg, err := svgPanels(panels, order, cols, plotWidth, height)
	if err != nil {
		return nil, fmt.Errorf("percentile plots: %w", err)
	}
	var legend []legendEntry
	for i, r := range runs {
		legend = append(legend, lineEntry(r.Label+" latency", seriesColor(i), edgeDashes(i), true),
			lineEntry(r.Label+" service time", seriesColor(i), dashes(), false))
	}
	return []figure{{Kind: "distribution", SVG: svg, Legend: legend,
		Caption: "Latency at each percentile after the warm-up (HdrHistogram's percentile distribution), per operation: from the intended send time (solid) and the actual send time (dashed)."}}, nil
}
