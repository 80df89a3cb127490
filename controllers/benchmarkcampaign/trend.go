package benchmarkcampaign

import (
	"fmt"
	"strings"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/history"
	"github.com/spanbench/spanbench/campaign/trend"
)

// After each iteration the trend looks for change points in every
// (variant, metric) series of the history (campaign/trend over
// stats.ChangePoints) and writes them to status.changePoints. A recent,
// unacknowledged change in the bad direction sets Regressed, as does the
// latest comparison's Regressed verdict; the condition's message names
// the cause(s). Acknowledgements apply at the next reconcile, without
// waiting for an iteration.

// Reasons of the Regressed condition.
const (
	reasonNoRegression       = "NoRegression"
	reasonRegressedByVerdict = "Verdict"
	reasonRegressedByTrend   = "Trend"
	reasonRegressedByBoth    = "VerdictAndTrend"
	// maxCausesShown bounds the change points a message names.
	maxCausesShown = 3
)

// analyseTrend sets status.changePoints from the history's entries and
// returns what kept it from doing so.
func analyseTrend(c *v1alpha1.BenchmarkCampaign, entries []history.Entry) string {
	cps, err := trend.Analyse(trend.Build(entries, &c.Spec), &c.Spec.Trend, c.Spec.OrderSeed())
	if err != nil {
		return err.Error()
	}
	c.Status.ChangePoints = cps
	return ""
}

// regression refreshes the change points' acknowledgements from the spec
// and the verdict (Regressed when the trend is, else the latest
// comparison's), and says whether the campaign is Regressed, with the
// condition's reason and a message naming the cause(s).
func regression(c *v1alpha1.BenchmarkCampaign) (bool, string, string) {
	trend.Acknowledge(c.Status.ChangePoints, c.Spec.Trend.Acknowledged)
	regs := trend.Regressions(c.Status.ChangePoints)
	byVerdict := c.Status.Comparison != nil && c.Status.Comparison.Verdict == v1alpha1.VerdictRegressed
	switch {
	case len(regs) > 0:
		c.Status.Verdict = v1alpha1.VerdictRegressed
	case c.Status.Comparison != nil:
		c.Status.Verdict = c.Status.Comparison.Verdict
	}
	var causes []string
	if byVerdict {
		causes = append(causes, fmt.Sprintf("iteration %s's comparison is Regressed", c.Status.Comparison.Iteration))
	}
	if len(regs) > 0 {
		causes = append(causes, "trend: "+describeRegressions(regs))
	}
	switch {
	case byVerdict && len(regs) > 0:
		return true, reasonRegressedByBoth, strings.Join(causes, "; ")
	case byVerdict:
		return true, reasonRegressedByVerdict, causes[0]
	case len(regs) > 0:
		return true, reasonRegressedByTrend, causes[0]
	}
	return false, reasonNoRegression, fmt.Sprintf("verdict %s; no unacknowledged regression among the latest %d iterations",
		orNone(c.Status.Verdict), c.Spec.Trend.LatestCount())
}

// describeRegressions names the change points, newest first, at most
// maxCausesShown.
func describeRegressions(regs []v1alpha1.ChangePointStatus) string {
	var parts []string
	for i := len(regs) - 1; i >= 0 && len(parts) < maxCausesShown; i-- {
		cp := regs[i]
		parts = append(parts, fmt.Sprintf("%s %s from %s to %s at iteration %s", cp.Variant, cp.Metric, cp.Before, cp.After, cp.Iteration))
	}
	if more := len(regs) - len(parts); more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(parts, ", ")
}
