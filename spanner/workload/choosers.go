package workload

import (
	"math"
	"math/rand/v2"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// chooser picks the index of an existing preloaded row.
type chooser interface {
	next(rng *rand.Rand) int64
}

func newChooser(d v1alpha1.KeyDistribution, n int64) chooser {
	if d == v1alpha1.KeysZipfian {
		return newZipfian(n)
	}
	return uniform{n: n}
}

type uniform struct{ n int64 }

func (u uniform) next(rng *rand.Rand) int64 { return rng.Int64N(u.n) }

// zipfianTheta is YCSB's default zipfian constant.
const zipfianTheta = 0.99

// zipfian is YCSB's scrambled zipfian generator: ranks follow Zipf(0.99)
// (Gray et al., "Quickly generating billion-record synthetic databases") and
// are hashed over the key space, so hot keys are spread, not adjacent.
type zipfian struct {
	n                          int64
	alpha, zetan, eta, halfPow float64
}

func newZipfian(n int64) *zipfian {
	zeta2 := zeta(2, zipfianTheta)
	z := &zipfian{n: n, alpha: 1 / (1 - zipfianTheta), zetan: zeta(n, zipfianTheta)}
	z.eta = (1 - math.Pow(2/float64(n), 1-zipfianTheta)) / (1 - zeta2/z.zetan)
	z.halfPow = 1 + math.Pow(0.5, zipfianTheta)
	return z
}

// zeta sums 1/i^theta for i in 1..n, exactly up to ten million terms and by
// the Euler-Maclaurin tail beyond, so huge key spaces start instantly.
func zeta(n int64, theta float64) float64 {
	const exact = 10_000_000
	m := min(n, exact)
	var sum float64
	for i := int64(1); i <= m; i++ {
		sum += 1 / math.Pow(float64(i), theta)
	}
	if n > m {
		a, b := float64(m), float64(n)
		sum += (math.Pow(b, 1-theta)-math.Pow(a, 1-theta))/(1-theta) + (1/math.Pow(b, theta)-1/math.Pow(a, theta))/2
	}
	return sum
}

func (z *zipfian) rank(rng *rand.Rand) int64 {
	u := rng.Float64()
	uz := u * z.zetan
	switch {
	case uz < 1:
		return 0
	case uz < z.halfPow:
		return 1
	}
	r := int64(float64(z.n) * math.Pow(z.eta*u-z.eta+1, z.alpha))
	return min(r, z.n-1)
}

func (z *zipfian) next(rng *rand.Rand) int64 {
	return int64(hash64('z', z.rank(rng)) % uint64(z.n))
}
