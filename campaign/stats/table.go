package stats

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"
)

// Row is one line of a comparison table: a variant's metric against the
// baseline's.
type Row struct {
	// Variant names the variant (cell).
	Variant string
	// Metric names the metric, e.g. "read p99" or "update ops/s".
	Metric string
	// Baseline and Value are the baseline's and the variant's figure in the
	// metric's unit (each read from a merged histogram, never an average of
	// percentiles).
	Baseline, Value float64
	// Comparison is the variant against the baseline.
	Comparison Comparison
}

// WriteTable prints rows as a benchstat-style table: variant | metric |
// baseline | value | ratio | CI | n | p | verdict. A missing interval
// prints as "-" so no reader mistakes it for a narrow one.
func WriteTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VARIANT\tMETRIC\tBASELINE\tVALUE\tRATIO\tCI\tN\tP\tVERDICT")
	for _, r := range rows {
		c := r.Comparison
		ci := "-"
		if c.HasInterval {
			ci = fmt.Sprintf("[%.3f, %.3f] @%.0f%%", c.Lo, c.Hi, 100*c.Confidence)
		}
		p := "-"
		if c.Method != "" && !math.IsNaN(c.PValue) {
			p = fmt.Sprintf("%.3g", c.PValue)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.3f\t%s\t%d+%d\t%s\t%s\n",
			r.Variant, r.Metric, side(r.Baseline), side(r.Value), c.Ratio, ci, c.NBaseline, c.NVariant, p, c.Verdict)
	}
	return tw.Flush()
}

// side is a side's figure, or "-" when the side has none (NaN: a figure
// its runs lack, such as a server figure not collected).
func side(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.4g", v)
}
