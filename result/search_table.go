package result

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// WriteSearchHeading prints how a capacity search searches and the step
// table's heading: what `spanbench run` prints before its first step and
// `spanbench report` before the steps.
func WriteSearchHeading(w io.Writer, s *Search) {
	fmt.Fprintf(w, "capacity search: %s to %s ops/s, resolution %s, confirm %s; at most %d steps of %s warm-up + %s measured (worst case %s)\n",
		rateText(s.From), rateText(s.Max), rateText(s.Resolution), s.Confirm, s.MaxSteps, seconds(s.WarmUpSeconds), seconds(s.StepSeconds),
		seconds(float64(s.MaxSteps)*(s.WarmUpSeconds+s.StepSeconds)))
	fmt.Fprintf(w, "SLO: %s\n", strings.Join(s.SLO, ", "))
	cols := []string{fmt.Sprintf("%4s", "step"), fmt.Sprintf("%10s", "offered/s"), fmt.Sprintf("%10s", "achieved/s"), fmt.Sprintf("%8s", "cpu")}
	for _, c := range s.SLO {
		cols = append(cols, fmt.Sprintf("%*s", figureWidth(c), c))
	}
	fmt.Fprintln(w, strings.Join(append(cols, "verdict"), "  "))
}

// WriteSearchStep prints step i (from 1) of a search as a row of the
// table WriteSearchHeading heads.
func WriteSearchStep(w io.Writer, i int, st *SearchStep) {
	cpu := "-"
	if st.CPU != nil {
		cpu = fmt.Sprintf("%.1f%%", *st.CPU*100)
	}
	cols := []string{fmt.Sprintf("%4d", i), fmt.Sprintf("%10s", rateText(st.Offered)), fmt.Sprintf("%10.1f", st.Achieved), fmt.Sprintf("%8s", cpu)}
	for _, f := range st.Figures {
		cols = append(cols, fmt.Sprintf("%*s", figureWidth(f.Condition), figureText(f)))
	}
	verdict := "pass"
	if !st.Pass {
		verdict = "FAIL"
	}
	fmt.Fprintln(w, strings.Join(append(cols, verdict), "  "))
}

// WriteSearchOutcome prints the capacity line (and the first failing rate
// and what it failed).
func WriteSearchOutcome(w io.Writer, s *Search) {
	o := &s.Outcome
	switch {
	case !o.Done:
		fmt.Fprintf(w, "capacity: search not finished after %d steps; highest passing rate so far %s ops/s\n", len(o.Steps), rateText(o.Capacity))
	case o.Capacity == 0:
		fmt.Fprintf(w, "capacity: below %s ops/s, the first rate, which failed %s (%s)\n", rateText(o.FirstFailing), strings.Join(o.FailedConditions, ", "), o.Reason)
	case o.FirstFailing == 0:
		fmt.Fprintf(w, "capacity: at least %s ops/s: max passed (%s, %d steps)\n", rateText(o.Capacity), o.Reason, len(o.Steps))
	default:
		fmt.Fprintf(w, "capacity: %s ops/s; first failing rate %s ops/s, which failed %s (%s, %d steps)\n",
			rateText(o.Capacity), rateText(o.FirstFailing), strings.Join(o.FailedConditions, ", "), o.Reason, len(o.Steps))
	}
	if o.CapacityPerNode > 0 {
		fmt.Fprintf(w, "capacity per node (1,000 processing units): %s ops/s\n", rateText(o.CapacityPerNode))
	}
}

// writeSearchTable prints a search document's steps and outcome.
func writeSearchTable(w io.Writer, s *Search) {
	if s == nil {
		return
	}
	fmt.Fprintln(w)
	WriteSearchHeading(w, s)
	for i := range s.Outcome.Steps {
		WriteSearchStep(w, i+1, &s.Outcome.Steps[i])
	}
	WriteSearchOutcome(w, s)
}

// figureText is a figure as the table shows it (ValueText), marked "x"
// when it failed.
func figureText(f SearchFigure) string {
	v := f.ValueText()
	if f.Measured && f.Note == "" && !f.Pass {
		v += " x"
	}
	return v
}

// ValueText is a figure as the step table and the run's status show it:
// a latency (a condition on a percentile, "p99 <= 20ms") as a duration,
// other figures as percents; the note, or "-", where it has no value.
func (f SearchFigure) ValueText() string {
	if !f.HasValue() {
		if f.Note != "" {
			return f.Note
		}
		return "-"
	}
	if isLatencyCondition(f.Condition) {
		return (time.Duration(f.Value) * time.Microsecond).String()
	}
	return fmt.Sprintf("%.2f%%", f.Value*100)
}

// HasValue says the figure has a value to show: it was measured and no
// note stands in its place (a failed figure whose note says why it has
// none, such as "no successful operation").
func (f SearchFigure) HasValue() bool { return f.Measured && (f.Note == "" || f.Pass) }

// BaseValue is the figure in its base unit, where it has a value:
// seconds for a latency, the ratio (0.001 for 0.1 %) otherwise. The run's
// status (status.search's baseValue) and its Prometheus series hold it.
func (f SearchFigure) BaseValue() (float64, bool) {
	if !f.HasValue() {
		return 0, false
	}
	if isLatencyCondition(f.Condition) {
		return f.Value / 1e6, true
	}
	return f.Value, true
}

// isLatencyCondition says a condition's text is a percentile's (p99...).
func isLatencyCondition(c string) bool {
	return len(c) > 1 && c[0] == 'p' && c[1] >= '0' && c[1] <= '9'
}

func figureWidth(condition string) int { return max(len(condition), 12) }

// rateText prints a rate without trailing zeros.
func rateText(f float64) string { return fmt.Sprintf("%.6g", f) }

func seconds(s float64) string {
	return (time.Duration(s * float64(time.Second))).String()
}
