package tpcc

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// chiSquare is Pearson's statistic of observed counts against expected
// counts.
func chiSquare(observed []int64, expected []float64) float64 {
	var x float64
	for i, o := range observed {
		if expected[i] == 0 {
			if o != 0 {
				return 1e18
			}
			continue
		}
		d := float64(o) - expected[i]
		x += d * d / expected[i]
	}
	return x
}

// exactNURand is NURand's exact distribution over [x, y]: every pair of
// its two uniform draws, counted.
func exactNURand(a, x, y, c int64) []float64 {
	p := make([]float64, y-x+1)
	pairs := float64((a + 1) * (y - x + 1))
	for r1 := int64(0); r1 <= a; r1++ {
		for r2 := x; r2 <= y; r2++ {
			p[(((r1 | r2) + c) % (y - x + 1))] += 1 / pairs
		}
	}
	return p
}

// TestNURandFollowsItsExactDistribution draws NURand with the spec's A
// values and checks the counts against the distribution enumerated from
// the formula (chi-square, p = 0.001 critical values by Wilson-Hilferty).
func TestNURandFollowsItsExactDistribution(t *testing.T) {
	for _, tc := range []struct{ a, x, y, c int64 }{
		{ALast, 0, 999, 157}, {ACustomer, 1, 3000, 259}, {ALast, 0, 29, 200}, {ACustomer, 1, 30, 5},
	} {
		t.Run(fmt.Sprintf("A=%d,[%d,%d]", tc.a, tc.x, tc.y), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			n := int64(300_000)
			counts := make([]int64, tc.y-tc.x+1)
			for range n {
				v := NURand(rng, tc.a, tc.x, tc.y, tc.c)
				if v < tc.x || v > tc.y {
					t.Fatalf("NURand(%d, %d, %d) = %d, outside its range", tc.a, tc.x, tc.y, v)
				}
				counts[v-tc.x]++
			}
			p := exactNURand(tc.a, tc.x, tc.y, tc.c)
			exp := make([]float64, len(p))
			for i := range p {
				exp[i] = p[i] * float64(n)
			}
			if x2, crit := chiSquare(counts, exp), critical(len(p)-1); x2 > crit {
				t.Errorf("chi-square %.0f over %d degrees of freedom exceeds %.0f: NURand does not follow (((rand(0,A) | rand(x,y)) + C) mod (y-x+1)) + x", x2, len(p)-1, crit)
			}
		})
	}
}

// TestNURandIsNotUniform guards the test above: the spec's non-uniformity
// is large enough to tell NURand from a uniform draw.
func TestNURandIsNotUniform(t *testing.T) {
	p := exactNURand(ACustomer, 1, 3000, 259)
	lo, hi := p[0], p[0]
	for _, v := range p {
		lo, hi = min(lo, v), max(hi, v)
	}
	if hi < 2*lo {
		t.Errorf("NURand(1023, 1, 3000) is nearly uniform (max %.6f, min %.6f)", hi, lo)
	}
}

// critical is the chi-square value exceeded with probability 0.001 at df
// degrees of freedom (Wilson-Hilferty).
func critical(df int) float64 {
	k := float64(df)
	z := 3.090
	v := 1 - 2/(9*k) + z*sqrt(2/(9*k))
	return k * v * v * v
}

func sqrt(x float64) float64 {
	r := x
	for range 50 {
		r = (r + x/r) / 2
	}
	return r
}

func TestRunConstantsKeepTheirDistanceFromTheLoadAndAgreeAcrossShards(t *testing.T) {
	for i := range 500 {
		run := fmt.Sprintf("run-%d", i)
		c := RunConstants(run)
		d := c.CLast - LoadConstants.CLast
		if d < 0 {
			d = -d
		}
		if d < 65 || d > 119 || d == 96 || d == 112 || c.CLast < 0 || c.CLast > ALast {
			t.Fatalf("%s: C_LAST %d is %d from the load's %d; clause 2.1.6.1 wants 65..119, not 96 or 112", run, c.CLast, d, LoadConstants.CLast)
		}
		if c.CCustomer < 0 || c.CCustomer > ACustomer || c.CItem < 0 || c.CItem > AItem {
			t.Fatalf("%s: constants out of range: %+v", run, c)
		}
		if again := RunConstants(run); again != c {
			t.Fatalf("%s: two shards of one run drew different constants: %+v, %+v", run, c, again)
		}
	}
}

func TestLastNames(t *testing.T) {
	for n, want := range map[int64]string{0: "BARBARBAR", 371: "PRICALLYOUGHT", 999: "EINGEINGEING"} {
		if got := LastName(n); got != want {
			t.Errorf("LastName(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestHomeWarehousesPartitionTheWarehouses(t *testing.T) {
	for _, tc := range []struct {
		warehouses int64
		shards     int
	}{{10, 3}, {2, 2}, {1, 1}, {5, 5}, {100, 7}} {
		seen := map[int64]int{}
		for s := range tc.shards {
			for _, w := range HomeWarehouses(tc.warehouses, s, tc.shards) {
				seen[w]++
			}
		}
		if int64(len(seen)) != tc.warehouses {
			t.Errorf("%d warehouses over %d shards: %d are someone's home, want all", tc.warehouses, tc.shards, len(seen))
		}
		for w, n := range seen {
			if n != 1 || w < 1 || w > tc.warehouses {
				t.Errorf("%d warehouses over %d shards: warehouse %d is home to %d shards", tc.warehouses, tc.shards, w, n)
			}
		}
	}
	if got := HomeWarehouses(2, 3, 4); len(got) != 1 || got[0] != 2 {
		t.Errorf("shard 3 of 4 over 2 warehouses: home %v, want [2]", got)
	}
}

// TestRemoteWarehouseDistributions checks the spec's shares over seeded
// draws with exact counts of a chi-square test: Payment's 15 % remote
// customers spread uniformly over the other warehouses, New-Order's 1 %
// remote supply warehouses, 60 % lookups by last name, 1 % rollbacks and
// 5 to 15 order lines.
func TestRemoteWarehouseDistributions(t *testing.T) {
	const n = 200_000
	p := &Picker{Scale: v1alpha1.TPCCScale{Warehouses: 10, Items: 1000, Customers: 30}, Home: []int64{4}}
	rng := rand.New(rand.NewPCG(7, 7))
	byWarehouse := make([]int64, 11)
	var remote, supplyRemote, byName, rollbacks int64
	lines := make([]int64, 11)
	for range n {
		w, d := p.PaymentCustomer(rng, 4, 3)
		byWarehouse[w]++
		if w != 4 {
			remote++
		} else if d != 3 {
			t.Fatalf("a home Payment customer lives in district %d, want the terminal's district 3", d)
		}
		if p.SupplyWarehouse(rng, 4) != 4 {
			supplyRemote++
		}
		if ByLastName(rng) {
			byName++
		}
		if RollsBack(rng) {
			rollbacks++
		}
		lines[NewOrderLines(rng)-5]++
	}
	for _, share := range []struct {
		name   string
		got    int64
		wantPc float64
	}{{"remote Payment customers", remote, 15}, {"remote supply warehouses", supplyRemote, 1}, {"lookups by last name", byName, 60}, {"New-Order rollbacks", rollbacks, 1}} {
		exp := n * share.wantPc / 100
		if x2 := chiSquare([]int64{share.got, n - share.got}, []float64{exp, n - exp}); x2 > critical(1) {
			t.Errorf("%s: %d of %d (%.2f %%), want %.0f %% (chi-square %.1f)", share.name, share.got, n, 100*float64(share.got)/n, share.wantPc, x2)
		}
	}
	exp := make([]float64, 11)
	for w := 1; w <= 10; w++ {
		if w != 4 {
			exp[w] = float64(remote) / 9
		}
	}
	obs := append([]int64(nil), byWarehouse...)
	obs[4] = 0
	if x2 := chiSquare(obs, exp); x2 > critical(8) {
		t.Errorf("remote Payment warehouses are not uniform over the other 9: %v (chi-square %.1f)", byWarehouse, x2)
	}
	uniform := make([]float64, 11)
	for i := range uniform {
		uniform[i] = n / 11.0
	}
	if x2 := chiSquare(lines, uniform); x2 > critical(10) {
		t.Errorf("order line counts are not uniform over 5..15: %v", lines)
	}
}

// TestKeyDistributionsStayInThePopulation draws customers, items and last
// names of the Test population: every one exists, and the unused item does
// not.
func TestKeyDistributionsStayInThePopulation(t *testing.T) {
	s := (&v1alpha1.TPCCSpec{Population: v1alpha1.TPCCTest}).Scale()
	p := &Picker{Scale: s, C: RunConstants("r"), Home: []int64{1}}
	rng := rand.New(rand.NewPCG(3, 3))
	names := map[string]bool{}
	for c := int64(0); c < p.LastNameNumbers(); c++ {
		names[LastName(c)] = true
	}
	for range 50_000 {
		if c := p.CustomerID(rng); c < 1 || c > s.Customers {
			t.Fatalf("customer %d outside 1..%d", c, s.Customers)
		}
		if i := p.ItemID(rng); i < 1 || i > s.Items {
			t.Fatalf("item %d outside 1..%d", i, s.Items)
		}
		if n := p.LastName(rng); !names[n] {
			t.Fatalf("last name %s is no loaded customer's", n)
		}
	}
	full := (&v1alpha1.TPCCSpec{}).Scale()
	if p.UnusedItemID() <= full.Items {
		t.Errorf("the rollback's unused item %d exists in the Full population (%d items), which a reload to Test leaves behind", p.UnusedItemID(), full.Items)
	}
}
