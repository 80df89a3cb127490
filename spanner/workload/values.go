package workload

import "math/rand/v2"

const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// randomText returns n random letters and digits.
func randomText(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := 0; i < n; {
		x := rng.Uint64()
		for j := 0; j < 10 && i < n; j++ {
			b[i] = letters[x%uint64(len(letters))]
			x /= uint64(len(letters))
			i++
		}
	}
	return string(b)
}

// rowText is the deterministic text of field f of preloaded row k, so a
// dataset is reproducible and a reader can tell a preloaded value apart.
func rowText(k int64, f, n int) string {
	return randomText(rand.New(rand.NewPCG(uint64(k), uint64(f))), n)
}
