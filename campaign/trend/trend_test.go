package trend

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/history"
	"github.com/spanbench/spanbench/result/histogram"
)

var day0 = time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC)

// nightly is n entries of the given cells, each with one operation
// "read" whose p99 and throughput are level(cell, i) times 1000 and
// 1/1000 of it, with 1 % noise.
func nightly(n int, cells []string, level func(cell string, i int) float64) []history.Entry {
	rng := rand.New(rand.NewPCG(5, 5))
	var out []history.Entry
	for i := range n {
		e := history.Entry{SchemaVersion: history.SchemaVersion, Iteration: fmt.Sprintf("c-%d", i), ScheduledTime: day0.Add(time.Duration(i) * 24 * time.Hour)}
		for _, c := range cells {
			v := level(c, i) * (1 + 0.01*rng.NormFloat64())
			p99 := int64(1000 * v)
			e.Cells = append(e.Cells, history.Cell{Name: c, Runs: 1, Operations: []history.Operation{{Name: "read", OK: 1000, Seconds: 10,
				Throughput: 1000 / v, Latency: histogram.Summary{Count: 1000, P50: p99 / 2, P90: p99 / 2, P99: p99, P999: p99, Max: p99}}}})
		}
		out = append(out, e)
	}
	return out
}

func p99Only() *v1alpha1.BenchmarkCampaignSpec {
	return &v1alpha1.BenchmarkCampaignSpec{Comparison: v1alpha1.ComparisonSpec{Metrics: []v1alpha1.MetricSpec{{Statistic: v1alpha1.StatisticP99}}}}
}

func analyse(t *testing.T, entries []history.Entry, spec *v1alpha1.BenchmarkCampaignSpec) []v1alpha1.ChangePointStatus {
	t.Helper()
	cps, err := Analyse(Build(entries, spec), &spec.Trend, 1)
	if err != nil {
		t.Fatal(err)
	}
	return cps
}

// TestAStepInP99IsARecentRegressionAtItsIteration: p99 up 30 % from
// iteration 10 of 14 is one change point there, Regressed and recent
// (within the default latest 5); the steady cell has none.
func TestAStepInP99IsARecentRegressionAtItsIteration(t *testing.T) {
	entries := nightly(14, []string{"steady", "stepped"}, func(c string, i int) float64 {
		if c == "stepped" && i >= 10 {
			return 1.3
		}
		return 1
	})
	cps := analyse(t, entries, p99Only())
	if len(cps) != 1 {
		t.Fatalf("change points %+v, want one", cps)
	}
	cp := cps[0]
	if cp.Variant != "stepped" || cp.Metric != "read p99 µs" || cp.Iteration != "c-10" || cp.Verdict != v1alpha1.VerdictRegressed || !cp.Recent || cp.Acknowledged {
		t.Errorf("change point %+v, want stepped read p99 µs at c-10, Regressed, recent, not acknowledged", cp)
	}
	if got := Regressions(cps); len(got) != 1 {
		t.Errorf("Regressions = %+v, want the change point", got)
	}
	// Older than the latest 3: still listed, no longer recent.
	spec := p99Only()
	spec.Trend.Latest = ptr(3)
	if cps := analyse(t, entries, spec); len(cps) != 1 || cps[0].Recent || len(Regressions(cps)) != 0 {
		t.Errorf("with latest 3: %+v; want the change point, not recent, no regression", cps)
	}
}

func ptr(v int32) *int32 { return &v }

// TestThroughputFallingIsARegressionAndRisingAnImprovement: direction
// comes from the metric.
func TestThroughputFallingIsARegressionAndRisingAnImprovement(t *testing.T) {
	spec := &v1alpha1.BenchmarkCampaignSpec{Comparison: v1alpha1.ComparisonSpec{Metrics: []v1alpha1.MetricSpec{{Statistic: v1alpha1.StatisticThroughput}}}}
	for _, tc := range []struct {
		level float64
		want  v1alpha1.CampaignVerdict
	}{{1.3, v1alpha1.VerdictRegressed}, {0.7, v1alpha1.VerdictImproved}} {
		// Throughput is 1000/level: a higher level is slower.
		cps := analyse(t, nightly(12, []string{"a"}, func(_ string, i int) float64 {
			if i >= 8 {
				return tc.level
			}
			return 1
		}), spec)
		if len(cps) != 1 || cps[0].Verdict != tc.want || cps[0].Metric != "read ops/s" {
			t.Errorf("throughput × %.2f: %+v; want one %s change point of read ops/s", 1/tc.level, cps, tc.want)
		}
	}
}

// TestAcknowledgementsMatchIterationVariantAndMetric.
func TestAcknowledgementsMatchIterationVariantAndMetric(t *testing.T) {
	entries := nightly(14, []string{"a"}, func(_ string, i int) float64 {
		if i >= 10 {
			return 1.3
		}
		return 1
	})
	for _, tc := range []struct {
		name string
		ack  v1alpha1.Acknowledgement
		want bool
	}{
		{"iteration", v1alpha1.Acknowledgement{Iteration: "c-10"}, true},
		{"iteration and variant", v1alpha1.Acknowledgement{Iteration: "c-10", Variant: "a"}, true},
		{"iteration, variant and metric", v1alpha1.Acknowledgement{Iteration: "c-10", Variant: "a", Metric: "read p99 µs"}, true},
		{"another iteration", v1alpha1.Acknowledgement{Iteration: "c-9"}, false},
		{"another variant", v1alpha1.Acknowledgement{Iteration: "c-10", Variant: "b"}, false},
		{"another metric", v1alpha1.Acknowledgement{Iteration: "c-10", Metric: "read p50 µs"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := p99Only()
			spec.Trend.Acknowledged = []v1alpha1.Acknowledgement{tc.ack}
			cps := analyse(t, entries, spec)
			if len(cps) != 1 {
				t.Fatalf("%+v: change points %+v; want one", tc.ack, cps)
			}
			if cps[0].Acknowledged != tc.want || (len(Regressions(cps)) == 0) != tc.want {
				t.Errorf("%+v: change points %+v; want acknowledged %v, a regression %v", tc.ack, cps, tc.want, !tc.want)
			}
			// Acknowledge alone (no new analysis) gives the same answer.
			cps[0].Acknowledged = !tc.want
			Acknowledge(cps, spec.Trend.Acknowledged)
			if cps[0].Acknowledged != tc.want {
				t.Errorf("Acknowledge: %v, want %v", cps[0].Acknowledged, tc.want)
			}
		})
	}
}

// TestBuildAnalysesTheNewestIterationsInTimeOrder: trend.iterations
// bounds the series, entries arrive in any order, and an operation
// without a successful request gives no latency point.
func TestBuildAnalysesTheNewestIterationsInTimeOrder(t *testing.T) {
	entries := nightly(40, []string{"a"}, func(string, int) float64 { return 1 })
	entries[35].Cells[0].Operations[0].Latency = histogram.Summary{}
	rand.New(rand.NewPCG(1, 1)).Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
	series := Build(entries, p99Only())
	if len(series) != 1 {
		t.Fatalf("series %+v, want one", series)
	}
	s := series[0]
	if len(s.Values) != 29 || s.Names[0] != "c-10" || s.Names[28] != "c-39" {
		t.Errorf("series of %d points %v; want the newest 30 (c-10 … c-39) less c-35", len(s.Values), s.Names)
	}
	for i := 1; i < len(s.At); i++ {
		if s.At[i] <= s.At[i-1] {
			t.Fatalf("points out of order: %v", s.Names)
		}
	}
}

// TestChangePointsAreBoundedKeepingTheNewest: 40 cells that all stepped
// at different iterations give at most 32 change points, the newest.
func TestChangePointsAreBoundedKeepingTheNewest(t *testing.T) {
	var cells []string
	for i := range 40 {
		cells = append(cells, fmt.Sprintf("v%02d", i))
	}
	entries := nightly(50, cells, func(c string, i int) float64 {
		var k int
		_, _ = fmt.Sscanf(c, "v%d", &k)
		if i >= 5+k {
			return 1.5
		}
		return 1
	})
	spec := p99Only()
	spec.Trend.Iterations = ptr(50)
	cps := analyse(t, entries, spec)
	if len(cps) != v1alpha1.MaxStatusChangePoints {
		t.Fatalf("%d change points, want %d", len(cps), v1alpha1.MaxStatusChangePoints)
	}
	if first, last := cps[0].Iteration, cps[len(cps)-1].Iteration; first != "c-13" || last != "c-44" {
		t.Errorf("kept change points from %s to %s, want the newest: c-13 to c-44", first, last)
	}
}
