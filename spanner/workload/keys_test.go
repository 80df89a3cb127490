package workload

import (
	cryptorand "crypto/rand"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

func TestScanRangeStaysInOneContiguousBlock(t *testing.T) {
	for _, tc := range []struct {
		k, rows int64
		n       int
	}{{0, 5000, 10}, {995, 5000, 10}, {999, 5000, 10}, {4999, 5000, 10}, {4995, 4997, 10}, {3, 5, 10}, {1500, 1505, 10}} {
		first := scanStart(tc.k, tc.rows, tc.n)
		block := first / BlockRows
		last := min(first+int64(tc.n), tc.rows, (block+1)*BlockRows) - 1
		if last/BlockRows != block || first < 0 || last >= tc.rows {
			t.Errorf("scanStart(%d, rows=%d, n=%d) = %d..%d crosses a block or leaves the dataset", tc.k, tc.rows, tc.n, first, last)
		}
		want := min(int64(tc.n), tc.rows-block*BlockRows, BlockRows)
		if got := last - first + 1; got != want {
			t.Errorf("scanStart(%d, rows=%d, n=%d) covers %d rows, want %d", tc.k, tc.rows, tc.n, got, want)
		}
	}
}

func TestPreloadedKeysSortByIndexWithinABlockAndInsertsSortOutside(t *testing.T) {
	keys := []string{YCSBKey(2000), YCSBKey(2001), YCSBKey(2009), YCSBKey(2999)}
	if !sort.StringsAreSorted(keys) {
		t.Fatalf("keys of one block are not in index order: %v", keys)
	}
	lo, hi := YCSBKey(2000), YCSBKey(2999)
	for k := int64(0); k < 100_000; k++ {
		if ins := ycsbInsertKey(k); ins >= lo && ins <= hi {
			t.Fatalf("inserted key %s falls inside block range [%s, %s]", ins, lo, hi)
		}
	}
}

func TestInsertStartsLieBeyondThePreloadedRowsAndSpread(t *testing.T) {
	starts := map[int64]bool{}
	for range 1000 {
		k, err := insertStart(500, cryptorand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if k < 500 || k >= 500+insertSpan || starts[k] {
			t.Fatalf("insert start %d: overlaps the preloaded rows, leaves the span or repeats", k)
		}
		starts[k] = true
	}
	if _, err := insertStart(500, strings.NewReader("short")); err == nil {
		t.Errorf("a failing random source gave an insert start, want an error")
	}
}

func TestZipfianFavoursFewKeysAndStaysInRange(t *testing.T) {
	const n = 100_000
	z := newZipfian(n)
	rng := rand.New(rand.NewPCG(1, 1))
	counts := map[int64]int{}
	for range 200_000 {
		k := z.next(rng)
		if k < 0 || k >= n {
			t.Fatalf("zipfian drew %d outside [0, %d)", k, n)
		}
		counts[k]++
	}
	top := make([]int, 0, len(counts))
	for _, c := range counts {
		top = append(top, c)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(top)))
	var hot int
	for _, c := range top[:n/100] {
		hot += c
	}
	// With theta 0.99 the hottest 1% of keys take well over a third of draws;
	// uniform would give them 1%.
	if frac := float64(hot) / 200_000; frac < 0.35 {
		t.Errorf("hottest 1%% of keys got %.2f of draws; zipfian(0.99) should give them more than 0.35", frac)
	}
}

func TestZetaTailApproximationIsClose(t *testing.T) {
	exact := 0.0
	for i := 1; i <= 12_000_000; i++ {
		exact += 1 / pow(float64(i), zipfianTheta)
	}
	if got := zeta(12_000_000, zipfianTheta); abs(got-exact)/exact > 1e-6 {
		t.Errorf("zeta(12M) = %v, exact %v", got, exact)
	}
}

func TestInsertLogDeletesOldestOnceAndLatestPrefersNewest(t *testing.T) {
	var l insertLog
	for k := range int64(100) {
		l.added(k)
	}
	for want := range int64(10) {
		if k, ok := l.takeOldest(); !ok || k != want {
			t.Fatalf("takeOldest = %d, %v; want %d", k, ok, want)
		}
	}
	rng := rand.New(rand.NewPCG(2, 2))
	z := newZipfian(maxLive)
	newest := 0
	for range 1000 {
		k, ok := l.latest(rng, z)
		if !ok || k < 10 {
			t.Fatalf("latest returned %d (ok %v): a deleted or unknown key", k, ok)
		}
		if k >= 90 {
			newest++
		}
	}
	if newest < 500 {
		t.Errorf("latest chose one of the 10 newest keys %d times in 1000; want most of the time", newest)
	}
}

func pow(x, y float64) float64 { return math.Pow(x, y) }
func abs(x float64) float64    { return math.Abs(x) }
