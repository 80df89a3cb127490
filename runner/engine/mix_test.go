package engine

import (
	"math/rand/v2"
	"testing"
)

// TestMixPicksInProportionToWeights draws TPC-C's standard mix
// (45/43/4/4/4) with a seeded generator: the counts pass a chi-square test
// against the weights (4 degrees of freedom, p = 0.001: 18.47), and an
// operation of weight 0 share would show.
func TestMixPicksInProportionToWeights(t *testing.T) {
	weights := []int{45, 43, 4, 4, 4}
	ops := make([]Operation, len(weights))
	for i, w := range weights {
		ops[i] = Operation{Name: string(rune('a' + i)), Weight: w}
	}
	m := newMix(ops)
	rng := rand.New(rand.NewPCG(5, 5))
	const n = 100_000
	counts := make([]int, len(weights))
	for range n {
		counts[m.pick(rng)]++
	}
	var x2 float64
	for i, w := range weights {
		exp := float64(n) * float64(w) / 100
		d := float64(counts[i]) - exp
		x2 += d * d / exp
	}
	if x2 > 18.47 {
		t.Errorf("picks %v of %d for weights %v: chi-square %.1f, the mix does not follow its weights", counts, n, weights, x2)
	}
	single := newMix(ops[:1])
	for range 100 {
		if single.pick(rng) != 0 {
			t.Fatal("a mix of one operation picked another")
		}
	}
}
