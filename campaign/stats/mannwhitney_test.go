package stats

import (
	"math"
	"testing"
)

// TestExactUDistributionMatchesHandCounts: the tie-free null distribution of
// U, counted by hand (all C(m+n, m) arrangements).
func TestExactUDistributionMatchesHandCounts(t *testing.T) {
	for _, tc := range []struct {
		m, n   int
		counts []float64 // arrangements per U = 0..mn
	}{
		{1, 1, []float64{1, 1}},
		{1, 2, []float64{1, 1, 1}},
		{2, 2, []float64{1, 1, 2, 1, 1}},
		{2, 3, []float64{1, 1, 2, 2, 2, 1, 1}},
		{3, 3, []float64{1, 1, 2, 3, 3, 3, 3, 2, 1, 1}},
	} {
		got := exactUDistribution(tc.m, tc.n)
		total := 0.0
		for _, c := range tc.counts {
			total += c
		}
		if len(got) != len(tc.counts) {
			t.Fatalf("%d+%d: %d probabilities, want %d", tc.m, tc.n, len(got), len(tc.counts))
		}
		for u := range got {
			if want := tc.counts[u] / total; math.Abs(got[u]-want) > 1e-12 {
				t.Errorf("%d+%d: P(U=%d) = %g, want %g", tc.m, tc.n, u, got[u], want)
			}
		}
	}
}

// TestCriticalOrderAndAchievedConfidence: which order statistic bounds the
// interval, and how confident that interval really is; 2+2 and 3+3 have no
// 95 % interval at all.
func TestCriticalOrderAndAchievedConfidence(t *testing.T) {
	for _, tc := range []struct {
		m, n       int
		confidence float64
		k          int
		achieved   float64
	}{
		{2, 2, 0.95, 0, 0},
		{3, 3, 0.95, 0, 0},           // P(U=0) = 1/20 > 0.025
		{3, 3, 0.90, 1, 0.9},         // P(U=0) = 1/20 = 0.05 exactly
		{4, 4, 0.95, 1, 1 - 2.0/70},  // P(U=0)=1/70 ≤ .025 < P(U≤1)=2/70
		{5, 5, 0.95, 3, 1 - 8.0/252}, // P(U≤2) = 4/252 ≤ .025 < P(U≤3) = 7/252
	} {
		k, achieved := criticalOrder(tc.m, tc.n, tc.confidence)
		if k != tc.k || math.Abs(achieved-tc.achieved) > 1e-12 {
			t.Errorf("%d+%d at %g: k=%d (confidence %.4f), want k=%d (%.4f)", tc.m, tc.n, tc.confidence, k, achieved, tc.k, tc.achieved)
		}
	}
}

// TestNormalCriticalValueIsSafeAtTheSwitch justifies ExactMaxN: where the
// exact computation stops, the order statistic the normal approximation
// picks has, under the exact distribution, at least the requested
// confidence and at most 0.005 more than the exact choice.
func TestNormalCriticalValueIsSafeAtTheSwitch(t *testing.T) {
	m, n := ExactMaxN/2, ExactMaxN/2
	dist := exactUDistribution(m, n)
	for _, conf := range []float64{0.90, 0.95, 0.99} {
		exact, exactConf := criticalOrder(m, n, conf)
		approx, _ := normalCriticalOrder(m, n, conf)
		tail := 0.0
		for u := 0; u < approx; u++ {
			tail += dist[u]
		}
		trueConf := 1 - 2*tail
		if trueConf < conf || trueConf-exactConf > 0.005 {
			t.Errorf("%d+%d at %g: normal picks k=%d with true confidence %.4f; exact picks k=%d (%.4f)",
				m, n, conf, approx, trueConf, exact, exactConf)
		}
		t.Logf("%d+%d at %g: exact k=%d (%.4f), normal k=%d (true %.4f)", m, n, conf, exact, exactConf, approx, trueConf)
	}
}

// TestMannWhitneyPValue: exact two-sided p-values, with and without ties,
// against hand enumeration; and the normal approximation beyond ExactMaxN.
func TestMannWhitneyPValue(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
		want float64
	}{
		{"separated 3+3", []float64{1, 2, 3}, []float64{4, 5, 6}, 2.0 / 20},
		{"interleaved 2+2", []float64{1, 4}, []float64{2, 3}, 1},
		// Midranks 1, 2.5, 2.5, 4: x's doubled sum 7 vs mean 10; of the
		// six ways to pick two, four are at least that far.
		{"one tie 2+2", []float64{1, 2}, []float64{2, 3}, 4.0 / 6},
		{"all tied", []float64{5, 5, 5}, []float64{5, 5}, 1},
		{"n=1 each", []float64{1}, []float64{2}, 1},
	} {
		if got := mannWhitneyPValue(tc.x, tc.y); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: p = %g, want %g", tc.name, got, tc.want)
		}
	}
	var x, y []float64
	for i := range 40 {
		x, y = append(x, float64(i)), append(y, float64(i)+40)
	}
	if p := mannWhitneyPValue(x, y); p > 1e-10 {
		t.Errorf("40+40 fully separated: normal-approximation p = %g, want below 1e-10", p)
	}
	if p := mannWhitneyPValue(x, x); p != 1 {
		t.Errorf("40+40 identical: p = %g, want 1", p)
	}
}
