// Package comparison assembles a campaign iteration's comparison table:
// from each run's result document, per cell and repetition, it compares
// every non-baseline cell with the baseline on every metric and operation
// the campaign names (package stats does the statistics), and condenses
// the rows into the campaign's verdict and its bounded status table. It is
// pure: the CLI and the campaign controller give it the documents.
package comparison

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/stats"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
)

// Cell is one cell's results in an iteration.
type Cell struct {
	// Name names the cell (plan.Cell.Name).
	Name string
	// Runs are the result documents of its repetitions, in any order.
	Runs []*result.Document
	// Invalid says why runs of the cell have no document: their reports
	// failed the checks a run's aggregation applies. Every row of the
	// cell is then Invalid with these reasons, never a verdict.
	Invalid []string
}

// Table is an iteration's comparison.
type Table struct {
	// Baseline names the baseline cell.
	Baseline string
	// Rows are variant × metric × operation, in the order of the cells,
	// then the metrics, then the operations.
	Rows []stats.Row
	// Verdict is Regressed if any row is, else Improved if any row is,
	// else Neutral if every row is, else Inconclusive.
	Verdict stats.Verdict
}

// Assemble compares every cell but cells[baseline] with the baseline.
// With two or more runs in both cells a metric is compared run by run
// (stats.CompareRuns, one exact value per run); with one run in either, by
// sectioning of the runs' measurement intervals
// (stats.CompareIntervals). A metric that cannot be
// compared (an operation without successful requests, too few intervals)
// gives an Inconclusive row that says why, never an error: one bad figure
// must not hide the rest of the table.
func Assemble(spec *v1alpha1.ComparisonSpec, cells []Cell, baseline int) (Table, error) {
	if baseline < 0 || baseline >= len(cells) {
		return Table{}, fmt.Errorf("baseline cell %d of %d", baseline, len(cells))
	}
	base := cells[baseline]
	if len(base.Runs) == 0 && len(base.Invalid) == 0 {
		return Table{}, fmt.Errorf("the baseline cell %s has no results", base.Name)
	}
	opts, err := options(spec)
	if err != nil {
		return Table{}, err
	}
	t := Table{Baseline: base.Name}
	for i, c := range cells {
		if i == baseline {
			continue
		}
		if len(c.Runs) == 0 && len(c.Invalid) == 0 {
			return Table{}, fmt.Errorf("cell %s has no results", c.Name)
		}
		if len(base.Invalid)+len(c.Invalid) > 0 {
			t.Rows = append(t.Rows, invalidRows(spec, base, c)...)
			continue
		}
		for _, m := range spec.EffectiveMetrics() {
			for _, op := range operations(m, base.Runs) {
				t.Rows = append(t.Rows, compare(base, c, op, m, opts))
			}
		}
	}
	t.Verdict = Overall(t.Rows)
	return t, nil
}

func options(spec *v1alpha1.ComparisonSpec) (stats.Options, error) {
	minEffect, err := spec.MinEffectFraction()
	if err != nil {
		return stats.Options{}, fmt.Errorf("comparison.minEffect: %w", err)
	}
	confidence, err := spec.ConfidenceFraction()
	if err != nil {
		return stats.Options{}, fmt.Errorf("comparison.confidence: %w", err)
	}
	return stats.Options{Confidence: confidence, MinEffect: minEffect}, nil
}

// operations are the metric's operations, or every operation of the
// baseline's first run (for Cloud Monitoring's figures, every region or
// method of the baseline's runs; for ServerQueryP99, its operations that
// have one; for CostPerMillionOps, the one row "overall").
func operations(m v1alpha1.MetricSpec, base []*result.Document) []string {
	if len(m.Operations) > 0 {
		return m.Operations
	}
	if IsMonitoring(m.Statistic) {
		return monitoringKeys(m.Statistic, base)
	}
	if m.Statistic.IsCapacity() {
		return []string{CapacityRow}
	}
	doc := base[0]
	if m.Statistic == v1alpha1.StatisticTpmC {
		return newOrderOperations(doc)
	}
	if m.Statistic == v1alpha1.StatisticServerQueryP99 {
		return serverQueryOperations(doc)
	}
	if IsCost(m.Statistic) {
		return []string{costOperation} // one figure per run: one row
	}
	var out []string
	for _, o := range doc.Totals {
		out = append(out, o.Name)
	}
	return out
}

// metricUnits are the statistics' suffixes in metric names: the one table
// MetricName and ParseMetric read.
var metricUnits = []struct {
	statistic v1alpha1.CampaignStatistic
	suffix    string
}{
	// Before " p99 µs", which ParseMetric would read first otherwise
	// (an operation's name has no space: no other name ends so).
	{v1alpha1.StatisticServerLatencyP99, " server p99 µs"},
	{v1alpha1.StatisticServerQueryP99, " server query p99 µs"},
	{v1alpha1.StatisticServerHighPriorityCPU, " high-priority CPU %"},
	// Before Throughput's, whose suffix ends theirs.
	{v1alpha1.StatisticCapacityRowsPerNode, " capacity rows/s per node"},
	{v1alpha1.StatisticCapacityPerNode, " capacity ops/s per node"},
	{v1alpha1.StatisticCapacity, " capacity ops/s"},
	{v1alpha1.StatisticThroughput, " ops/s"},
	{v1alpha1.StatisticP50, " p50 µs"},
	{v1alpha1.StatisticP90, " p90 µs"},
	{v1alpha1.StatisticP99, " p99 µs"},
	{v1alpha1.StatisticP999, " p99.9 µs"},
	{v1alpha1.StatisticErrorRate, " errors %"},
	{v1alpha1.StatisticServerCPUPerOp, " server CPU µs/op"},
	{v1alpha1.StatisticTpmC, " tpmC"},
	{v1alpha1.StatisticCostPerMillionOps, " cost per million ops"},
}

// MetricName names a metric in the table and in acknowledgements:
// "<operation> p99 µs", "<operation> ops/s", "<operation> errors %".
func MetricName(op string, s v1alpha1.CampaignStatistic) string {
	for _, u := range metricUnits {
		if u.statistic == s {
			return op + u.suffix
		}
	}
	return op + " " + string(s)
}

// ParseMetric is MetricName's inverse: the operation and statistic of a
// metric name, or false for a name MetricName does not make.
func ParseMetric(metric string) (string, v1alpha1.CampaignStatistic, bool) {
	for _, u := range metricUnits {
		if op, ok := strings.CutSuffix(metric, u.suffix); ok && op != "" {
			return op, u.statistic, true
		}
	}
	return "", "", false
}

func compare(base, variant Cell, op string, m v1alpha1.MetricSpec, o stats.Options) stats.Row {
	row := stats.Row{Variant: variant.Name, Metric: MetricName(op, m.Statistic)}
	if err := unverified(append(slices.Clone(base.Runs), variant.Runs...)...); err != nil {
		row.Comparison = stats.Comparison{Verdict: stats.Inconclusive, Reason: err.Error(), NBaseline: len(base.Runs), NVariant: len(variant.Runs)}
		return row
	}
	if why := overSearch(m.Statistic, base, variant); why != "" {
		row.Comparison = stats.Comparison{Verdict: stats.Invalid, Reason: why, NBaseline: len(base.Runs), NVariant: len(variant.Runs)}
		return row
	}
	o.Direction = stats.LowerIsBetter
	if m.EffectiveDirection() == v1alpha1.HigherIsBetter {
		o.Direction = stats.HigherIsBetter
	}
	var err error
	row.Baseline, err = pooled(base.Runs, op, m.Statistic)
	if err == nil {
		row.Value, err = pooled(variant.Runs, op, m.Statistic)
	}
	if err != nil && serverSide(m.Statistic) {
		row.Baseline, row.Value = orNotCollected(base.Runs, op, m.Statistic), orNotCollected(variant.Runs, op, m.Statistic)
	}
	if err == nil && m.Statistic == v1alpha1.StatisticErrorRate && row.Baseline == 0 && row.Value == 0 {
		// No failure on either side: no change, and no ratio of zeros to
		// estimate.
		row.Comparison = stats.Comparison{Ratio: 1, Verdict: stats.Neutral, Reason: "no errors on either side",
			NBaseline: len(base.Runs), NVariant: len(variant.Runs)}
		return row
	}
	if err == nil {
		if len(base.Runs) >= 2 && len(variant.Runs) >= 2 {
			row.Comparison, err = byRuns(base.Runs, variant.Runs, op, m.Statistic, o)
		} else {
			row.Comparison, err = byIntervals(base.Runs[0], variant.Runs[0], op, m.Statistic, o)
		}
	}
	if err != nil {
		row.Comparison = stats.Comparison{Verdict: stats.Inconclusive, Reason: err.Error(),
			NBaseline: len(base.Runs), NVariant: len(variant.Runs)}
	}
	return row
}

func byRuns(base, variant []*result.Document, op string, s v1alpha1.CampaignStatistic, o stats.Options) (stats.Comparison, error) {
	b, err := perRun(base, op, s)
	if err != nil {
		return stats.Comparison{}, err
	}
	v, err := perRun(variant, op, s)
	if err != nil {
		return stats.Comparison{}, err
	}
	return stats.CompareRuns(b, v, o)
}

// perRun is one exact value per run: the statistic of the run's merged
// totals for the operation.
func perRun(docs []*result.Document, op string, s v1alpha1.CampaignStatistic) ([]float64, error) {
	if f, ok := runFigures[s]; ok {
		return eachRun(docs, op, f)
	}
	out := make([]float64, len(docs))
	for i, d := range docs {
		t, err := totals(d, op)
		if err != nil {
			return nil, err
		}
		if out[i], err = Value(s, Figures{Throughput: t.Throughput, Latency: t.Latency, OK: t.OK, Failed: t.ErrorCount()}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func totals(d *result.Document, op string) (*result.Operation, error) {
	for i := range d.Totals {
		if d.Totals[i].Name == op {
			return &d.Totals[i], nil
		}
	}
	return nil, fmt.Errorf("run %s has no operation %q", d.Run, op)
}

// pooled is the cell's figure for the table (see Pool).
func pooled(docs []*result.Document, op string, s v1alpha1.CampaignStatistic) (float64, error) {
	if f, ok := runFigures[s]; ok {
		return meanOfRuns(docs, op, f)
	}
	p, err := PoolRuns(docs, op)
	if err != nil {
		return 0, err
	}
	return p.Statistic(s)
}

func percentile(s v1alpha1.CampaignStatistic) (float64, error) {
	switch s {
	case v1alpha1.StatisticP50:
		return 50, nil
	case v1alpha1.StatisticP90:
		return 90, nil
	case v1alpha1.StatisticP99:
		return 99, nil
	case v1alpha1.StatisticP999:
		return 99.9, nil
	}
	return 0, fmt.Errorf("%q is not a percentile", s)
}

func decode(s string) (*hdr.Histogram, error) {
	if s == "" {
		return histogram.New(), nil
	}
	return histogram.Decode(s)
}

func byIntervals(base, variant *result.Document, op string, s v1alpha1.CampaignStatistic, o stats.Options) (stats.Comparison, error) {
	if serverSide(s) || s.IsCapacity() {
		return stats.Comparison{}, errNeedsRuns(s)
	}
	rate := s == v1alpha1.StatisticErrorRate
	if s == v1alpha1.StatisticTpmC {
		if err := tpmCComparable(op, base, variant); err != nil {
			return stats.Comparison{}, err
		}
	}
	// tpmC is the NewOrder operation's throughput times 60: the same ratio.
	stat := stats.Statistic{Throughput: s == v1alpha1.StatisticThroughput || rate || s == v1alpha1.StatisticTpmC}
	if !stat.Throughput {
		p, err := percentile(s)
		if err != nil {
			return stats.Comparison{}, err
		}
		stat.Percentile = p
	}
	b, bFailed, err := intervals(base, op)
	if err != nil {
		return stats.Comparison{}, err
	}
	v, vFailed, err := intervals(variant, op)
	if err != nil {
		return stats.Comparison{}, err
	}
	if rate {
		b, v = stats.ErrorRateIntervals(b, bFailed), stats.ErrorRateIntervals(v, vFailed)
	}
	return stats.CompareIntervals(b, v, stat, o, stats.BootstrapOptions{})
}

// series is the time series of d that holds op: the document's own
// intervals, or in a streams document (whose top level has none: its
// streams' windows differ) the intervals of the one stream that runs op.
// A row of a streams run is thus a verdict on op in its own stream: for
// a stream that runs in a mix, how the other streams' load changed it. An
// operation that several streams run has no single time series (each
// stream's intervals count from its own start), so it is refused with
// their names; with repetitions its rows compare the run's totals, which
// merge every stream's.
func series(d *result.Document, op string) ([]result.Interval, error) {
	if !d.HasStreams() {
		return d.Intervals, nil
	}
	s, err := StreamOf(d, op)
	if err != nil {
		return nil, err
	}
	return s.Intervals, nil
}

// ErrNoStream is StreamOf's error for an operation of the spec that no
// stream of the run ran (a stream removed by a variant's patch).
var ErrNoStream = errors.New("no stream runs it")

// StreamOf is the one stream of streams document d that runs op, whose
// intervals are op's time series (series); an error names the streams
// when none or several do. spanbench compare reads a streams result's
// series through it too.
func StreamOf(d *result.Document, op string) (*result.StreamSection, error) {
	var found *result.StreamSection
	var names []string
	for i := range d.Streams {
		if ran(d.Streams[i].Intervals, op) {
			found, names = &d.Streams[i], append(names, d.Streams[i].Name)
		}
	}
	switch len(names) {
	case 0:
		return nil, fmt.Errorf("run %s: operation %s: %w", d.Run, op, ErrNoStream)
	case 1:
		return found, nil
	}
	return nil, fmt.Errorf("run %s: operation %s runs in streams %s, each timed from its own start: one repetition has no single series of it (repeat the cells to compare its totals)",
		d.Run, op, strings.Join(names, ", "))
}

// ran says op completed at least once in the intervals (a stream's
// sections list every operation of the spec, with zero counts for the
// ones it does not run).
func ran(intervals []result.Interval, op string) bool {
	return slices.ContainsFunc(intervals, func(in result.Interval) bool {
		return slices.ContainsFunc(in.Operations, func(o result.IntervalOperation) bool {
			return o.Name == op && o.OK+o.NotFound+o.ErrorCount() > 0
		})
	})
}

// intervals are the run's measured (not warm-up) intervals of op, and
// its failed operations in each.
func intervals(d *result.Document, op string) ([]stats.Interval, []int64, error) {
	var out []stats.Interval
	var failed []int64
	all, err := series(d, op)
	if err != nil {
		return nil, nil, err
	}
	for _, in := range all {
		if in.WarmUp {
			continue
		}
		si := stats.Interval{Latency: histogram.New(), Seconds: d.IntervalSeconds}
		var f int64
		for _, o := range in.Operations {
			if o.Name != op {
				continue
			}
			h, err := decode(o.LatencyHistogram)
			if err != nil {
				return nil, nil, fmt.Errorf("run %s interval %d operation %s: %w", d.Run, in.Index, op, err)
			}
			si.Latency, si.Ops = h, int64(o.OK)
			for _, n := range o.Errors {
				f += int64(n)
			}
		}
		out = append(out, si)
		failed = append(failed, f)
	}
	return out, failed, nil
}

// Overall is the verdict of a set of rows: Invalid if any row is (a
// result failed its checks: nothing is claimed), else Regressed if any row is, else
// Improved if any row is, else Neutral if every row is, else Inconclusive.
func Overall(rows []stats.Row) stats.Verdict {
	count := map[stats.Verdict]int{}
	for _, r := range rows {
		count[r.Comparison.Verdict]++
	}
	switch {
	case count[stats.Invalid] > 0:
		return stats.Invalid
	case count[stats.Regressed] > 0:
		return stats.Regressed
	case count[stats.Improved] > 0:
		return stats.Improved
	case len(rows) > 0 && count[stats.Neutral] == len(rows):
		return stats.Neutral
	}
	return stats.Inconclusive
}

// Status is the table as a campaign's status holds it: at most
// v1alpha1.MaxComparisonRows rows, Invalid first, then Regressed, Improved,
// Inconclusive and Neutral (the rows a reader must see come first), with
// the number left out.
func (t Table) Status(iteration string) v1alpha1.ComparisonStatus {
	rows := byImportance(t.Rows)
	out := v1alpha1.ComparisonStatus{Iteration: iteration, Baseline: t.Baseline, Verdict: v1alpha1.CampaignVerdict(t.Verdict)}
	if len(rows) > v1alpha1.MaxComparisonRows {
		out.OmittedRows = int32(len(rows) - v1alpha1.MaxComparisonRows)
		rows = rows[:v1alpha1.MaxComparisonRows]
	}
	for _, r := range rows {
		out.Rows = append(out.Rows, statusRow(r))
	}
	return out
}

// byImportance is a copy of rows, Invalid first, then Regressed, Improved,
// Inconclusive and Neutral, each in the table's order: where rows must be
// left out, the ones a reader must see stay.
func byImportance(rows []stats.Row) []stats.Row {
	out := append([]stats.Row(nil), rows...)
	rank := map[stats.Verdict]int{stats.Invalid: -1, stats.Regressed: 0, stats.Improved: 1, stats.Inconclusive: 2, stats.Neutral: 3}
	sort.SliceStable(out, func(i, j int) bool { return rank[out[i].Comparison.Verdict] < rank[out[j].Comparison.Verdict] })
	return out
}

// maxRowOperation is the status row's bound of its operation (the CRD's
// MaxLength): a Cloud Monitoring label may be longer than an operation's
// name; such a row is kept without its operation field.
const maxRowOperation = 63

func statusRow(r stats.Row) v1alpha1.ComparisonRow {
	c := r.Comparison
	num := func(v float64, digits int) string {
		if math.IsNaN(v) {
			return NotCollected
		}
		return strconv.FormatFloat(v, 'g', digits, 64)
	}
	row := v1alpha1.ComparisonRow{
		Variant: r.Variant, Metric: r.Metric, Baseline: num(r.Baseline, 6), Value: num(r.Value, 6),
		Ratio: strconv.FormatFloat(c.Ratio, 'f', 3, 64), N: fmt.Sprintf("%d+%d", c.NBaseline, c.NVariant),
		Verdict: v1alpha1.CampaignVerdict(c.Verdict),
	}
	if op, st, ok := ParseMetric(r.Metric); ok && len(op) <= maxRowOperation {
		row.Operation, row.Statistic = op, st
	}
	if c.HasInterval {
		row.Low, row.High = strconv.FormatFloat(c.Lo, 'f', 3, 64), strconv.FormatFloat(c.Hi, 'f', 3, 64)
		row.Confidence = strconv.FormatFloat(100*c.Confidence, 'f', 1, 64) + "%"
	}
	if c.Method != "" {
		row.PValue = num(c.PValue, 3)
	}
	return row
}

// invalidRows are the rows of variant c when either side holds a run
// whose report failed its checks: each metric Invalid, with the reasons.
// Their operations are the metric's, or those of the valid runs there
// are; with none, one row per metric names no operation.
func invalidRows(spec *v1alpha1.ComparisonSpec, base, c Cell) []stats.Row {
	reason := strings.Join(append(append([]string(nil), base.Invalid...), c.Invalid...), "; ")
	var rows []stats.Row
	for _, m := range spec.EffectiveMetrics() {
		ops := m.Operations
		switch {
		case len(ops) > 0:
		case len(base.Runs) > 0:
			ops = operations(m, base.Runs)
		case len(c.Runs) > 0:
			ops = operations(m, c.Runs)
		default:
			ops = []string{""}
		}
		for _, op := range ops {
			rows = append(rows, stats.Row{Variant: c.Name, Metric: strings.TrimSpace(MetricName(op, m.Statistic)),
				Comparison: stats.Comparison{Verdict: stats.Invalid, Reason: reason, NBaseline: len(base.Runs), NVariant: len(c.Runs)}})
		}
	}
	return rows
}
