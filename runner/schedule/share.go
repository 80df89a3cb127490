package schedule

// Share is shard's part of a rate (or of any amount) that shards processes
// split evenly, as they split a profile's arrivals (see Iterator): the one
// rule for "rate ÷ shards". It is computed as the difference of cumulative
// parts, total·(i+1)/n − total·i/n, with the last part ending exactly at
// total, so that the parts added up in shard order give back total exactly,
// even when total does not divide evenly (each difference and each partial
// sum is exact in floating point). shards < 1 counts as 1.
func Share(total float64, shard, shards int) float64 {
	n := max(shards, 1)
	return cumulativeShare(total, shard+1, n) - cumulativeShare(total, shard, n)
}

// cumulativeShare is the part of total that shards [0, i) take.
func cumulativeShare(total float64, i, n int) float64 {
	if i >= n {
		return total
	}
	return total * float64(i) / float64(n)
}
