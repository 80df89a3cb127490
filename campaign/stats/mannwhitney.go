package stats

import (
	"math"
	"sort"
)

// ExactMaxN is the largest total sample size m+n for which the Mann–Whitney
// distribution is computed exactly; larger samples use the normal
// approximation with a continuity correction.
//
// Why 60: the exact rank-sum recursion costs about N·m·N² steps, a few
// milliseconds at N = 60, and grows as N⁴ beyond; benchmark campaigns
// rarely exceed 30 runs per cell. At 30+30 the normal approximation picks
// the exact order statistic or its neighbour, whose true confidence is
// still at least the requested one and within 0.005 of the exact choice
// (TestNormalCriticalValueIsSafeAtTheSwitch), so little is lost by
// switching there.
const ExactMaxN = 60

// rankSumCounts returns, for choosing m of the items whose doubled ranks are
// scores2, the number of ways each doubled rank sum s can occur (index s).
// Doubled ranks keep midranks of ties integral, so the same recursion gives
// the exact conditional (permutation) distribution with ties and, for ranks
// 1..N, the classical tie-free distribution. Counts are float64: C(60,30) ≈
// 1.2e17 exceeds no float64 range, and only ratios of counts are used.
func rankSumCounts(scores2 []int, m int) []float64 {
	maxSum := 0
	for _, s := range scores2 {
		maxSum += s
	}
	// ways[k][s]: ways to choose k of the items seen so far with sum s.
	ways := make([][]float64, m+1)
	for k := range ways {
		ways[k] = make([]float64, maxSum+1)
	}
	ways[0][0] = 1
	seen := 0
	for _, sc := range scores2 {
		seen++
		for k := min(m, seen); k >= 1; k-- {
			prev, cur := ways[k-1], ways[k]
			for s := maxSum; s >= sc; s-- {
				cur[s] += prev[s-sc]
			}
		}
	}
	return ways[m]
}

// exactUDistribution returns P(U = u) for u = 0..m·n, the tie-free null
// distribution of the Mann–Whitney U statistic for samples of sizes m and n.
func exactUDistribution(m, n int) []float64 {
	scores := make([]int, m+n)
	for i := range scores {
		scores[i] = 2 * (i + 1)
	}
	counts := rankSumCounts(scores, m)
	total := 0.0
	for _, c := range counts {
		total += c
	}
	// W = U + m(m+1)/2, in doubled units.
	offset := m * (m + 1)
	p := make([]float64, m*n+1)
	for u := range p {
		p[u] = counts[2*u+offset] / total
	}
	return p
}

// criticalOrder returns k, the order statistic of the m·n pairwise
// differences whose pair [D(k), D(mn+1-k)] is the distribution-free
// interval at the requested confidence, and the confidence it actually
// achieves (the discrete distribution rarely hits it exactly, so the
// interval is the narrowest one at least as confident). k = 0 means no
// interval reaches the requested confidence with these sample sizes.
//
// Coverage is 1 - 2·P(U ≤ k-1): D(k) lies above the true shift exactly when
// fewer than k shifted differences fall below zero.
func criticalOrder(m, n int, confidence float64) (k int, achieved float64) {
	// The tolerance keeps 1 - 0.9 = 0.0999… from refusing an interval of
	// exactly 90 %.
	alpha2 := (1-confidence)/2 + 1e-12
	if m+n <= ExactMaxN {
		dist := exactUDistribution(m, n)
		cdf := 0.0 // P(U ≤ k-1)
		for k < len(dist)/2 && cdf+dist[k] <= alpha2 {
			cdf += dist[k]
			k++
		}
		if k == 0 {
			return 0, 0
		}
		return k, 1 - 2*cdf
	}
	return normalCriticalOrder(m, n, confidence)
}

// normalCriticalOrder is criticalOrder by the normal approximation with
// continuity correction: P(U ≤ k-1) ≈ Φ((k - 1/2 - mn/2)/σ) ≤ α/2.
func normalCriticalOrder(m, n int, confidence float64) (int, float64) {
	mn := float64(m * n)
	sigma := math.Sqrt(mn * float64(m+n+1) / 12)
	z := normalQuantile(1 - (1-confidence)/2)
	k := int(math.Floor(mn/2 - z*sigma + 0.5))
	if k < 1 {
		return 0, 0
	}
	tail := normalCDF((float64(k) - 0.5 - mn/2) / sigma)
	return k, 1 - 2*tail
}

// mannWhitneyPValue returns the two-sided p-value of the Mann–Whitney test
// that x and y come from one distribution. Ties get midranks; for small
// samples the p-value is exact under the permutation distribution
// conditional on the observed ties, so a tie is neither ignored nor broken
// at random. Large samples use the normal approximation with the tie
// correction of the variance and a continuity correction.
func mannWhitneyPValue(x, y []float64) float64 {
	m, n := len(x), len(y)
	all := make([]float64, 0, m+n)
	all = append(all, x...)
	all = append(all, y...)
	ranks2, tieTerm := doubledMidranks(all)
	w2 := 0 // doubled rank sum of x
	for i := 0; i < m; i++ {
		w2 += ranks2[i]
	}
	N := m + n
	mean2 := m * (N + 1) // E[2W]
	dev2 := abs(w2 - mean2)
	if N <= ExactMaxN {
		counts := rankSumCounts(ranks2, m)
		total, extreme := 0.0, 0.0
		for s, c := range counts {
			if c == 0 {
				continue
			}
			total += c
			if abs(s-mean2) >= dev2 {
				extreme += c
			}
		}
		return math.Min(1, extreme/total)
	}
	mf, nf, Nf := float64(m), float64(n), float64(N)
	variance := mf * nf / 12 * ((Nf + 1) - tieTerm/(Nf*(Nf-1)))
	if variance <= 0 {
		return 1 // every value tied: no evidence of any difference
	}
	z := (float64(dev2)/2 - 0.5) / math.Sqrt(variance)
	if z <= 0 {
		return 1
	}
	return math.Min(1, 2*normalCDF(-z))
}

// doubledMidranks returns each value's midrank times two (integral even
// with ties) and Σ(t³ - t) over tie groups, for the variance correction.
func doubledMidranks(v []float64) ([]int, float64) {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
	ranks2 := make([]int, len(v))
	tieTerm := 0.0
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		// positions i..j (0-based) share ranks i+1..j+1; doubled midrank i+j+2.
		for t := i; t <= j; t++ {
			ranks2[idx[t]] = i + j + 2
		}
		t := float64(j - i + 1)
		tieTerm += t*t*t - t
		i = j + 1
	}
	return ranks2, tieTerm
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

func normalQuantile(p float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*p) }
