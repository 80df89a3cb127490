package comparison

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/stats"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
)

var t0 = time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)

// runDoc is a finalized result of one run: 20 one-second intervals of 200
// reads each, latencies around 1 ms × scale with run-to-run noise.
func runDoc(t *testing.T, rng *rand.Rand, name string, scale float64) *result.Document {
	t.Helper()
	spec, err := result.NewSpec([]byte(`{"type":"YCSB","operations":[{"name":"read","type":"Read","weight":1}],` +
		`"load":{"rate":200},"duration":"20s","warmUp":{"mode":"None"}}`))
	if err != nil {
		t.Fatal(err)
	}
	const intervals = 20
	d := &result.Document{SchemaVersion: result.SchemaVersion, Run: name, Spec: spec, Start: t0,
		End: t0.Add(intervals * time.Second), IntervalSeconds: 1}
	runNoise := 1 + 0.01*rng.NormFloat64()
	for i := range intervals {
		h := histogram.New()
		for range 200 {
			v := 1000 * scale * runNoise * (1 + 0.2*rng.ExpFloat64())
			if err := h.RecordValue(int64(v)); err != nil {
				t.Fatal(err)
			}
		}
		enc, err := histogram.Encode(h)
		if err != nil {
			t.Fatal(err)
		}
		d.Intervals = append(d.Intervals, result.Interval{Index: i, TargetRate: 200, Operations: []result.IntervalOperation{{
			Name: "read", Counts: result.Counts{OK: 200}, Histograms: result.Histograms{LatencyHistogram: enc, ServiceHistogram: enc}}}})
	}
	if err := result.Finalize(d); err != nil {
		t.Fatal(err)
	}
	return d
}

func cellOf(t *testing.T, rng *rand.Rand, name string, scale float64, reps int) Cell {
	c := Cell{Name: name}
	for k := range reps {
		c.Runs = append(c.Runs, runDoc(t, rng, fmt.Sprintf("%s-r%d", name, k+1), scale))
	}
	return c
}

func rowFor(t *testing.T, tab Table, variant, metric string) stats.Row {
	t.Helper()
	for _, r := range tab.Rows {
		if r.Variant == variant && r.Metric == metric {
			return r
		}
	}
	t.Fatalf("no row %s / %s in %+v", variant, metric, tab.Rows)
	return stats.Row{}
}

func TestAssembleComparesEveryVariantWithTheBaseline(t *testing.T) {
	for _, tc := range []struct {
		name        string
		reps        int
		scale       float64
		wantMethod  string
		wantVerdict stats.Verdict
	}{
		{"five runs a cell, 30 % slower", 5, 1.3, stats.MethodExact, stats.Regressed},
		{"one run a cell, 30 % slower", 1, 1.3, stats.MethodSectioning, stats.Regressed},
		{"five runs a cell, 30 % faster", 5, 1 / 1.3, stats.MethodExact, stats.Improved},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			cells := []Cell{cellOf(t, rng, "read", 1, tc.reps), cellOf(t, rng, "sql", tc.scale, tc.reps)}
			cells = append(cells, cellOf(t, rng, "same", 1, tc.reps))
			tab, err := Assemble(&v1alpha1.ComparisonSpec{}, cells, 0)
			if err != nil {
				t.Fatalf("Assemble: %v", err)
			}
			// Default metrics: p50, p99, throughput of "read", for each of
			// the two variants and never for the baseline against itself.
			if len(tab.Rows) != 6 {
				t.Fatalf("%d rows, want 6 (p50, p99, ops/s of read for sql and same): %+v", len(tab.Rows), tab.Rows)
			}
			for _, r := range tab.Rows {
				if r.Variant == "read" {
					t.Errorf("row %s / %s compares the baseline with itself", r.Variant, r.Metric)
				}
			}
			for _, m := range []string{"read p50 µs", "read p99 µs", "read ops/s"} {
				if v := rowFor(t, tab, "same", m).Comparison.Verdict; v == stats.Regressed || v == stats.Improved {
					t.Errorf("variant same, %s: equal latencies compared as %s", m, v)
				}
			}
			p99 := rowFor(t, tab, "sql", "read p99 µs")
			c := p99.Comparison
			if c.Method != tc.wantMethod || c.Verdict != tc.wantVerdict {
				t.Errorf("p99 row: method %q verdict %s (%s); want %q %s", c.Method, c.Verdict, c.Reason, tc.wantMethod, tc.wantVerdict)
			}
			if !(c.Lo <= tc.scale*1.03 && c.Hi >= tc.scale*0.97) || c.Ratio < tc.scale*0.9 || c.Ratio > tc.scale*1.1 {
				t.Errorf("p99 ratio %.3f [%.3f, %.3f]; want about %.3f", c.Ratio, c.Lo, c.Hi, tc.scale)
			}
			if v := rowFor(t, tab, "sql", "read ops/s").Comparison.Verdict; v == stats.Regressed || v == stats.Improved {
				t.Errorf("equal throughputs compared as %s", v)
			}
			if tab.Verdict != tc.wantVerdict {
				t.Errorf("table verdict %s, want %s", tab.Verdict, tc.wantVerdict)
			}
		})
	}
}

// TestAssembleReadsPooledFiguresFromMergedHistograms: the table's baseline
// and value figures are percentiles of all runs' merged histograms, never
// an average of the runs' percentiles.
func TestAssembleReadsPooledFiguresFromMergedHistograms(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	fast, slow := runDoc(t, rng, "a", 1), runDoc(t, rng, "b", 3)
	cells := []Cell{{Name: "base", Runs: []*result.Document{fast, slow}}, {Name: "v", Runs: []*result.Document{fast, slow}}}
	tab, err := Assemble(&v1alpha1.ComparisonSpec{Metrics: []v1alpha1.MetricSpec{{Statistic: v1alpha1.StatisticP99}}}, cells, 0)
	if err != nil {
		t.Fatal(err)
	}
	merged := histogram.New()
	for _, d := range []*result.Document{fast, slow} {
		h, err := histogram.Decode(d.Totals[0].LatencyHistogram)
		if err != nil {
			t.Fatal(err)
		}
		if err := histogram.Merge(merged, h); err != nil {
			t.Fatal(err)
		}
	}
	want := float64(merged.ValueAtPercentile(99))
	avg := float64(fast.Totals[0].Latency.P99+slow.Totals[0].Latency.P99) / 2
	if got := tab.Rows[0].Baseline; got != want || got == avg {
		t.Fatalf("baseline p99 = %g; want the merged histogram's %g (not the average of the runs' p99s, %g)", got, want, avg)
	}
}

// TestAssembleTurnsAnUncomparableMetricIntoAnInconclusiveRow: one bad
// figure does not hide the rest of the table.
func TestAssembleTurnsAnUncomparableMetricIntoAnInconclusiveRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	cells := []Cell{cellOf(t, rng, "read", 1, 2), cellOf(t, rng, "sql", 1, 2)}
	spec := &v1alpha1.ComparisonSpec{Metrics: []v1alpha1.MetricSpec{
		{Statistic: v1alpha1.StatisticP50, Operations: []string{"nosuchop", "read"}}}}
	tab, err := Assemble(spec, cells, 0)
	if err != nil {
		t.Fatalf("Assemble: %v", err)
	}
	bad := rowFor(t, tab, "sql", "nosuchop p50 µs")
	if bad.Comparison.Verdict != stats.Inconclusive || !strings.Contains(bad.Comparison.Reason, `no operation "nosuchop"`) {
		t.Errorf("row of a missing operation: %s (%s); want Inconclusive saying the operation is missing", bad.Comparison.Verdict, bad.Comparison.Reason)
	}
	rowFor(t, tab, "sql", "read p50 µs")
}

// TestAssembleOfOneStreamsRunReadsTheOperationsStream: streams documents
// have no top-level intervals; with one run a cell an operation is
// bootstrapped over its stream's, and an operation two streams run is
// Inconclusive naming both, never compared over a series that mixes two
// time axes.
func TestAssembleOfOneStreamsRunReadsTheOperationsStream(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 2))
	streamsOf := func(d *result.Document, names ...string) *result.Document {
		s := *d
		s.SchemaVersion, s.Intervals, s.Streams = result.SchemaVersionStreams, nil, nil
		for _, n := range names {
			s.Streams = append(s.Streams, result.StreamSection{Name: n, Start: d.Start, End: d.End, Intervals: d.Intervals})
		}
		if err := result.Finalize(&s); err != nil {
			t.Fatal(err)
		}
		return &s
	}
	spec := &v1alpha1.ComparisonSpec{Metrics: []v1alpha1.MetricSpec{{Statistic: v1alpha1.StatisticP99, Operations: []string{"read"}}}}
	for _, tc := range []struct {
		streams []string
		want    stats.Verdict
		reason  string
	}{{[]string{"online"}, stats.Regressed, ""}, {[]string{"online", "batch"}, stats.Inconclusive, "runs in streams online, batch"}} {
		cells := []Cell{
			{Name: "base", Runs: []*result.Document{streamsOf(runDoc(t, rng, "base", 1), tc.streams...)}},
			{Name: "slow", Runs: []*result.Document{streamsOf(runDoc(t, rng, "slow", 1.3), tc.streams...)}},
		}
		tab, err := Assemble(spec, cells, 0)
		if err != nil {
			t.Fatal(err)
		}
		c := rowFor(t, tab, "slow", "read p99 µs").Comparison
		if c.Verdict != tc.want || !strings.Contains(c.Reason, tc.reason) || (tc.want == stats.Regressed) != c.HasInterval {
			t.Errorf("read in streams %v: %s (%s), interval %v; want %s, a reason containing %q", tc.streams, c.Verdict, c.Reason, c.HasInterval, tc.want, tc.reason)
		}
	}
}

func TestStatusIsBoundedWithRegressionsFirst(t *testing.T) {
	var tab Table
	for i := range 70 {
		v := stats.Neutral
		if i == 69 {
			v = stats.Regressed
		}
		tab.Rows = append(tab.Rows, stats.Row{Variant: fmt.Sprint("v", i), Metric: "read p99 µs", Baseline: 1000, Value: 1000,
			Comparison: stats.Comparison{Ratio: 1, Verdict: v, NBaseline: 5, NVariant: 5, Method: stats.MethodExact}})
	}
	tab.Verdict = Overall(tab.Rows)
	st := tab.Status("it-1")
	if len(st.Rows) != v1alpha1.MaxComparisonRows || st.OmittedRows != 6 {
		t.Fatalf("status has %d rows and %d omitted; want %d and 6", len(st.Rows), st.OmittedRows, v1alpha1.MaxComparisonRows)
	}
	if st.Rows[0].Variant != "v69" || st.Rows[0].Verdict != v1alpha1.VerdictRegressed || st.Verdict != v1alpha1.VerdictRegressed {
		t.Errorf("first row %s %s, table verdict %s; want the Regressed row v69 first and the table Regressed", st.Rows[0].Variant, st.Rows[0].Verdict, st.Verdict)
	}
	if st.Rows[1].N != "5+5" || st.Rows[1].Ratio != "1.000" || st.Rows[1].Low != "" {
		t.Errorf("row figures %+v; want n 5+5, ratio 1.000, no interval", st.Rows[1])
	}
}

func TestOverall(t *testing.T) {
	row := func(v stats.Verdict) stats.Row { return stats.Row{Comparison: stats.Comparison{Verdict: v}} }
	for _, tc := range []struct {
		rows []stats.Row
		want stats.Verdict
	}{
		{nil, stats.Inconclusive},
		{[]stats.Row{row(stats.Neutral), row(stats.Neutral)}, stats.Neutral},
		{[]stats.Row{row(stats.Neutral), row(stats.Inconclusive)}, stats.Inconclusive},
		{[]stats.Row{row(stats.Improved), row(stats.Inconclusive)}, stats.Improved},
		{[]stats.Row{row(stats.Improved), row(stats.Regressed)}, stats.Regressed},
	} {
		if got := Overall(tc.rows); got != tc.want {
			t.Errorf("Overall(%v) = %s, want %s", tc.rows, got, tc.want)
		}
	}
}

// withErrors gives every interval of d failed reads (UNAVAILABLE) and
// finalizes it again, so its totals count them.
func withErrors(t *testing.T, d *result.Document, perInterval uint64) *result.Document {
	t.Helper()
	for i := range d.Intervals {
		for j := range d.Intervals[i].Operations {
			d.Intervals[i].Operations[j].Errors = map[string]uint64{"UNAVAILABLE": perInterval}
		}
	}
	if err := result.Finalize(d); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestAssembleComparesErrorRates(t *testing.T) {
	spec := &v1alpha1.ComparisonSpec{Metrics: []v1alpha1.MetricSpec{{Statistic: v1alpha1.StatisticErrorRate}}}
	for _, reps := range []int{1, 5} {
		rng := rand.New(rand.NewPCG(7, uint64(reps)))
		base, clean, failing := cellOf(t, rng, "a", 1, reps), cellOf(t, rng, "b", 1, reps), cellOf(t, rng, "c", 1, reps)
		for k := range reps {
			withErrors(t, base.Runs[k], 2)
			withErrors(t, failing.Runs[k], 20)
		}
		// b has no errors at all, as a has none here: compare a clean
		// baseline with a clean variant too.
		cleanBase := cellOf(t, rng, "a0", 1, reps)
		tab, err := Assemble(spec, []Cell{base, failing}, 0)
		if err != nil {
			t.Fatal(err)
		}
		r := rowFor(t, tab, "c", "read errors %")
		if want := 100 * 20.0 / 220; r.Value < want*0.999 || r.Value > want*1.001 {
			t.Errorf("%d runs a cell: variant error rate %g %%, want %g %% (failed over all finished)", reps, r.Value, want)
		}
		if r.Comparison.Verdict != stats.Regressed || r.Comparison.Ratio < 9 {
			t.Errorf("%d runs a cell: 10x the error rate gives %s, ratio %g (%s); want Regressed near 10", reps, r.Comparison.Verdict, r.Comparison.Ratio, r.Comparison.Reason)
		}
		tab, err = Assemble(spec, []Cell{cleanBase, clean}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if r := rowFor(t, tab, "b", "read errors %"); r.Comparison.Verdict != stats.Neutral || r.Comparison.Ratio != 1 {
			t.Errorf("%d runs a cell: no errors on either side gives %s, ratio %g; want Neutral, 1", reps, r.Comparison.Verdict, r.Comparison.Ratio)
		}
	}
}

func TestMetricNamesParseBack(t *testing.T) {
	for _, s := range []v1alpha1.CampaignStatistic{v1alpha1.StatisticThroughput, v1alpha1.StatisticP50, v1alpha1.StatisticP90,
		v1alpha1.StatisticP99, v1alpha1.StatisticP999, v1alpha1.StatisticErrorRate} {
		op, got, ok := ParseMetric(MetricName("read-by id", s))
		if !ok || op != "read-by id" || got != s {
			t.Errorf("ParseMetric(MetricName(read-by id, %s)) = %q, %q, %v", s, op, got, ok)
		}
	}
	if _, _, ok := ParseMetric("read bananas"); ok {
		t.Error("ParseMetric accepted a name MetricName never makes")
	}
}

func TestStatusRowsCarryOperationAndStatistic(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	tab, err := Assemble(&v1alpha1.ComparisonSpec{}, []Cell{cellOf(t, rng, "a", 1, 2), cellOf(t, rng, "b", 1.3, 2)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tab.Status("it-1").Rows {
		if r.Operation != "read" || r.Statistic == "" || MetricName(r.Operation, r.Statistic) != r.Metric {
			t.Errorf("status row %q has operation %q, statistic %q", r.Metric, r.Operation, r.Statistic)
		}
	}
}

// A run without errors among runs with some leaves no ratio on the log
// scale: an Inconclusive row that says why, never a panic or a wrong verdict.
func TestAssembleErrorRateWithAnErrorFreeRun(t *testing.T) {
	spec := &v1alpha1.ComparisonSpec{Metrics: []v1alpha1.MetricSpec{{Statistic: v1alpha1.StatisticErrorRate}}}
	rng := rand.New(rand.NewPCG(9, 9))
	base, variant := cellOf(t, rng, "a", 1, 3), cellOf(t, rng, "b", 1, 3)
	withErrors(t, base.Runs[0], 2)
	withErrors(t, base.Runs[1], 2)
	for _, r := range variant.Runs {
		withErrors(t, r, 3)
	}
	tab, err := Assemble(spec, []Cell{base, variant}, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := rowFor(t, tab, "b", "read errors %")
	if r.Comparison.Verdict != stats.Inconclusive || r.Comparison.Reason == "" {
		t.Errorf("an error-free baseline run gives %s (%q); want Inconclusive with a reason", r.Comparison.Verdict, r.Comparison.Reason)
	}
}
