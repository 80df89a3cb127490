package stats

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// ChangePointOptions tunes ChangePoints. Zero values take the defaults.
type ChangePointOptions struct {
	// Window is the number of consecutive points analysed together; a
	// longer series is analysed in windows overlapping by half, so one old
	// large change cannot hide a recent small one. 0 means 50 (hunter's
	// default).
	Window int
	// MaxPValue is the permutation p-value a change point must reach;
	// 0 means 0.05.
	MaxPValue float64
	// MinMagnitude is the smallest relative change of the mean, |after /
	// before - 1|, reported as a change point; 0 reports any significant
	// change. Benchmark noise makes a few-percent floor sensible.
	MinMagnitude float64
	// MinSegment is the fewest points on either side of a change point;
	// 0 means 3. A change among the last MinSegment-1 points cannot be
	// seen yet.
	MinSegment int
	// Permutations is the number of permutations per significance test;
	// 0 means 199 (smallest attainable p-value 0.005).
	Permutations int
}

// Defaults of ChangePointOptions.
const (
	DefaultWindow       = 50
	DefaultMaxPValue    = 0.05
	DefaultMinSegment   = 3
	DefaultPermutations = 199
	// MaxWindow bounds the work of one analysis: a permutation costs
	// Window² steps, so a window of 500 with 199 permutations is about 50 M
	// steps per test, well under a second.
	MaxWindow = 500
)

func (o ChangePointOptions) withDefaults() (ChangePointOptions, error) {
	if o.Window == 0 {
		o.Window = DefaultWindow
	}
	if o.MaxPValue == 0 {
		o.MaxPValue = DefaultMaxPValue
	}
	if o.MinSegment == 0 {
		o.MinSegment = DefaultMinSegment
	}
	if o.Permutations == 0 {
		o.Permutations = DefaultPermutations
	}
	switch {
	case o.MinSegment < 2:
		return o, fmt.Errorf("minimum segment %d is below 2: a segment's spread needs two points", o.MinSegment)
	case o.Window < 2*o.MinSegment:
		return o, fmt.Errorf("window %d cannot hold two segments of %d", o.Window, o.MinSegment)
	case o.Window > MaxWindow:
		return o, fmt.Errorf("window %d is above %d: each permutation costs window² steps", o.Window, MaxWindow)
	case !(o.MaxPValue > 0 && o.MaxPValue < 1):
		return o, fmt.Errorf("p-value threshold %g is not in (0, 1)", o.MaxPValue)
	case !(o.MinMagnitude >= 0):
		return o, fmt.Errorf("minimum magnitude %g is negative", o.MinMagnitude)
	case o.Permutations < 19 || o.Permutations > 100_000:
		return o, fmt.Errorf("permutations %d not in [19, 100000]", o.Permutations)
	}
	return o, nil
}

// ChangePoint is a point where a series' level changes.
type ChangePoint struct {
	// Index is the first point of the new level.
	Index int
	// Before and After are the means of the segments either side, up to
	// the neighbouring change points.
	Before, After float64
	// Magnitude is After / Before - 1.
	Magnitude float64
	// PValue is the permutation p-value of the split between its
	// neighbouring change points.
	PValue float64
}

// ChangePoints finds the points where the level of series changes, by
// E-divisive means (Matteson & James 2014, α = 1) as Apache Otava (hunter)
// applies it:
//
//  1. in each window, repeatedly split the segment whose best split has the
//     largest energy statistic Q̂, as long as a permutation test of that
//     segment (the best split's Q̂ against the best Q̂ of permuted copies)
//     gives p ≤ MaxPValue — recursive bisection;
//  2. merge the windows' candidates, keeping the stronger of two closer than
//     MinSegment;
//  3. re-test every candidate on the segment between its neighbours (its
//     Q̂ against the best Q̂ of permuted copies of that segment) and drop
//     the weakest that fails MaxPValue or MinMagnitude, until all pass.
//
// rng drives every permutation, so a seed reproduces the answer.
func ChangePoints(series []float64, opts ChangePointOptions, rng *rand.Rand) ([]ChangePoint, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if rng == nil {
		return nil, errors.New("change-point detection needs a seeded random source")
	}
	for i, x := range series {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("series value %d is %g", i, x)
		}
	}
	var cands []candidate
	for _, w := range windows(len(series), o.Window) {
		for _, c := range edivisive(series[w[0]:w[1]], o, rng) {
			c.index += w[0]
			cands = append(cands, c)
		}
	}
	return prune(series, separate(cands, o.MinSegment), o, rng), nil
}

type candidate struct {
	index int
	q     float64
}

// windows returns [start, end) windows of length w overlapping by half, the
// last aligned with the end of the series.
func windows(n, w int) [][2]int {
	if n <= w {
		return [][2]int{{0, n}}
	}
	var out [][2]int
	for s := 0; ; s += w / 2 {
		if s+w >= n {
			return append(out, [2]int{n - w, n})
		}
		out = append(out, [2]int{s, s + w})
	}
}

// edivisive runs recursive bisection on one window.
func edivisive(x []float64, o ChangePointOptions, rng *rand.Rand) []candidate {
	bounds := []int{0, len(x)} // sorted segment boundaries
	var found []candidate
	for len(found) < len(x)/o.MinSegment {
		best, bestSeg := candidate{index: -1}, 0
		for s := 0; s+1 < len(bounds); s++ {
			tau, q := bestSplit(x[bounds[s]:bounds[s+1]], o.MinSegment)
			if tau >= 0 && q > best.q {
				best, bestSeg = candidate{index: bounds[s] + tau, q: q}, s
			}
		}
		if best.index < 0 {
			break
		}
		seg := x[bounds[bestSeg]:bounds[bestSeg+1]]
		if permutationPValue(seg, best.q, o, rng) > o.MaxPValue {
			break
		}
		found = append(found, best)
		bounds = append(bounds, best.index)
		sort.Ints(bounds)
	}
	return found
}

// separate keeps, of candidates closer than minSeg, the one with the larger
// Q̂, and returns the survivors by index.
func separate(c []candidate, minSeg int) []int {
	sort.SliceStable(c, func(a, b int) bool { return c[a].q > c[b].q })
	var kept []int
	for _, x := range c {
		ok := true
		for _, k := range kept {
			if abs(k-x.index) < minSeg {
				ok = false
				break
			}
		}
		if ok {
			kept = append(kept, x.index)
		}
	}
	sort.Ints(kept)
	return kept
}

// prune re-tests each change point between its neighbours and removes the
// weakest failing one until every remaining one passes.
func prune(x []float64, idx []int, o ChangePointOptions, rng *rand.Rand) []ChangePoint {
	for range len(idx) + 1 {
		cps := describe(x, idx, o, rng)
		weakest := -1
		for i, cp := range cps {
			if cp.PValue <= o.MaxPValue && math.Abs(cp.Magnitude) >= o.MinMagnitude {
				continue
			}
			if weakest < 0 || weaker(cp, cps[weakest]) {
				weakest = i
			}
		}
		if weakest < 0 {
			return cps
		}
		idx = append(idx[:weakest], idx[weakest+1:]...)
	}
	return nil // unreachable: each round removes one index
}

func weaker(a, b ChangePoint) bool {
	if a.PValue != b.PValue {
		return a.PValue > b.PValue
	}
	return math.Abs(a.Magnitude) < math.Abs(b.Magnitude)
}

// describe computes each change point's means, magnitude and p-value
// between its neighbours.
func describe(x []float64, idx []int, o ChangePointOptions, rng *rand.Rand) []ChangePoint {
	cps := make([]ChangePoint, len(idx))
	for i, at := range idx {
		lo, hi := 0, len(x)
		if i > 0 {
			lo = idx[i-1]
		}
		if i+1 < len(idx) {
			hi = idx[i+1]
		}
		before, after := mean(x[lo:at]), mean(x[at:hi])
		seg, tau := x[lo:hi], at-lo
		p := 1.0
		if tau >= o.MinSegment && len(seg)-tau >= o.MinSegment {
			// Against the best split of each permutation, not the same τ:
			// τ was chosen as the best, and a fixed-τ test would forget
			// that choice and call edge noise significant.
			p = permutationPValue(seg, qAt(seg, tau), o, rng)
		}
		cps[i] = ChangePoint{Index: at, Before: before, After: after, Magnitude: relative(before, after), PValue: p}
	}
	return cps
}

func relative(before, after float64) float64 {
	if before == 0 {
		if after == 0 {
			return 0
		}
		return math.Copysign(math.Inf(1), after)
	}
	return after/before - 1
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// permutationPValue is the share of permutations of seg whose best split's
// Q̂ reaches observed, counting the observed order as one of them. It stops
// early once the p-value cannot reach the threshold any more.
func permutationPValue(seg []float64, observed float64, o ChangePointOptions, rng *rand.Rand) float64 {
	perm := append([]float64(nil), seg...)
	limit := int(o.MaxPValue * float64(o.Permutations+1)) // more hits than this fail the test
	hits := 0
	for r := 0; r < o.Permutations; r++ {
		rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		if _, q := bestSplit(perm, o.MinSegment); q >= observed {
			hits++
			if hits > limit {
				return float64(hits+1) / float64(r+2)
			}
		}
	}
	return float64(hits+1) / float64(o.Permutations+1)
}

// bestSplit returns the split τ (first index of the right part, with at
// least minSeg points either side) maximising Q̂, and that Q̂; τ = -1 when
// the segment is too short to split.
func bestSplit(x []float64, minSeg int) (int, float64) {
	best, bestQ := -1, math.Inf(-1)
	e := newEnergy(x)
	for tau := minSeg; tau <= len(x)-minSeg; tau++ {
		if q := e.q(tau); q > bestQ {
			best, bestQ = tau, q
		}
	}
	return best, bestQ
}

func qAt(x []float64, tau int) float64 { return newEnergy(x).q(tau) }

// energy holds prefix sums of pairwise distances so that Q̂ at every split
// costs O(1) after O(n²) set-up.
type energy struct {
	n      int
	left   []float64 // left[t]: Σ |x_i - x_j| over i < j < t
	right  []float64 // right[t]: Σ |x_i - x_j| over t ≤ i < j
	totalD float64
}

func newEnergy(x []float64) energy {
	n := len(x)
	e := energy{n: n, left: make([]float64, n+1), right: make([]float64, n+1)}
	for t := 1; t <= n; t++ {
		s := 0.0
		for i := 0; i < t-1; i++ {
			s += math.Abs(x[i] - x[t-1])
		}
		e.left[t] = e.left[t-1] + s
	}
	for t := n - 1; t >= 0; t-- {
		s := 0.0
		for j := t + 1; j < n; j++ {
			s += math.Abs(x[t] - x[j])
		}
		e.right[t] = e.right[t+1] + s
	}
	e.totalD = e.left[n]
	return e
}

// q is Matteson & James's Q̂(X, Y) = mk/(m+k) · Ê for X = x[:tau],
// Y = x[tau:], with Ê = 2/(mk) Σ|X-Y| - C(m,2)⁻¹ Σ|X-X'| - C(k,2)⁻¹ Σ|Y-Y'|.
func (e energy) q(tau int) float64 {
	m, k := float64(tau), float64(e.n-tau)
	wl, wr := e.left[tau], e.right[tau]
	cross := e.totalD - wl - wr
	ehat := 2*cross/(m*k) - wl/(m*(m-1)/2) - wr/(k*(k-1)/2)
	return m * k / (m + k) * ehat
}

// Acknowledged lists change points a user has accepted, so they stop
// alerting: by series index, or by the name of the iteration where the new
// level starts (names survive a sliding history; indices do not).
type Acknowledged struct {
	// Indices are acknowledged change point indices.
	Indices []int
	// Names are acknowledged iteration names.
	Names []string
}

func (a Acknowledged) has(index int, names []string) bool {
	for _, i := range a.Indices {
		if i == index {
			return true
		}
	}
	if index < len(names) {
		for _, n := range a.Names {
			if n == names[index] {
				return true
			}
		}
	}
	return false
}

// LatestRegression returns the most recent change point among the last
// latest points of a series of length n that moves the metric in its bad
// direction and is not acknowledged; names (optional, one per point) name
// the iterations for acknowledgements.
func LatestRegression(cps []ChangePoint, n, latest int, dir Direction, names []string, ack Acknowledged) (ChangePoint, bool) {
	for i := len(cps) - 1; i >= 0; i-- {
		cp := cps[i]
		if !cp.Recent(n, latest) {
			break
		}
		if cp.Worsens(dir) && !ack.has(cp.Index, names) {
			return cp, true
		}
	}
	return ChangePoint{}, false
}

// Worsens says whether the change moves a metric with direction dir the
// bad way.
func (cp ChangePoint) Worsens(dir Direction) bool {
	return (dir == LowerIsBetter && cp.Magnitude > 0) || (dir == HigherIsBetter && cp.Magnitude < 0)
}

// Recent says whether the new level starts among the last latest points
// of a series of n.
func (cp ChangePoint) Recent(n, latest int) bool { return cp.Index >= n-latest }
