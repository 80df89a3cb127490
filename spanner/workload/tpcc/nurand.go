// Package tpcc holds the TPC-C workload's pure rules: NURand and its
// constants, the random choices of the five transactions (keys, remote
// warehouses, last names), home warehouses per runner shard, and the
// population the loader writes. It knows nothing about Spanner; package
// workload turns its values into rows, mutations and statements.
package tpcc

import (
	"hash/fnv"
	"math/rand/v2"
)

// The A constants of NURand (TPC-C clause 2.1.6).
const (
	// ALast draws customer last-name numbers.
	ALast = 255
	// ACustomer draws customer ids.
	ACustomer = 1023
	// AItem draws item ids.
	AItem = 8191
)

// Constants are NURand's C values: one per A, fixed for a load or a run
// (clause 2.1.6.1).
type Constants struct {
	// CLast is C for ALast; CCustomer for ACustomer; CItem for AItem.
	CLast, CCustomer, CItem int64
}

// LoadConstants are the C values of the population: fixed, so that a
// dataset is a pure function of its scale.
var LoadConstants = Constants{CLast: 157, CCustomer: 259, CItem: 7911}

// RunConstants are the C values of a run, derived from its name so that
// every runner shard of the run draws with the same ones. CLast keeps
// clause 2.1.6.1's distance from the load's C_LAST: |C_run - C_load| in
// [65, 119] and neither 96 nor 112.
func RunConstants(run string) Constants {
	h := fnv.New64a()
	h.Write([]byte(run))
	rng := rand.New(rand.NewPCG(h.Sum64(), 0x7470_6363)) //nolint:gosec // a benchmark's key choice, not a secret
	c := Constants{CCustomer: rng.Int64N(ACustomer + 1), CItem: rng.Int64N(AItem + 1)}
	for {
		delta := 65 + rng.Int64N(119-65+1)
		if delta == 96 || delta == 112 {
			continue
		}
		if rng.IntN(2) == 0 && LoadConstants.CLast-delta >= 0 {
			delta = -delta
		}
		if v := LoadConstants.CLast + delta; v >= 0 && v <= ALast {
			c.CLast = v
			return c
		}
	}
}

// NURand is TPC-C's non-uniform random number in [x, y]:
// (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
func NURand(rng *rand.Rand, a, x, y, c int64) int64 {
	return (((rng.Int64N(a+1) | (x + rng.Int64N(y-x+1))) + c) % (y - x + 1)) + x
}

// Uniform is a uniform integer in [x, y].
func Uniform(rng *rand.Rand, x, y int64) int64 {
	return x + rng.Int64N(y-x+1)
}
