package capacity_test

import (
	"strings"
	"testing"
	"time"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/capacity"
	"github.com/spanbench/spanbench/result/histogram"
)

// interval builds one interval whose operations each recorded n
// successes at the given latency and errs failures.
func interval(t *testing.T, index int, missed uint64, ops map[string][3]int64) result.Interval {
	t.Helper()
	in := result.Interval{Index: index, Missed: missed}
	for name, o := range ops { // o: successes, latency µs, errors
		lat := histogram.NewCompact()
		lat.RecordValues(o[1], o[0])
		c := result.Counts{OK: uint64(o[0])}
		if o[2] > 0 {
			c.Errors = map[string]uint64{"Unavailable": uint64(o[2])}
		}
		op, err := result.NewIntervalOperationCompact(name, c, lat, histogram.NewCompact(), histogram.NewCompact())
		if err != nil {
			t.Fatal(err)
		}
		in.Operations = append(in.Operations, op)
	}
	return in
}

// TestMeasureMergesOnlyTheStep: a step's percentile comes from its own
// intervals' merged histograms; the neighbouring step's slow operations
// never enter it.
func TestMeasureMergesOnlyTheStep(t *testing.T) {
	intervals := []result.Interval{
		interval(t, 0, 0, map[string][3]int64{"read": {100, 500_000, 0}}), // the previous step: slow
		interval(t, 1, 0, map[string][3]int64{"read": {100, 1_000, 0}, "commit": {50, 9_000, 1}}),
		interval(t, 2, 3, map[string][3]int64{"read": {98, 2_000, 0}, "commit": {50, 11_000, 0}}),
		interval(t, 3, 0, map[string][3]int64{"read": {100, 900_000, 0}}), // the next step: slower
	}
	m, err := capacity.Measure(intervals, 1, 3, 1, 150)
	if err != nil {
		t.Fatal(err)
	}
	slo, err := capacity.ParseSLO([]string{"p99(read) <= 3ms", "p50(commit) <= 10ms", "errors <= 0.1%", "p100 <= 12ms"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := capacity.Evaluate(slo.Resolve("regional-us-central1"), m)
	if err != nil {
		t.Fatal(err)
	}
	if r.OK != 298 || r.Errors != 1 || r.Missed != 3 || r.Intended != 302 || r.Seconds != 2 || r.Achieved != 149 {
		t.Errorf("step counts ok %d errors %d missed %d intended %d seconds %g achieved %g; want 298, 1, 3, 302, 2, 149",
			r.OK, r.Errors, r.Missed, r.Intended, r.Seconds, r.Achieved)
	}
	want := []struct {
		value float64
		pass  bool
	}{
		{2_000, true},       // read's p99, not the neighbours' 500 ms
		{9_007, true},       // commit's median: the top of 9 ms's bucket
		{1.0 / 299, false},  // one failure in 299 completed
		{11_007, true},      // the slowest of the step, the neighbours excluded
		{298.0 / 302, true}, // the default achieved condition
	}
	if len(r.Figures) != len(want) {
		t.Fatalf("figures %+v, want %d", r.Figures, len(want))
	}
	for i, w := range want {
		if f := r.Figures[i]; f.Value != w.value || f.Pass != w.pass || !f.Measured {
			t.Errorf("figure %d (%s) = %g pass %v, want %g pass %v", i, f.Condition, f.Value, f.Pass, w.value, w.pass)
		}
	}
	if r.Pass || strings.Join(r.Failed(), ";") != "errors <= 0.1%" {
		t.Errorf("step pass %v failing %v, want a failure of the error condition only", r.Pass, r.Failed())
	}
	if r.CPU != nil {
		t.Errorf("CPU %v without monitoring, want not measured", *r.CPU)
	}
}

// TestMeasureRefusesAGap: a step window with a missing or repeated
// interval is refused, not measured on what is there.
func TestMeasureRefusesAGap(t *testing.T) {
	op := map[string][3]int64{"read": {10, 1000, 0}}
	for name, tc := range map[string]struct {
		intervals   []result.Interval
		first, end  int
		seconds     float64
		wantMessage string
	}{
		"missing":      {[]result.Interval{interval(t, 0, 0, op), interval(t, 2, 0, op)}, 0, 3, 1, "interval 1 is missing"},
		"twice":        {[]result.Interval{interval(t, 0, 0, op), interval(t, 0, 0, op)}, 0, 1, 1, "appears twice"},
		"empty window": {nil, 2, 2, 1, "non-empty window"},
		"zero seconds": {nil, 0, 1, 0, "positive intervals"},
	} {
		if _, err := capacity.Measure(tc.intervals, tc.first, tc.end, tc.seconds, 10); err == nil || !strings.Contains(err.Error(), tc.wantMessage) {
			t.Errorf("%s: Measure = %v, want an error containing %q", name, err, tc.wantMessage)
		}
	}
	bad := interval(t, 0, 0, op)
	bad.Operations[0].LatencyHistogram = "not a histogram"
	if _, err := capacity.Measure([]result.Interval{bad}, 0, 1, 1, 10); err == nil {
		t.Error("a step with an undecodable histogram was measured")
	}
}

// TestEvaluateCPU: the CPU figure is the highest region's high-priority
// mean, not the instance-wide mean; without a series it is not measured
// and does not decide the step.
func TestEvaluateCPU(t *testing.T) {
	slo := capacity.SLO{{Kind: capacity.CPU, Recommended: true}}.Resolve("asia1")
	m := capacity.Measurement{Offered: 10, Seconds: 10, Operations: map[string]*capacity.OperationMeasurement{
		"read": {Counts: result.Counts{OK: 100}, Latency: histogram.NewCompact()}}}
	m.CPU = []result.MonitoringCPU{
		{Priority: "high", Location: "asia-northeast1", MeanRatio: 0.50, MaxRatio: 0.7},
		{Priority: "high", Location: "asia-northeast2", MeanRatio: 0.10, MaxRatio: 0.2},
		{Priority: "low", Location: "asia-northeast2", MeanRatio: 0.90, MaxRatio: 0.9},
	}
	r, err := capacity.Evaluate(slo, m)
	if err != nil {
		t.Fatal(err)
	}
	if r.CPU == nil || *r.CPU != 0.5 || r.Pass || r.Figures[0].Value != 0.5 {
		t.Errorf("cpu %v pass %v: want the leader region's 0.5, failing the multi-region 45 %% bound", r.Figures[0].Value, r.Pass)
	}
	m.CPU = m.CPU[2:] // low priority only
	if r, _ = capacity.Evaluate(slo, m); r.CPU != nil || r.Figures[0].Measured || !r.Pass {
		t.Errorf("without a high-priority series: cpu %v measured %v pass %v; want not measured, not deciding", r.CPU, r.Figures[0].Measured, r.Pass)
	}
}

// TestEvaluateNothingToJudge: a step with no successful operation of a
// latency condition's operations, or nothing sent, fails rather than
// passing on no evidence.
func TestEvaluateNothingToJudge(t *testing.T) {
	slo := capacity.SLO{{Kind: capacity.Latency, Percentile: 99, Latency: time.Second, Operations: []string{"commit"}},
		{Kind: capacity.ErrorRatio, Ratio: 0.5, Operations: []string{"commit"}}}.Resolve("asia1")
	m := capacity.Measurement{Offered: 10, Seconds: 10, Missed: 0, Operations: map[string]*capacity.OperationMeasurement{}}
	r, err := capacity.Evaluate(slo, m)
	if err != nil {
		t.Fatal(err)
	}
	if r.Pass || len(r.Failed()) != 3 {
		t.Errorf("an empty step: pass %v, failing %v; want all three conditions failing", r.Pass, r.Failed())
	}
	for _, f := range r.Figures {
		if f.Note == "" {
			t.Errorf("%s failed on no evidence without saying so", f.Condition)
		}
	}
}

func TestEvaluateRefusesOverflowingCounts(t *testing.T) {
	big := result.Counts{OK: result.MaxCount}
	m := capacity.Measurement{Seconds: 1, Operations: map[string]*capacity.OperationMeasurement{
		"a": {Counts: big, Latency: histogram.NewCompact()}, "b": {Counts: big, Latency: histogram.NewCompact()}}}
	if _, err := capacity.Evaluate(nil, m); err == nil {
		t.Error("counts summing past MaxCount were evaluated")
	}
}
