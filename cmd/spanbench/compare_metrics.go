//go:build !runner

package main

import (
	"errors"
	"fmt"

	"github.com/spanbench/spanbench/campaign/stats"
)

// metric is one figure compare reports per operation.
type metric struct {
	label      string
	direction  stats.Direction
	percentile float64 // of successful operations' latency; 0 for the others
	errorRate  bool
}

// compareMetrics are the figures compared per operation, in table order.
func compareMetrics() []metric {
	return []metric{
		{label: "ops/s", direction: stats.HigherIsBetter},
		{label: "p50 (µs)", percentile: 50},
		{label: "p99 (µs)", percentile: 99},
		{label: "p99.9 (µs)", percentile: 99.9},
		{label: "errors (%)", errorRate: true},
	}
}

// value is the metric's exact figure for a run, or for runs pooled by
// pool: a percentile is read from the merged histogram.
func (m metric) value(s *opSeries) float64 {
	switch {
	case m.errorRate:
		return stats.ErrorRate(s.ok, s.errs)
	case m.percentile > 0:
		return float64(s.merged.ValueAtQuantile(m.percentile))
	}
	return float64(s.ok) / s.seconds
}

// bootstrapInput is what stats.CompareIntervals sections for the metric.
func (m metric) bootstrapInput(s *opSeries) ([]stats.Interval, stats.Statistic) {
	switch {
	case m.percentile > 0:
		return s.intervals, stats.Statistic{Percentile: m.percentile}
	case m.errorRate:
		return stats.ErrorRateIntervals(s.intervals, s.errors), stats.Statistic{Throughput: true}
	}
	return s.intervals, stats.Statistic{Throughput: true}
}

// compareOptions are compare's statistical settings.
type compareOptions struct {
	stats    stats.Options
	sections int
}

// errNothingToCompare marks a metric that is zero on both sides (typically
// an error rate without errors): no row, and nothing worth a note.
var errNothingToCompare = errors.New("zero on both sides")

// incomparableError is a metric a ratio cannot describe (a zero on one
// side): a note under the table, while the other rows still stand.
type incomparableError struct{ reason string }

func (e *incomparableError) Error() string { return e.reason }

// compareMetric compares one operation's metric between the baseline's
// runs and a variant's. One run per side: sectioning (Student t) over
// the two runs' measured intervals. More: the runs' exact values, one per
// run, by stats.CompareRuns. The figures printed are the sides' pooled
// values (histograms merged across runs, never percentiles averaged).
func compareMetric(base, variant []*opSeries, m metric, o compareOptions) (stats.Row, error) {
	pb, err := pool(base)
	if err != nil {
		return stats.Row{}, err
	}
	pv, err := pool(variant)
	if err != nil {
		return stats.Row{}, err
	}
	row := stats.Row{Baseline: m.value(pb), Value: m.value(pv)}
	switch {
	case row.Baseline == 0 && row.Value == 0:
		return row, errNothingToCompare
	case !(row.Baseline > 0 && row.Value > 0):
		return row, &incomparableError{fmt.Sprintf("baseline %.4g, variant %.4g: no ratio with a zero side", row.Baseline, row.Value)}
	}
	opts := o.stats
	opts.Direction = m.direction
	if len(base) == 1 && len(variant) == 1 {
		ib, stat := m.bootstrapInput(base[0])
		iv, _ := m.bootstrapInput(variant[0])
		row.Comparison, err = stats.CompareIntervals(ib, iv, stat, opts, stats.BootstrapOptions{Sections: o.sections})
		return row, err
	}
	vb, err := runValues("baseline", base, m)
	if err != nil {
		return row, err
	}
	vv, err := runValues("variant", variant, m)
	if err != nil {
		return row, err
	}
	row.Comparison, err = stats.CompareRuns(vb, vv, opts)
	return row, err
}

// runValues is each run's exact value of the metric; a run without a value
// (no errors, no successes) leaves the metric without a ratio.
func runValues(side string, runs []*opSeries, m metric) ([]float64, error) {
	v := make([]float64, len(runs))
	for i, r := range runs {
		if v[i] = m.value(r); !(v[i] > 0) {
			return nil, &incomparableError{fmt.Sprintf("%s run %d has %g: no ratio with a zero run", side, i+1, v[i])}
		}
	}
	return v, nil
}
