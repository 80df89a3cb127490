package stats

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/spanbench/spanbench/result/histogram"
)

// TestSparseMergeEqualsHDRMerge: the bootstrap's bucket sums give exactly
// the percentiles of histograms merged by result/histogram, resampled
// repeats included, so no resample ever reads a percentile any other way.
func TestSparseMergeEqualsHDRMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	in := syntheticRun(rng, newHistograms(12), 300, 1)
	rs, err := newRunSeries("run", in)
	if err != nil {
		t.Fatal(err)
	}
	for _, idx := range [][]int{rs.all(), {0, 0, 0, 5}, {11, 3, 3, 7, 7, 7}} {
		merged := histogram.New()
		for _, i := range idx {
			if err := histogram.Merge(merged, in[i].Latency); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range []float64{0.1, 50, 90, 99, 99.9, 100} {
			want := merged.ValueAtPercentile(p)
			if got := rs.statistic(idx, Statistic{Percentile: p}); got != float64(want) {
				t.Errorf("intervals %v, p%g: bucket sums give %g, merged HDR histogram %d", idx, p, got, want)
			}
		}
	}
}

// TestSectionsAreContiguousAndCoverTheRun: k near-equal sections of
// consecutive intervals, each interval in exactly one.
func TestSectionsAreContiguousAndCoverTheRun(t *testing.T) {
	for _, tc := range []struct{ n, k int }{{40, 4}, {41, 4}, {10, 4}, {120, 4}, {301, 10}} {
		next := 0
		for j, sec := range sections(tc.n, tc.k) {
			if l := len(sec); l < tc.n/tc.k || l > tc.n/tc.k+1 {
				t.Errorf("n=%d k=%d: section %d holds %d intervals, want %d or %d", tc.n, tc.k, j, l, tc.n/tc.k, tc.n/tc.k+1)
			}
			for _, i := range sec {
				if i != next {
					t.Fatalf("n=%d k=%d: section %d is %v, want consecutive from %d", tc.n, tc.k, j, sec, next)
				}
				next++
			}
		}
		if next != tc.n {
			t.Errorf("n=%d k=%d: sections cover %d intervals", tc.n, tc.k, next)
		}
	}
}

// TestCompareIntervalsIsReproducibleAndHonest: one input, one answer (the
// sectioning draws nothing at random); a
// throughput ratio read as Σ ops / Σ seconds; too few intervals is
// Inconclusive; bad input is an error naming what is wrong.
func TestCompareIntervalsIsReproducibleAndHonest(t *testing.T) {
	gen := rand.New(rand.NewPCG(3, 3))
	b := syntheticRun(gen, newHistograms(20), 50, 1)
	v := syntheticRun(gen, newHistograms(20), 50, 1.5)
	opts := Options{MinEffect: 0.05}
	run := func() Comparison {
		c, err := CompareIntervals(b, v, Statistic{Percentile: 50}, opts, BootstrapOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if c1, c2 := run(), run(); c1 != c2 {
		t.Errorf("same input, different answers: %+v vs %+v", c1, c2)
	}
	if c := run(); c.Verdict != Regressed || c.Lo <= 1 || c.Method != MethodSectioning {
		t.Errorf("a 50%% slower variant: %+v, want Regressed with an interval above 1", c)
	}

	v2 := append([]Interval(nil), b...)
	for i := range v2 {
		v2[i].Ops *= 2
	}
	c, err := CompareIntervals(b, v2, Statistic{Throughput: true}, Options{Direction: HigherIsBetter}, BootstrapOptions{})
	if err != nil || c.Ratio != 2 || c.Verdict != Improved {
		t.Errorf("doubled ops: ratio %g, %s, err %v; want 2, Improved", c.Ratio, c.Verdict, err)
	}

	c, err = CompareIntervals(b[:MinIntervals-1], v[:MinIntervals-1], Statistic{Percentile: 99}, opts, BootstrapOptions{})
	if err != nil || c.Verdict != Inconclusive || c.HasInterval || !math.IsNaN(c.PValue) {
		t.Errorf("%d intervals: %+v, err %v; want Inconclusive without an interval or a p-value", MinIntervals-1, c, err)
	}

	foreign := hdr.New(1, 1000, 2)
	for _, tc := range []struct {
		name string
		b, v []Interval
		stat Statistic
		want string
	}{
		{"no baseline", nil, v, Statistic{Percentile: 99}, "baseline has no intervals"},
		{"nil histogram", b, []Interval{{Seconds: 1}}, Statistic{Percentile: 99}, "variant interval 0"},
		{"zero seconds", []Interval{{Latency: histogram.New()}}, v, Statistic{Percentile: 99}, "Seconds > 0"},
		{"foreign geometry", []Interval{{Latency: foreign, Seconds: 1}}, v, Statistic{Percentile: 99}, "geometry"},
		{"percentile 0", b, v, Statistic{}, "percentile 0"},
		{"percentile 101", b, v, Statistic{Percentile: 101}, "percentile 101"},
		{"empty histograms", []Interval{{Latency: histogram.New(), Seconds: 1}}, v, Statistic{Percentile: 99}, "above zero"},
	} {
		_, err := CompareIntervals(tc.b, tc.v, tc.stat, opts, BootstrapOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// TestAutocorrelationAllowanceIsTheBatchMeansBias: the closed form equals
// the bias computed term by term from an AR(1) covariance matrix for the
// sections CompareIntervals actually cuts (sections(n, k), uneven ones
// included: 40 intervals in 6 sections are 6, 7, 7, 6, 7, 7), the
// variance of the whole-run mean over the expected sectioning estimate
// Σ_j Var(B_j − B̄) / (k(k−1)), never below 1; it is 1 without
// autocorrelation.
func TestAutocorrelationAllowanceIsTheBatchMeansBias(t *testing.T) {
	for _, tc := range []struct {
		n, k int
		phi  float64
	}{{40, 4, 0}, {40, 4, 0.3}, {40, 4, 0.8}, {120, 4, 0.8}, {42, 6, 0.6}, {300, 10, 0.8}, {10, 5, 0.95}, {40, 6, 0.8}, {10, 4, 0.8}, {61, 8, 0.6}, {41, 4, 0}} {
		cov := func(w []float64) float64 { // wᵀΣw, Σ_ij = φ^|i−j|
			var s float64
			for i := range w {
				for j := range w {
					s += w[i] * w[j] * math.Pow(tc.phi, math.Abs(float64(i-j)))
				}
			}
			return s
		}
		whole := make([]float64, tc.n)
		for i := range whole {
			whole[i] = 1 / float64(tc.n)
		}
		var spread float64
		for _, sec := range sections(tc.n, tc.k) {
			w := make([]float64, tc.n)
			for i := range w {
				w[i] = -whole[i]
			}
			for _, i := range sec {
				w[i] += 1 / float64(len(sec))
			}
			spread += cov(w)
		}
		want := max(1, cov(whole)/(spread/float64(tc.k*(tc.k-1))))
		got := autocorrelationAllowance(tc.n, tc.k, tc.phi)
		if math.Abs(got-want) > 1e-9*want {
			t.Errorf("n=%d k=%d φ=%g: allowance %.12g, the covariance matrix gives %.12g", tc.n, tc.k, tc.phi, got, want)
		}
		if tc.phi == 0 && got != 1 {
			t.Errorf("n=%d k=%d without autocorrelation: allowance %g, want 1", tc.n, tc.k, got)
		}
	}
}

// TestDefaultSectionsNeverDecreases: one more interval never cuts fewer
// sections (fewer sections widen the interval: the count once fell from
// 11 at 120 intervals to 4 at 121), and the counts docs/statistics.md
// states hold: ⌈√n⌉, at least 4, at most maxSections.
func TestDefaultSectionsNeverDecreases(t *testing.T) {
	prev := DefaultSections(0)
	for n := 1; n <= 100_000; n++ {
		k := DefaultSections(n)
		if k < prev {
			t.Fatalf("DefaultSections(%d) = %d, fewer than DefaultSections(%d) = %d", n, k, n-1, prev)
		}
		prev = k
	}
	for n, want := range map[int]int{10: 4, 16: 4, 20: 5, 40: 7, 60: 8, 100: 10, 101: 11, 120: 11, 121: 11, 240: 11, 480: 11} {
		if got := DefaultSections(n); got != want {
			t.Errorf("DefaultSections(%d) = %d, docs/statistics.md says %d", n, got, want)
		}
	}
}
