package stats

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestEnergyStatisticByHand: Q̂ for {0,0,1,1} split in the middle: four
// cross pairs at distance 1, no spread within, so Ê = 2·4/4 = 2 and
// Q̂ = (2·2/4)·2 = 2; off-centre splits mix the levels and score less.
func TestEnergyStatisticByHand(t *testing.T) {
	x := []float64{0, 0, 1, 1}
	if q := qAt(x, 2); q != 2 {
		t.Errorf("Q̂({0,0 | 1,1}) = %g, want 2", q)
	}
	y := []float64{0, 0, 0, 1, 1, 1}
	// τ=2: X={0,0}, Y={0,1,1,1}: cross 2·3 = 6 -> 2·6/8 = 1.5; within Y: 3
	// pairs of 1 over C(4,2)=6 -> 0.5; Ê = 1; Q̂ = 8/6.
	if q := qAt(y, 2); math.Abs(q-8.0/6) > 1e-12 {
		t.Errorf("Q̂({0,0 | 0,1,1,1}) = %g, want 4/3", q)
	}
	if tau, _ := bestSplit(y, 2); tau != 3 {
		t.Errorf("best split of %v at %d, want 3", y, tau)
	}
	if tau, _ := bestSplit([]float64{1, 2, 3}, 2); tau != -1 {
		t.Errorf("a 3-point segment with minimum segment 2 was split at %d", tau)
	}
}

// TestSeparateKeepsTheStrongerOfCloseCandidates: overlapping windows can
// propose 39 and 40 for one step; the one with the larger Q̂ stays.
func TestSeparateKeepsTheStrongerOfCloseCandidates(t *testing.T) {
	got := separate([]candidate{{index: 39, q: 5}, {index: 10, q: 3}, {index: 40, q: 9}, {index: 42, q: 1}, {index: 43, q: 2}}, 3)
	if want := []int{10, 40, 43}; !reflect.DeepEqual(got, want) {
		t.Errorf("separate = %v, want %v", got, want)
	}
}

func TestWindowsOverlapByHalfAndEndAtTheEnd(t *testing.T) {
	for _, tc := range []struct {
		n, w int
		want [][2]int
	}{
		{30, 50, [][2]int{{0, 30}}},
		{50, 50, [][2]int{{0, 50}}},
		{60, 50, [][2]int{{0, 50}, {10, 60}}},
		{120, 50, [][2]int{{0, 50}, {25, 75}, {50, 100}, {70, 120}}},
	} {
		if got := windows(tc.n, tc.w); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("windows(%d, %d) = %v, want %v", tc.n, tc.w, got, tc.want)
		}
	}
}

// TestChangePointsReportsEachStep: two steps in a long series (longer than
// one window) are both found, with means and magnitudes of their own
// segments; the same seed gives the same answer.
func TestChangePointsReportsEachStep(t *testing.T) {
	series := make([]float64, 90)
	noise := rand.New(rand.NewPCG(5, 5))
	for i := range series {
		level := 100.0
		switch {
		case i >= 70:
			level = 90
		case i >= 30:
			level = 120
		}
		series[i] = level + noise.NormFloat64()
	}
	find := func() []ChangePoint {
		cps, err := ChangePoints(series, ChangePointOptions{MinMagnitude: 0.05}, rand.New(rand.NewPCG(6, 6)))
		if err != nil {
			t.Fatal(err)
		}
		return cps
	}
	cps := find()
	if len(cps) != 2 || cps[0].Index != 30 || cps[1].Index != 70 {
		t.Fatalf("change points %+v, want two, at 30 and 70", cps)
	}
	if math.Abs(cps[0].Magnitude-0.2) > 0.01 || math.Abs(cps[1].Magnitude-(-0.25)) > 0.01 ||
		math.Abs(cps[0].Before-100) > 1 || math.Abs(cps[1].After-90) > 1 || cps[0].PValue > 0.05 {
		t.Errorf("change points %+v: want +20%% (100 -> 120) and -25%% (120 -> 90), significant", cps)
	}
	if again := find(); !reflect.DeepEqual(cps, again) {
		t.Errorf("same seed, different change points: %+v vs %+v", cps, again)
	}
}

func TestChangePointsEdgeCases(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, s := range [][]float64{nil, {1}, {1, 2, 3, 4, 5}, {7, 7, 7, 7, 7, 7, 7, 7}} {
		cps, err := ChangePoints(s, ChangePointOptions{}, rng)
		if err != nil || len(cps) != 0 {
			t.Errorf("series %v: %+v, %v; want no change point and no error", s, cps, err)
		}
	}
	if _, err := ChangePoints([]float64{1, math.NaN()}, ChangePointOptions{}, rng); err == nil {
		t.Error("a NaN in the series was accepted")
	}
	if _, err := ChangePoints([]float64{1, 2}, ChangePointOptions{}, nil); err == nil {
		t.Error("a nil random source was accepted")
	}
	for _, o := range []ChangePointOptions{{MinSegment: 1}, {Window: 4}, {Window: MaxWindow + 1}, {MaxPValue: 1.5}, {MinMagnitude: -1}, {Permutations: 5}} {
		if _, err := ChangePoints([]float64{1, 2}, o, rng); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
	// Zeros before a rise: the magnitude is infinite, not NaN.
	zeros := []float64{0, 0, 0, 0, 0, 0, 5, 5, 5, 5, 5, 5}
	cps, err := ChangePoints(zeros, ChangePointOptions{}, rng)
	if err != nil || len(cps) != 1 || cps[0].Index != 6 || !math.IsInf(cps[0].Magnitude, 1) {
		t.Errorf("0 -> 5: %+v, %v; want one change point at 6 with magnitude +Inf", cps, err)
	}
}

// TestLatestRegression: only a change in the bad direction among the
// latest points counts, and an acknowledged one (by index or by name) does
// not.
func TestLatestRegression(t *testing.T) {
	cps := []ChangePoint{{Index: 10, Magnitude: 0.3}, {Index: 52, Magnitude: -0.1}, {Index: 55, Magnitude: 0.2}}
	names := make([]string, 60)
	for i := range names {
		names[i] = "night-" + string(rune('A'+i%26)) + string(rune('0'+i/26))
	}
	for _, tc := range []struct {
		name   string
		latest int
		dir    Direction
		ack    Acknowledged
		want   int // index, -1 for none
	}{
		{"latency rise in the last 10", 10, LowerIsBetter, Acknowledged{}, 55},
		{"throughput drop in the last 10", 10, HigherIsBetter, Acknowledged{}, 52},
		{"rise older than the window", 3, LowerIsBetter, Acknowledged{}, -1},
		{"acknowledged by index", 10, LowerIsBetter, Acknowledged{Indices: []int{55}}, -1},
		{"acknowledged by name", 10, LowerIsBetter, Acknowledged{Names: []string{names[55]}}, -1},
		{"other names do not acknowledge", 10, LowerIsBetter, Acknowledged{Names: []string{names[52]}}, 55},
	} {
		cp, ok := LatestRegression(cps, 60, tc.latest, tc.dir, names, tc.ack)
		got := -1
		if ok {
			got = cp.Index
		}
		if got != tc.want {
			t.Errorf("%s: regression at %d, want %d", tc.name, got, tc.want)
		}
	}
}
