package histogram

import (
	"math"
	"slices"
)

// Paged is a histogram for recording, with the shared geometry, whose
// memory follows the buckets it has counts in: the counts live in pages of
// pageLen buckets allocated at their first value, behind a page table
// allocated at the first value at all. Recording is an index computation
// and an increment, with no allocation once the pages in use exist; an
// interval of operations around 5 ms touches a few dozen pages (tens of
// KiB) where a full HDR histogram is 147 KiB whatever it holds, and an
// unused Paged (the error latencies of an operation without errors) takes
// no memory beyond its header. The zero value is empty and ready.
//
// A Paged is not safe for concurrent use.
type Paged struct {
	total int64
	pages []*page
	// carries lists a bucket once for every 2^16 values its 16-bit count
	// wrapped over: rare within one interval (a bucket holding more than
	// 65,535 of its values), and exact anyway.
	carries []int32
}

// pageBits sizes a page: 128 buckets of 2 bytes.
const (
	// carry is what one entry of carries stands for.
	carry    = 1 << 16
	pageBits = 7
	pageLen  = 1 << pageBits
	numPages = (countsLen + pageLen - 1) / pageLen
)

type page [pageLen]uint16

// RecordValue records v, clamped to the shared range like Micros.
func (p *Paged) RecordValue(v int64) {
	idx := bucketIndex(min(max(v, LowestMicros), HighestMicros))
	if p.pages == nil {
		p.pages = make([]*page, numPages)
	}
	pg := p.pages[idx>>pageBits]
	if pg == nil {
		pg = new(page)
		p.pages[idx>>pageBits] = pg
	}
	n := pg[idx&(pageLen-1)] + 1
	if n == 0 {
		p.carries = append(p.carries, idx)
	}
	pg[idx&(pageLen-1)] = n
	p.total++
}

// TotalCount is the number of values recorded.
func (p *Paged) TotalCount() int64 { return p.total }

// Merge adds src into p exactly; src is unchanged.
func (p *Paged) Merge(src *Paged) {
	if src.total == 0 {
		return
	}
	if p.pages == nil {
		p.pages = make([]*page, numPages)
	}
	for i, sp := range src.pages {
		if sp == nil {
			continue
		}
		dp := p.pages[i]
		if dp == nil {
			dp = new(page)
			p.pages[i] = dp
		}
		for j, n := range sp {
			sum := uint64(dp[j]) + uint64(n)
			if sum > math.MaxUint16 {
				p.carries = append(p.carries, int32(i<<pageBits+j))
			}
			dp[j] = uint16(sum)
		}
	}
	p.carries = append(p.carries, src.carries...)
	p.total += src.total
}

// Reset empties p. Pages that held counts are kept for the next values
// (steady recording allocates nothing); pages that held none are let go,
// so that memory follows what recent intervals held, not all that ever
// was.
func (p *Paged) Reset() {
	empty := true
	for i, pg := range p.pages {
		switch {
		case pg == nil:
		case *pg == page{}:
			p.pages[i] = nil
		default:
			*pg = page{}
			empty = false
		}
	}
	if empty {
		p.pages = nil
	}
	p.total, p.carries = 0, p.carries[:0]
}

// Compact is p's counts as a Compact histogram, in the form Compact keeps
// them (a window when it is the smaller), built at its final size.
func (p *Paged) Compact() *Compact {
	if p.total == 0 {
		return NewCompact()
	}
	lo, hi, n := p.populated() // n is 0 when every count wrapped to 0 exactly
	if len(p.carries) == 0 && windowPays(hi-lo+1, n) {
		c := &Compact{total: p.total, lo: lo, win: make([]uint16, hi-lo+1)}
		p.each(func(idx int32, v uint16) { c.win[idx-lo] = v })
		return c
	}
	c := &Compact{total: p.total, idx: make([]int32, 0, n), cnt: make([]uint64, 0, n)}
	p.each(func(idx int32, v uint16) { c.idx, c.cnt = append(c.idx, idx), append(c.cnt, uint64(v)) })
	for _, idx := range p.carries {
		i, found := slices.BinarySearch(c.idx, idx)
		if found {
			c.cnt[i] += carry
		} else {
			c.idx, c.cnt = slices.Insert(c.idx, i, idx), slices.Insert(c.cnt, i, carry)
		}
	}
	c.maybeWindow()
	return c
}

// populated returns the lowest and highest bucket with a nonzero count and
// the number of such buckets.
func (p *Paged) populated() (lo, hi int32, n int) {
	p.each(func(idx int32, _ uint16) {
		if n == 0 {
			lo = idx
		}
		hi = idx
		n++
	})
	return lo, hi, n
}

// each calls fn for every bucket with a nonzero 16-bit count, ascending.
func (p *Paged) each(fn func(idx int32, v uint16)) {
	for i, pg := range p.pages {
		if pg == nil {
			continue
		}
		for j, v := range pg {
			if v != 0 {
				fn(int32(i<<pageBits+j), v)
			}
		}
	}
}

// Bytes is the memory p's page table and pages take.
func (p *Paged) Bytes() int64 {
	b := int64(cap(p.pages))*8 + int64(cap(p.carries))*4
	for _, pg := range p.pages {
		if pg != nil {
			b += pageLen * 2
		}
	}
	return b
}
