package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// Comparison is a campaign's comparison table to show: the status's
// (bounded) table, from the cluster or a file.
type Comparison struct {
	// Campaign names the campaign on the page.
	Campaign string
	// Table is the comparison, as status.comparison holds it.
	Table v1alpha1.ComparisonStatus
}

// comparisonView is the page's comparison section.
type comparisonView struct {
	Campaign, Iteration, Baseline string
	Verdict                       v1alpha1.CampaignVerdict
	Omitted                       int32
	Rows                          []v1alpha1.ComparisonRow
	Bars                          []figure
}

// WriteComparisonHTML writes the page of a campaign's comparison: the
// table, and per variant its ratios with their confidence intervals as
// bars.
func WriteComparisonHTML(w io.Writer, c Comparison) error {
	if len(c.Table.Rows) == 0 {
		return fmt.Errorf("campaign %s: the comparison has no rows", c.Campaign)
	}
	cv := &comparisonView{Campaign: c.Campaign, Iteration: c.Table.Iteration, Baseline: c.Table.Baseline,
		Verdict: c.Table.Verdict, Omitted: c.Table.OmittedRows, Rows: c.Table.Rows}
	var variants []string
	byVariant := map[string][]v1alpha1.ComparisonRow{}
	for _, r := range c.Table.Rows {
		if _, ok := byVariant[r.Variant]; !ok {
			variants = append(variants, r.Variant)
		}
		byVariant[r.Variant] = append(byVariant[r.Variant], r)
	}
	for _, v := range variants {
		f, err := ratioFigure(v, c.Table.Baseline, byVariant[v])
		if err != nil {
			return err
		}
		cv.Bars = append(cv.Bars, f)
	}
	return pageTemplate.Execute(w, pageView{Title: []string{"campaign " + c.Campaign}, Comparison: cv})
}

// verdictColor colours a row's bar by its verdict.
func verdictColor(v v1alpha1.CampaignVerdict) color.Color {
	switch v {
	case v1alpha1.VerdictRegressed:
		return color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	case v1alpha1.VerdictImproved:
		return color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	case v1alpha1.VerdictNeutral:
		return color.RGBA{R: 0x99, G: 0x99, B: 0x99, A: 0xff}
	}
	return color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}
}

// whiskerWidth draws the intervals a little heavier than the lines, so
// they stand out on their bars (and tests find them).
const whiskerWidth = vg.Length(2) // points

// intervals are the rows' confidence intervals as gonum error bars:
// each row's ratio at its index, with the distances to its bounds.
type intervals struct {
	plotter.XYs
	plotter.XErrors
}

// Len resolves the two embedded lengths, which are equal.
func (c intervals) Len() int { return len(c.XYs) }

func ratioFigure(variant, baseline string, rows []v1alpha1.ComparisonRow) (figure, error) {
	p := newPlot(fmt.Sprintf("%s / %s", variant, baseline), "ratio variant / baseline (1 = no change)", "")
	p.X.Min = 0
	var names []string
	var ci intervals
	right := 1.2
	for i, r := range rows {
		names = append(names, r.Metric)
		ratio := parse(r.Ratio)
		bar, err := plotter.NewBarChart(plotter.Values{ratio}, vg.Points(12))
		if err != nil {
			return figure{}, fmt.Errorf("%s %s: %w", variant, r.Metric, err)
		}
		bar.Horizontal, bar.XMin = true, float64(i)
		bar.Color, bar.LineStyle.Width = verdictColor(r.Verdict), 0
		p.Add(bar)
		right = math.Max(right, ratio)
		if lo, hi := parse(r.Low), parse(r.High); r.Low != "" && r.High != "" && lo <= ratio && ratio <= hi {
			ci.XYs = append(ci.XYs, plotter.XY{X: ratio, Y: float64(i)})
			ci.XErrors = append(ci.XErrors, struct{ Low, High float64 }{ratio - lo, hi - ratio})
			right = math.Max(right, hi)
		}
	}
	if len(ci.XYs) > 0 {
		bars, err := plotter.NewXErrorBars(ci)
		if err != nil {
			return figure{}, fmt.Errorf("%s intervals: %w", variant, err)
		}
		bars.LineStyle.Width = whiskerWidth
		p.Add(bars)
	}
	if err := addLine(p, "no change", plotter.XYs{{X: 1, Y: -0.5}, {X: 1, Y: float64(len(rows)) - 0.5}}, color.Black, dashes()); err != nil {
		return figure{}, err
	}
	p.X.Max = right * 1.05
	p.NominalY(names...)
	p.Y.Min, p.Y.Max = -0.6, float64(len(rows))-0.4
	height := vg.Length(len(rows))*vg.Centimeter + 3*vg.Centimeter
	out, err := svgSized(p, plotWidth, height)
	if err != nil {
		return figure{}, fmt.Errorf("ratio plot %s: %w", variant, err)
	}
	legend := []legendEntry{lineEntry("no change (ratio 1)", color.Black, dashes(), false)}
	for _, v := range []v1alpha1.CampaignVerdict{v1alpha1.VerdictRegressed, v1alpha1.VerdictImproved, v1alpha1.VerdictNeutral, v1alpha1.VerdictInconclusive} {
		legend = append(legend, legendEntry{Label: string(v), Swatch: "area", Color: hexColor(verdictColor(v))})
	}
	return figure{Kind: "ratio", Variant: variant, SVG: out, Legend: legend,
		Caption: "Ratio of each metric to the baseline's (bar; red Regressed, green Improved, grey Neutral, orange Inconclusive) with its confidence interval (whiskers, when the runs allow one). 1 is no change; for latencies and error rates right of it is worse, for throughput left of it."}, nil
}

// parse reads a figure of the status; one that is not a number reads 0
// (an Inconclusive row without a ratio draws no bar).
func parse(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0
	}
	return v
}
