// Package trend watches a campaign across iterations: from its history
// entries it builds one series per (variant, metric), finds change points
// in each with stats.ChangePoints, and condenses them into the campaign's
// bounded status.changePoints, marking the recent ones and the
// acknowledged ones. It is pure: the controller gives it the entries.
package trend

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sort"
	"strconv"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/comparison"
	"github.com/spanbench/spanbench/campaign/history"
	"github.com/spanbench/spanbench/campaign/stats"
)

// Series is one variant's metric across iterations, oldest first.
type Series struct {
	// Variant names the cell, Metric the operation and statistic
	// (comparison.MetricName).
	Variant, Metric string
	// Direction is which way is better.
	Direction stats.Direction
	// Values are the cell's pooled figures, one per iteration that has
	// them (comparison.Value, the table's rule).
	Values []float64
	// Names name each value's iteration; At is its position in the
	// entries analysed, for ordering change points of different series.
	Names []string
	At    []int
}

// Build selects the series to analyse: the newest trend.iterations
// entries (by scheduled time), and in them every cell that appears and
// every metric of the comparison, for the metric's operations or for
// every operation the cell has. A point without a value (a percentile of
// an operation with no successful request) is left out.
func Build(entries []history.Entry, spec *v1alpha1.BenchmarkCampaignSpec) []Series {
	entries = Newest(entries, spec.Trend.IterationCount())
	var out []Series
	for _, cell := range cellNames(entries) {
		for _, m := range spec.Comparison.EffectiveMetrics() {
			ops := m.Operations
			switch {
			case m.Statistic.IsCapacity():
				ops = []string{comparison.CapacityRow} // a search's one figure
			case len(ops) > 0:
			case comparison.IsMonitoring(m.Statistic):
				ops = monitoringKeys(entries, cell, m.Statistic)
			default:
				ops = operationNames(entries, cell)
			}
			for _, op := range ops {
				if s := build(entries, cell, op, m); len(s.Values) > 0 {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

func build(entries []history.Entry, cell, op string, m v1alpha1.MetricSpec) Series {
	s := Series{Variant: cell, Metric: comparison.MetricName(op, m.Statistic), Direction: stats.LowerIsBetter}
	if m.EffectiveDirection() == v1alpha1.HigherIsBetter {
		s.Direction = stats.HigherIsBetter
	}
	for i := range entries {
		if v, ok := point(&entries[i], cell, op, m.Statistic); ok {
			s.Values, s.Names, s.At = append(s.Values, v), append(s.Names, entries[i].Iteration), append(s.At, i)
		}
	}
	return s
}

// point is the entry's figure of statistic st for the cell and op, or
// false when the iteration has none: a capacity from the cell's searches
// (none when one did not finish), a Cloud Monitoring figure by region or
// method (none when not collected), the others from the operation's
// figures.
func point(e *history.Entry, cell, op string, st v1alpha1.CampaignStatistic) (float64, bool) {
	if st.IsCapacity() || comparison.IsMonitoring(st) {
		c, ok := e.FindCell(cell)
		if !ok {
			return 0, false
		}
		if st.IsCapacity() {
			return c.Capacity.Figure(st)
		}
		return c.Monitoring.Figure(st, op)
	}
	o, ok := e.Find(cell, op)
	if !ok || latency(st) && o.Latency.Count == 0 {
		return 0, false
	}
	v, err := value(st, o)
	return v, err == nil
}

// value is o's figure of statistic s: the server CPU per operation and
// query p99 from its server figures (an iteration without them has no
// point), the others by the comparison table's rule.
func value(s v1alpha1.CampaignStatistic, o *history.Operation) (float64, error) {
	if comparison.IsServerStats(s) && o.Server == nil {
		return 0, errors.New("no server figures")
	}
	switch s {
	case v1alpha1.StatisticServerCPUPerOp:
		return o.Server.CPUMicrosPerOp, nil
	case v1alpha1.StatisticServerQueryP99:
		if o.Server.QueryP99Micros == nil {
			return 0, errors.New("no server query p99")
		}
		return *o.Server.QueryP99Micros, nil
	}
	return comparison.Value(s, comparison.Figures{Throughput: o.Throughput, Latency: o.Latency, OK: o.OK, Failed: o.Errors})
}

// Newest sorts entries by scheduled time and returns the newest n.
func Newest(entries []history.Entry, n int) []history.Entry {
	out := append([]history.Entry(nil), entries...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].ScheduledTime.Before(out[j].ScheduledTime) })
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// cellNames are the cells of the entries, in order of first appearance.
func cellNames(entries []history.Entry) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range entries {
		for _, c := range e.Cells {
			if !seen[c.Name] {
				seen[c.Name] = true
				out = append(out, c.Name)
			}
		}
	}
	return out
}

// monitoringKeys are the regions or methods of the cell's Cloud
// Monitoring figures of s, in order of first appearance.
func monitoringKeys(entries []history.Entry, cell string, s v1alpha1.CampaignStatistic) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range entries {
		if c, ok := e.FindCell(cell); ok {
			for _, k := range c.Monitoring.Keys(s) {
				if !seen[k] {
					seen[k] = true
					out = append(out, k)
				}
			}
		}
	}
	return out
}

func operationNames(entries []history.Entry, cell string) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range entries {
		for _, c := range e.Cells {
			if c.Name != cell {
				continue
			}
			for _, o := range c.Operations {
				if !seen[o.Name] {
					seen[o.Name] = true
					out = append(out, o.Name)
				}
			}
		}
	}
	return out
}

// Analyse finds the change points of every series with the trend's
// settings and returns them as the status holds them: newest last, at
// most v1alpha1.MaxStatusChangePoints (among change points of one
// iteration, the unacknowledged regressions are the last to go), each
// marked Recent when it starts among the latest trend.latest points of
// its series and Acknowledged when the spec covers it. Each series'
// permutations are seeded from seed and the series' names, so an analysis
// is reproducible.
func Analyse(series []Series, t *v1alpha1.TrendSpec, seed int64) ([]v1alpha1.ChangePointStatus, error) {
	opts, err := options(t)
	if err != nil {
		return nil, err
	}
	type found struct {
		at     int
		status v1alpha1.ChangePointStatus
	}
	var all []found
	for _, s := range series {
		if len(s.Values) < 2*stats.DefaultMinSegment {
			continue // too short for a change with a segment on either side
		}
		cps, err := stats.ChangePoints(s.Values, opts, rand.New(rand.NewPCG(uint64(seed), seriesHash(s))))
		if err != nil {
			return nil, fmt.Errorf("variant %s metric %s: %w", s.Variant, s.Metric, err)
		}
		for _, cp := range cps {
			f := found{at: s.At[cp.Index], status: status(s, cp, t.LatestCount())}
			f.status.Acknowledged = covered(t.Acknowledged, &f.status)
			all = append(all, f)
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.at != b.at {
			return a.at < b.at
		}
		return alerting(&a.status) == 0 && alerting(&b.status) == 1
	})
	out := make([]v1alpha1.ChangePointStatus, 0, len(all))
	for _, f := range all {
		out = append(out, f.status)
	}
	if over := len(out) - v1alpha1.MaxStatusChangePoints; over > 0 {
		out = out[over:]
	}
	return out, nil
}

// alerting is 1 for an unacknowledged Regressed change point: the sort
// keeps those longest.
func alerting(cp *v1alpha1.ChangePointStatus) int {
	if cp.Verdict == v1alpha1.VerdictRegressed && !cp.Acknowledged {
		return 1
	}
	return 0
}

func options(t *v1alpha1.TrendSpec) (stats.ChangePointOptions, error) {
	p, err := t.SignificanceFraction()
	if err != nil {
		return stats.ChangePointOptions{}, fmt.Errorf("trend.significance: %w", err)
	}
	mag, err := t.MinMagnitudeFraction()
	if err != nil {
		return stats.ChangePointOptions{}, fmt.Errorf("trend.minMagnitude: %w", err)
	}
	return stats.ChangePointOptions{Window: t.WindowSize(), MaxPValue: p, MinMagnitude: mag}, nil
}

func seriesHash(s Series) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s.Variant + "\x00" + s.Metric))
	return h.Sum64()
}

func status(s Series, cp stats.ChangePoint, latest int) v1alpha1.ChangePointStatus {
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	st := v1alpha1.ChangePointStatus{Variant: s.Variant, Metric: s.Metric, Iteration: s.Names[cp.Index],
		Before: num(cp.Before), After: num(cp.After), PValue: strconv.FormatFloat(cp.PValue, 'g', 3, 64),
		Verdict: v1alpha1.VerdictImproved, Recent: cp.Recent(len(s.Values), latest)}
	if cp.Worsens(s.Direction) {
		st.Verdict = v1alpha1.VerdictRegressed
	}
	return st
}

// Acknowledge marks each change point an acknowledgement covers, and
// unmarks the others: acknowledgements apply as soon as the spec changes,
// without a new analysis.
func Acknowledge(cps []v1alpha1.ChangePointStatus, acks []v1alpha1.Acknowledgement) {
	for i := range cps {
		cps[i].Acknowledged = covered(acks, &cps[i])
	}
}

func covered(acks []v1alpha1.Acknowledgement, cp *v1alpha1.ChangePointStatus) bool {
	for i := range acks {
		if acks[i].Covers(cp) {
			return true
		}
	}
	return false
}

// Regressions are the change points that set Regressed: Regressed,
// recent and not acknowledged.
func Regressions(cps []v1alpha1.ChangePointStatus) []v1alpha1.ChangePointStatus {
	var out []v1alpha1.ChangePointStatus
	for _, cp := range cps {
		if cp.Verdict == v1alpha1.VerdictRegressed && cp.Recent && !cp.Acknowledged {
			out = append(out, cp)
		}
	}
	return out
}

// latency says whether s is read from the latency histogram, so that an
// operation that recorded none has no value for it.
func latency(s v1alpha1.CampaignStatistic) bool {
	return s != v1alpha1.StatisticThroughput && s != v1alpha1.StatisticErrorRate && s != v1alpha1.StatisticTpmC && !s.IsCapacity()
}
