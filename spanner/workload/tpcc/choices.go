package tpcc

import (
	"math/rand/v2"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// Picker draws the random inputs of the five transactions for one runner
// shard, as clause 2 prescribes them.
type Picker struct {
	// Scale is the population the database holds.
	Scale v1alpha1.TPCCScale
	// C are the run's NURand constants.
	C Constants
	// Home are the shard's home warehouses (HomeWarehouses).
	Home []int64
}

// HomeWarehouses is shard i of n's share of the warehouses, like a
// terminal's fixed home warehouse: a contiguous slice of [1, warehouses]
// when there are at least as many warehouses as shards, else the one
// warehouse the shard shares with others (shard i takes warehouse
// i mod warehouses + 1).
func HomeWarehouses(warehouses int64, shard, shards int) []int64 {
	if int64(shards) > warehouses {
		return []int64{int64(shard)%warehouses + 1}
	}
	from := warehouses * int64(shard) / int64(shards)
	to := warehouses * int64(shard+1) / int64(shards)
	home := make([]int64, 0, to-from)
	for w := from + 1; w <= to; w++ {
		home = append(home, w)
	}
	return home
}

// HomeWarehouse picks one of the shard's home warehouses uniformly.
func (p *Picker) HomeWarehouse(rng *rand.Rand) int64 {
	return p.Home[rng.IntN(len(p.Home))]
}

// District is a uniform district id in [1, 10].
func (p *Picker) District(rng *rand.Rand) int64 {
	return Uniform(rng, 1, v1alpha1.TPCCDistricts)
}

// CustomerID is NURand(1023, 1, customers per district).
func (p *Picker) CustomerID(rng *rand.Rand) int64 {
	return NURand(rng, ACustomer, 1, p.Scale.Customers, p.C.CCustomer)
}

// LastNameNumbers is how many distinct last-name numbers the population
// holds: 1,000, or fewer when a district has fewer customers (Test), whose
// customer c is named after number c-1.
func (p *Picker) LastNameNumbers() int64 {
	return min(1000, p.Scale.Customers)
}

// LastName is the last name of a customer looked up by name:
// NURand(255, 0, 999), within the names the population holds.
func (p *Picker) LastName(rng *rand.Rand) string {
	return LastName(NURand(rng, ALast, 0, p.LastNameNumbers()-1, p.C.CLast))
}

// ItemID is NURand(8191, 1, items).
func (p *Picker) ItemID(rng *rand.Rand) int64 {
	return NURand(rng, AItem, 1, p.Scale.Items, p.C.CItem)
}

// UnusedItemID is an item id no item has: New-Order's rollback (clause
// 2.4.1.4) orders it as its last item. It is past the Full population's
// items, so that a database reloaded from Full to Test (whose reload
// leaves the items table to be overwritten, not emptied) has no such item
// either.
func (p *Picker) UnusedItemID() int64 { return v1alpha1.TPCCFullItems + 1 }

// OtherWarehouse is a uniform warehouse other than home; home itself when
// there is only one.
func (p *Picker) OtherWarehouse(rng *rand.Rand, home int64) int64 {
	if p.Scale.Warehouses < 2 {
		return home
	}
	w := Uniform(rng, 1, p.Scale.Warehouses-1)
	if w >= home {
		w++
	}
	return w
}

// SupplyWarehouse is a New-Order line's supplying warehouse: home for 99 %
// of lines, another warehouse for 1 % (clause 2.4.1.5).
func (p *Picker) SupplyWarehouse(rng *rand.Rand, home int64) int64 {
	if rng.IntN(100) == 0 {
		return p.OtherWarehouse(rng, home)
	}
	return home
}

// PaymentCustomer is where Payment's customer lives: the home warehouse and
// district for 85 %, a random district of another warehouse for 15 %
// (clause 2.5.1.2).
func (p *Picker) PaymentCustomer(rng *rand.Rand, home, district int64) (w, d int64) {
	if rng.IntN(100) < 85 {
		return home, district
	}
	return p.OtherWarehouse(rng, home), p.District(rng)
}

// ByLastName says whether Payment or Order-Status looks its customer up by
// last name: 60 % of the time (clauses 2.5.1.2, 2.6.1.2).
func ByLastName(rng *rand.Rand) bool { return rng.IntN(100) < 60 }

// NewOrderLines is a New-Order's line count, uniform in [5, 15].
func NewOrderLines(rng *rand.Rand) int64 { return Uniform(rng, 5, 15) }

// RollsBack says whether a New-Order is one of the 1 % that order an
// unused item and roll back.
func RollsBack(rng *rand.Rand) bool { return rng.IntN(100) == 0 }
