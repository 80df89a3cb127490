package histogram

import (
	"math"
	"math/bits"
	"sort"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Compact is a histogram with the shared geometry whose memory follows the
// buckets it holds, not the geometry: a full HDR histogram of 1 µs-100 s at
// 3 digits is 147 KiB whatever it holds, while a merged result holds
// thousands of them. It keeps the populated buckets either as sorted
// (index, count) pairs, when few are populated or a count needs more than
// 16 bits, or as a window of 16-bit counts from the lowest to the highest
// populated bucket, when much of that span is populated (a dense interval
// of a busy operation: thousands of buckets of tens to thousands of
// samples, at a third of the pairs' size). Merges are exact
// and never materialise the full counts array; figures are those the HDR
// library computes from the same counts.
type Compact struct {
	total int64
	// Sparse form: idx ascending, cnt[i] the count of bucket idx[i].
	idx []int32
	cnt []uint64
	// Window form (win != nil): win[i] is the count of bucket lo+i.
	lo  int32
	win []uint16
}

// The bucket indexing of the shared geometry (lowest 1, 3 digits: 2048
// sub-buckets, unit magnitude 0), as HdrHistogram computes it.
const (
	subBucketHalfCountMagnitude = 10
	subBucketHalfCount          = 1 << subBucketHalfCountMagnitude
	subBucketMask               = 2*subBucketHalfCount - 1
	// countsLen is the number of buckets up to HighestMicros.
	countsLen = 18 * subBucketHalfCount
)

// bucketIndex is the flat bucket index of v.
func bucketIndex(v int64) int32 {
	b := int32(64-bits.LeadingZeros64(uint64(v|subBucketMask))) - (subBucketHalfCountMagnitude + 1)
	sub := int32(v >> uint(b))
	return (b+1)<<subBucketHalfCountMagnitude + sub - subBucketHalfCount
}

// bucketValue is the lowest value of bucket idx.
func bucketValue(idx int32) int64 {
	b := idx>>subBucketHalfCountMagnitude - 1
	sub := idx&(subBucketHalfCount-1) + subBucketHalfCount
	if b < 0 {
		sub -= subBucketHalfCount
		b = 0
	}
	return int64(sub) << uint(b)
}

// bucketWidth is the number of values bucket idx holds.
func bucketWidth(idx int32) int64 {
	b := max(idx>>subBucketHalfCountMagnitude-1, 0)
	return 1 << uint(b)
}

// NewCompact returns an empty compact histogram.
func NewCompact() *Compact { return &Compact{} }

// FromHDR is h's counts as a Compact histogram. h has the shared
// geometry; values above its range count as its top, as Micros clamps
// them.
func FromHDR(h *hdr.Histogram) *Compact {
	var pairs Compact
	for _, b := range h.Distribution() {
		if b.Count <= 0 {
			continue
		}
		idx := bucketIndex(min(max(b.From, LowestMicros), HighestMicros))
		if n := len(pairs.idx); n > 0 && pairs.idx[n-1] == idx {
			pairs.cnt[n-1] += uint64(b.Count)
		} else {
			pairs.idx, pairs.cnt = append(pairs.idx, idx), append(pairs.cnt, uint64(b.Count))
		}
		pairs.total += b.Count
	}
	c := NewCompact()
	c.add(&pairs)
	return c
}

// HDR is c as a full HDR histogram with the shared geometry, for callers
// of the HDR library: the same counts in the same buckets.
func (c *Compact) HDR() *hdr.Histogram {
	h := New()
	c.each(func(idx int32, n uint64) bool {
		_ = h.RecordValues(bucketValue(idx), int64(n)) // within the geometry: never fails
		return true
	})
	return h
}

// Bytes is the memory c's buckets take, for callers that bound it.
func (c *Compact) Bytes() int64 {
	return int64(cap(c.idx))*4 + int64(cap(c.cnt))*8 + int64(cap(c.win))*2
}

// TotalCount is the number of values recorded.
func (c *Compact) TotalCount() int64 { return c.total }

// RecordValues records n occurrences of v, clamped to the shared range like
// Micros.
func (c *Compact) RecordValues(v int64, n int64) {
	v = min(max(v, LowestMicros), HighestMicros)
	c.add(&Compact{total: n, idx: []int32{bucketIndex(v)}, cnt: []uint64{uint64(n)}})
}

// each calls fn for every populated bucket in ascending order, until fn
// returns false.
func (c *Compact) each(fn func(idx int32, n uint64) bool) {
	if c.win != nil {
		for i, n := range c.win {
			if n != 0 && !fn(c.lo+int32(i), uint64(n)) {
				return
			}
		}
		return
	}
	for i, idx := range c.idx {
		if !fn(idx, c.cnt[i]) {
			return
		}
	}
}

// bounds are the lowest and highest populated bucket; ok is false when empty.
func (c *Compact) bounds() (lo, hi int32, ok bool) {
	if c.total == 0 {
		return 0, 0, false
	}
	if c.win == nil {
		return c.idx[0], c.idx[len(c.idx)-1], true
	}
	first, last := -1, -1
	for i, n := range c.win {
		if n != 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	return c.lo + int32(first), c.lo + int32(last), true
}

// Merge adds src into c exactly; src is unchanged.
func (c *Compact) Merge(src *Compact) { c.add(src) }

func (c *Compact) add(src *Compact) {
	switch {
	case src.total == 0:
		return
	case c.total == 0:
		c.copyFrom(src)
		return
	case c.win == nil && src.win == nil:
		c.mergeSparse(src)
		c.maybeWindow()
		return
	case c.win == nil:
		c.maybeWindow()
	}
	if c.win == nil || !c.addToWindow(src) {
		// Sparse and src dense, or a count past 16 bits: sorted pairs
		// hold anything.
		c.toSparse()
		c.mergeSparse(src)
	}
}

// copyFrom makes c, empty, a copy of src in the smaller form.
func (c *Compact) copyFrom(src *Compact) {
	c.total, c.lo = src.total, src.lo
	if src.win != nil {
		c.win = append([]uint16(nil), src.win...)
		return
	}
	c.idx, c.cnt = src.idx, src.cnt
	if c.maybeWindow() {
		return
	}
	c.idx, c.cnt = append([]int32(nil), src.idx...), append([]uint64(nil), src.cnt...)
}

// addToWindow adds src into the window, growing it to src's span; it
// reports false (leaving c's counts unchanged) when a count would overflow
// 16 bits.
func (c *Compact) addToWindow(src *Compact) bool {
	if src.win != nil {
		// src's window span, not its populated bounds: finding those
		// scans the window, which was a fifth of a checked merge's time.
		c.growWindow(src.lo, src.lo+int32(len(src.win))-1)
	} else {
		c.growWindow(src.idx[0], src.idx[len(src.idx)-1])
	}
	win := c.win
	if src.win != nil {
		dst := win[src.lo-c.lo:][:len(src.win)]
		for i, n := range src.win {
			sum := uint32(dst[i]) + uint32(n)
			if sum > math.MaxUint16 {
				for k, n := range src.win[:i] {
					dst[k] -= n
				}
				return false
			}
			dst[i] = uint16(sum)
		}
	} else {
		// One pass (this is most of a merge's work besides decoding),
		// undone on the rare overflow.
		for i, idx := range src.idx {
			sum := uint64(win[idx-c.lo]) + src.cnt[i]
			if sum > math.MaxUint16 {
				for k, idx := range src.idx[:i] {
					win[idx-c.lo] -= uint16(src.cnt[k])
				}
				return false
			}
			win[idx-c.lo] = uint16(sum)
		}
	}
	c.total += src.total
	return true
}

// growWindow extends the window to cover [lo, hi].
func (c *Compact) growWindow(lo, hi int32) {
	curHi := c.lo + int32(len(c.win)) - 1
	if lo >= c.lo && hi <= curHi {
		return
	}
	nlo, nhi := min(lo, c.lo), max(hi, curHi)
	w := make([]uint16, nhi-nlo+1)
	copy(w[c.lo-nlo:], c.win)
	c.lo, c.win = nlo, w
}

// toSparse turns a window into sorted pairs.
func (c *Compact) toSparse() {
	if c.win == nil {
		return
	}
	var idx []int32
	var cnt []uint64
	for i, n := range c.win {
		if n != 0 {
			idx, cnt = append(idx, c.lo+int32(i)), append(cnt, uint64(n))
		}
	}
	c.idx, c.cnt, c.win, c.lo = idx, cnt, nil, 0
}

// mergeSparse merges src's buckets, in either form, into c's sorted pairs.
func (c *Compact) mergeSparse(src *Compact) {
	n := len(src.idx)
	if src.win != nil {
		n = len(src.win)
	}
	idx := make([]int32, 0, len(c.idx)+n)
	cnt := make([]uint64, 0, cap(idx))
	i := 0
	for j := range n {
		var si int32
		var sn uint64
		if src.win != nil {
			if src.win[j] == 0 {
				continue
			}
			si, sn = src.lo+int32(j), uint64(src.win[j])
		} else {
			si, sn = src.idx[j], src.cnt[j]
		}
		for i < len(c.idx) && c.idx[i] < si {
			idx, cnt = append(idx, c.idx[i]), append(cnt, c.cnt[i])
			i++
		}
		if i < len(c.idx) && c.idx[i] == si {
			sn += c.cnt[i]
			i++
		}
		idx, cnt = append(idx, si), append(cnt, sn)
	}
	idx, cnt = append(idx, c.idx[i:]...), append(cnt, c.cnt[i:]...)
	c.idx, c.cnt = idx, cnt
	c.total += src.total
}

// maybeWindow switches sorted pairs (12 bytes a bucket) to a window (2
// bytes a bucket of the span) when the window is smaller, and reports
// whether it did.
func (c *Compact) maybeWindow() bool {
	if len(c.idx) == 0 {
		return false
	}
	lo, hi := c.idx[0], c.idx[len(c.idx)-1]
	if !windowPays(hi-lo+1, len(c.idx)) {
		return false
	}
	for _, n := range c.cnt {
		if n > math.MaxUint16 {
			return false
		}
	}
	w := make([]uint16, hi-lo+1)
	for i, idx := range c.idx {
		w[idx-lo] = uint16(c.cnt[i])
	}
	c.lo, c.win, c.idx, c.cnt = lo, w, nil, nil
	return true
}

// windowPays reports whether a window of span buckets (2 bytes each) is
// smaller than sorted pairs of the populated ones (12 bytes each).
func windowPays(span int32, populated int) bool { return int(span) <= 6*populated }

// Max is the highest value equivalent to the largest recorded value, as
// HdrHistogram reports it (0 when empty).
func (c *Compact) Max() int64 {
	_, hi, ok := c.bounds()
	if !ok {
		return 0
	}
	return bucketValue(hi) + bucketWidth(hi) - 1
}

// Min is the lowest value equivalent to the smallest recorded value.
func (c *Compact) Min() int64 {
	lo, _, ok := c.bounds()
	if !ok {
		return 0
	}
	return bucketValue(lo)
}

// Mean is the mean of the buckets' median values, accumulated in the order
// and the arithmetic HdrHistogram uses, so the figure is the same.
func (c *Compact) Mean() float64 {
	if c.total == 0 {
		return 0
	}
	var mean float64
	total := float64(c.total)
	c.each(func(idx int32, n uint64) bool {
		mean += float64(n) * float64(bucketValue(idx)+bucketWidth(idx)>>1) / total
		return true
	})
	return mean
}

// ValueAtPercentiles returns, for each percentile in (0, 100], the highest
// value equivalent to the one at that rank, as HdrHistogram's
// ValueAtPercentile does.
func (c *Compact) ValueAtPercentiles(percentiles ...float64) []int64 {
	out := make([]int64, len(percentiles))
	if c.total == 0 {
		return out
	}
	order := make([]int, len(percentiles))
	ranks := make([]int64, len(percentiles))
	for i, p := range percentiles {
		order[i], ranks[i] = i, percentileRank(min(max(p, 0), 100), c.total)
	}
	sort.Slice(order, func(a, b int) bool { return ranks[order[a]] < ranks[order[b]] })
	var running int64
	k := 0
	c.each(func(idx int32, n uint64) bool {
		running += int64(n)
		for k < len(order) && running >= ranks[order[k]] {
			out[order[k]] = bucketValue(idx) + bucketWidth(idx) - 1
			k++
		}
		return k < len(order)
	})
	return out
}

// percentileRank is HdrHistogram's rank of a percentile: nearest rank, at
// least 1, at most the total.
func percentileRank(percentile float64, total int64) int64 {
	rank := (percentile/100)*float64(total) + 0.5
	if !(rank >= 1) {
		return 1
	}
	if rank >= float64(total) {
		return total
	}
	return int64(rank)
}

// SummarizeCompact computes the summary of c, equal to Summarize of an HDR
// histogram holding the same counts.
func SummarizeCompact(c *Compact) Summary {
	if c.total == 0 {
		return Summary{}
	}
	q := c.ValueAtPercentiles(50, 90, 99, 99.9)
	return Summary{Count: c.total, P50: q[0], P90: q[1], P99: q[2], P999: q[3], Max: c.Max(), Mean: c.Mean()}
}
