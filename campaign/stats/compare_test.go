package stats

import (
	"math"
	"strings"
	"testing"
)

func TestHodgesLehmannIsTheMedianPairwiseDifference(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
		want float64
	}{
		// y-x: -1 0 1 1 2 3 3 4 5 -> median 2.
		{"3+3", []float64{1, 2, 3}, []float64{2, 4, 6}, 2},
		// y-x: 1 2 2 3 -> median of an even count is the midpoint.
		{"2+2", []float64{1, 2}, []float64{3, 3}, 1.5},
		{"n=1", []float64{10}, []float64{7}, -3},
		{"ties", []float64{5, 5}, []float64{5, 5}, 0},
	} {
		if got := HodgesLehmann(tc.x, tc.y); got != tc.want {
			t.Errorf("%s: HL = %g, want %g", tc.name, got, tc.want)
		}
	}
	if got := HodgesLehmann(nil, []float64{1}); !math.IsNaN(got) {
		t.Errorf("HL of an empty sample = %g, want NaN", got)
	}
}

// TestCompareRunsRefusesValuesWithoutALogarithm: empty samples, zeros,
// negatives and non-finite values are an error naming the sample, never a
// silent NaN ratio.
func TestCompareRunsRefusesValuesWithoutALogarithm(t *testing.T) {
	ok := []float64{1, 2, 3}
	for _, tc := range []struct {
		name              string
		baseline, variant []float64
		want              string
	}{
		{"empty baseline", nil, ok, "baseline has no values"},
		{"empty variant", ok, []float64{}, "variant has no values"},
		{"zero", []float64{1, 0, 2}, ok, "baseline value 1 is 0"},
		{"negative", ok, []float64{-3}, "variant value 0 is -3"},
		{"NaN", ok, []float64{1, math.NaN()}, "variant value 1 is NaN"},
		{"Inf", []float64{math.Inf(1)}, ok, "baseline value 0 is +Inf"},
	} {
		_, err := CompareRuns(tc.baseline, tc.variant, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	for _, o := range []Options{{Confidence: 1}, {Confidence: -0.5}, {MinEffect: 1}, {MinEffect: -0.1}, {Direction: 7}} {
		if _, err := CompareRuns(ok, ok, o); err == nil {
			t.Errorf("options %+v accepted, want an error", o)
		}
	}
}

// TestCompareRunsSaysWhenNoIntervalExists: with too few runs there is no
// interval at the requested confidence, and the verdict is Inconclusive
// however large the difference looks.
func TestCompareRunsSaysWhenNoIntervalExists(t *testing.T) {
	for _, tc := range []struct {
		name              string
		baseline, variant []float64
		confidence        float64
		wantInterval      bool
	}{
		{"1+1", []float64{10}, []float64{20}, 0.95, false},
		{"2+2", []float64{10, 11}, []float64{20, 21}, 0.95, false},
		{"3+3 at 95%", []float64{10, 11, 12}, []float64{20, 21, 22}, 0.95, false},
		{"3+3 at 90%", []float64{10, 11, 12}, []float64{20, 21, 22}, 0.90, true},
		{"4+4 at 95%", []float64{10, 11, 12, 13}, []float64{20, 21, 22, 23}, 0.95, true},
	} {
		c, err := CompareRuns(tc.baseline, tc.variant, Options{Confidence: tc.confidence, MinEffect: 0.05})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if c.HasInterval != tc.wantInterval {
			t.Errorf("%s: HasInterval = %v, want %v", tc.name, c.HasInterval, tc.wantInterval)
		}
		if !tc.wantInterval && (c.Verdict != Inconclusive || !strings.Contains(c.Reason, "too few")) {
			t.Errorf("%s: verdict %s (%s), want Inconclusive for too few samples", tc.name, c.Verdict, c.Reason)
		}
		if tc.wantInterval && c.Verdict != Regressed {
			t.Errorf("%s: a doubling of latency with every run separated gave %s (%s), want Regressed", tc.name, c.Verdict, c.Reason)
		}
	}
}

// TestCompareRunsEstimatesTheRatio: the point estimate and interval on a
// case computed by hand, and ties that leave nothing to estimate.
func TestCompareRunsEstimatesTheRatio(t *testing.T) {
	base := []float64{100, 102, 98, 101, 99}
	variant := make([]float64, len(base))
	for i, b := range base {
		variant[i] = 1.1 * b
	}
	c, err := CompareRuns(base, variant, Options{MinEffect: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(c.Ratio-1.1) > 1e-9 {
		t.Errorf("ratio of an exact 10%% scaling = %g, want 1.1", c.Ratio)
	}
	if !(c.Lo <= 1.1 && 1.1 <= c.Hi) || c.Lo <= 1 || math.Abs(c.Confidence-(1-8.0/252)) > 1e-12 {
		t.Errorf("interval [%g, %g] at %g: want it to hold 1.1, exclude 1, at 5+5's exact 96.8%%", c.Lo, c.Hi, c.Confidence)
	}
	if c.Verdict != Regressed || c.PValue != 2.0/252 || c.Method != MethodExact {
		t.Errorf("verdict %s, p %g, method %q: want Regressed, p = 2/252, exact", c.Verdict, c.PValue, c.Method)
	}
	tied := []float64{7, 7, 7, 7, 7}
	c, err = CompareRuns(tied, tied, Options{MinEffect: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if c.Ratio != 1 || c.Lo != 1 || c.Hi != 1 || c.PValue != 1 || c.Verdict != Neutral {
		t.Errorf("all tied: ratio %g [%g, %g], p %g, %s; want 1 [1, 1], p 1, Neutral", c.Ratio, c.Lo, c.Hi, c.PValue, c.Verdict)
	}
}

// TestVerdictRule: the rule documented on decide, case by case.
func TestVerdictRule(t *testing.T) {
	for _, tc := range []struct {
		name          string
		ratio, lo, hi float64
		dir           Direction
		want          Verdict
	}{
		{"latency up, interval excludes 1", 1.2, 1.1, 1.3, LowerIsBetter, Regressed},
		{"throughput up", 1.2, 1.1, 1.3, HigherIsBetter, Improved},
		{"latency down", 0.8, 0.7, 0.9, LowerIsBetter, Improved},
		{"throughput down", 0.8, 0.7, 0.9, HigherIsBetter, Regressed},
		{"significant but below minEffect, within band", 1.03, 1.01, 1.04, LowerIsBetter, Neutral},
		{"significant, below minEffect, not within band", 1.03, 1.01, 1.08, LowerIsBetter, Inconclusive},
		{"large estimate, interval holds 1", 1.2, 0.9, 1.5, LowerIsBetter, Inconclusive},
		{"no change, narrow", 1.0, 0.98, 1.02, HigherIsBetter, Neutral},
		{"band edges are within", 1.0, 0.95, 1.05, LowerIsBetter, Neutral},
		{"exactly minEffect counts", 1.05, 1.01, 1.1, LowerIsBetter, Regressed},
	} {
		got, reason := decide(tc.ratio, tc.lo, tc.hi, true, Options{Confidence: 0.95, MinEffect: 0.05, Direction: tc.dir})
		if got != tc.want {
			t.Errorf("%s: ratio %g [%g, %g] -> %s (%s), want %s", tc.name, tc.ratio, tc.lo, tc.hi, got, reason, tc.want)
		}
	}
	if got, _ := decide(3, 2, 4, false, Options{Confidence: 0.95}); got != Inconclusive {
		t.Errorf("without an interval: %s, want Inconclusive", got)
	}
}
