package histogram

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Payload is the counts of a V2 payload whose header and counts Decoder
// has checked, ready to be added to Compact histograms without building
// (index, count) pairs: in a merge of dense results the pairs and their
// second pass were a third of the time. It refers to the bytes it was
// read from.
type Payload struct {
	counts []byte
	total  int64
	// lo and hi are the lowest and highest populated buckets, n the number
	// of populated buckets and maxCount the largest count.
	lo, hi   int32
	n        int
	maxCount int64
}

// TotalCount is the number of values the payload holds.
func (p Payload) TotalCount() int64 { return p.total }

// errCorrupt says a payload's varints are cut or too long.
var errCorrupt = errors.New("corrupt histogram payload")

// uvarint reads the varint at p[i] (most of a dense payload's are one
// byte: counts under 64, read without a call).
func uvarint(p []byte, i int) (uint64, int, error) {
	if v := p[i]; v < 0x80 {
		return uint64(v), i + 1, nil
	}
	v, n := binary.Uvarint(p[i:])
	if n <= 0 {
		return 0, i, errCorrupt
	}
	return v, i + n, nil
}

// checkCounts reads counts, the zero-run, zig-zag LEB128 counts of a V2
// payload, refusing corrupt varints, buckets beyond the geometry, values
// above its range and totals that overflow, and returns them as a Payload.
func checkCounts(counts []byte) (Payload, error) {
	p := Payload{counts: counts, lo: -1}
	top := int64(bucketIndex(HighestMicros))
	var at int64
	for i := 0; i < len(counts); {
		v, next, err := uvarint(counts, i)
		if err != nil {
			return Payload{}, err
		}
		i = next
		count := int64(v>>1) ^ -int64(v&1)
		switch {
		case count < 0:
			if -count > countsLen-at {
				return Payload{}, errors.New("histogram zero run beyond its geometry")
			}
			at -= count
			continue
		case at >= countsLen:
			return Payload{}, errors.New("histogram bucket beyond its geometry")
		case count > 0 && at > top:
			// Values are clamped to the range when recorded: a count
			// above it was not recorded by spanbench.
			return Payload{}, fmt.Errorf("histogram holds values above its range (%d µs)", HighestMicros)
		case count > 0:
			if count > math.MaxInt64-p.total {
				return Payload{}, errors.New("histogram counts overflow")
			}
			if p.lo < 0 {
				p.lo = int32(at)
			}
			p.hi, p.n, p.total, p.maxCount = int32(at), p.n+1, p.total+count, max(p.maxCount, count)
		}
		at++
	}
	return p, nil
}

// each calls fn for every populated bucket of a checked payload, in
// ascending order.
func (p Payload) each(fn func(idx int32, n uint64)) {
	at := int32(0)
	for i := 0; i < len(p.counts); {
		v, next, _ := uvarint(p.counts, i) // checked: never fails
		i = next
		if v&1 != 0 {
			at += int32(v>>1) + 1 // a zero run of (v+1)/2 buckets
			continue
		}
		if v != 0 {
			fn(at, v>>1)
		}
		at++
	}
}

// pairs is p as sorted (index, count) pairs.
func (p Payload) pairs() *Compact {
	c := &Compact{total: p.total, idx: make([]int32, 0, p.n), cnt: make([]uint64, 0, p.n)}
	p.each(func(idx int32, n uint64) {
		c.idx, c.cnt = append(c.idx, idx), append(c.cnt, n)
	})
	return c
}

// AddPayload adds p's counts into c, exactly. A window covering p's
// populated span takes them in one pass over the payload; other forms
// take them as pairs.
func (c *Compact) AddPayload(p Payload) {
	switch {
	case p.total == 0:
		return
	case c.total == 0 && c.win == nil && p.maxCount <= math.MaxUint16 && int(p.hi-p.lo+1) <= 6*p.n:
		// The form copyFrom would choose, built straight away.
		c.lo, c.win = p.lo, make([]uint16, p.hi-p.lo+1)
	case c.win == nil:
		c.add(p.pairs())
		return
	}
	c.growWindow(p.lo, p.hi)
	if !c.addToWindowFrom(p) {
		// A count past 16 bits: sorted pairs hold anything.
		c.toSparse()
		c.mergeSparse(p.pairs())
	}
}

// addToWindowFrom adds p into the window, which covers p's span; it
// reports false, leaving the counts unchanged, when a count would overflow
// 16 bits.
func (c *Compact) addToWindowFrom(p Payload) bool {
	win, counts := c.win, p.counts
	at := int32(0) - c.lo // window offset of the payload's next bucket
	for i := 0; i < len(counts); {
		v := uint64(counts[i])
		if v < 0x80 {
			i++
		} else {
			var n int
			v, n = binary.Uvarint(counts[i:]) // checked: never fails
			i += n
		}
		if v&1 != 0 {
			at += int32(v>>1) + 1
			continue
		}
		if v != 0 {
			sum := uint64(win[at]) + v>>1
			if sum > math.MaxUint16 {
				c.subFromWindow(p, at+c.lo)
				return false
			}
			win[at] = uint16(sum)
		}
		at++
	}
	c.total += p.total
	return true
}

// subFromWindow takes p's counts of the buckets below end back out of the
// window.
func (c *Compact) subFromWindow(p Payload, end int32) {
	p.each(func(idx int32, n uint64) {
		if idx < end {
			c.win[idx-c.lo] -= uint16(n)
		}
	})
}

// SubPayload takes out of c the counts of p, which was added to c:
// undoing an add, so that a merge refused midway leaves c's counts as they
// were, and its memory no larger than its counts need.
func (c *Compact) SubPayload(p Payload) {
	c.sub(p)
	c.shrink()
}

func (c *Compact) sub(p Payload) {
	if p.total == 0 {
		return
	}
	c.total -= p.total
	if c.total == 0 {
		*c = Compact{}
		return
	}
	if c.win != nil {
		c.subFromWindow(p, math.MaxInt32)
		return
	}
	// Sorted pairs hold every bucket p added: walk both in order, then
	// drop the emptied ones.
	i := 0
	p.each(func(idx int32, n uint64) {
		for c.idx[i] < idx {
			i++
		}
		c.cnt[i] -= n
	})
	k := 0
	for j := range c.idx {
		if c.cnt[j] != 0 {
			c.idx[k], c.cnt[k] = c.idx[j], c.cnt[j]
			k++
		}
	}
	c.idx, c.cnt = c.idx[:k], c.cnt[:k]
}

// shrink gives c's buckets memory of their size: a window trimmed to its
// populated span, or sorted pairs without spare capacity, as a window
// when that is smaller.
func (c *Compact) shrink() {
	if c.win != nil {
		lo, hi, ok := c.bounds()
		if ok && (lo != c.lo || int(hi-lo+1) != len(c.win)) {
			c.win = append([]uint16(nil), c.win[lo-c.lo:hi-c.lo+1]...)
			c.lo = lo
		}
		return
	}
	if c.maybeWindow() {
		return
	}
	if cap(c.idx) > len(c.idx) || cap(c.cnt) > len(c.cnt) {
		c.idx, c.cnt = append([]int32(nil), c.idx...), append([]uint64(nil), c.cnt...)
	}
}

// AddChecking checks counts, a V2 payload's zero-run, zig-zag LEB128
// counts, as checkCounts does, and adds them into c exactly, in one pass
// when c's window already covers them (a merge's usual case: each
// byte read once, no pairs); otherwise in two. On an error c is unchanged.
// The Payload returned is what SubPayload takes back out.
func (c *Compact) AddChecking(counts []byte) (Payload, error) {
	if c.win != nil {
		total, done, err := c.addInWindow(counts)
		switch {
		case err != nil:
			return Payload{}, err
		case done:
			c.total += total
			return Payload{counts: counts, total: total}, nil
		}
	}
	p, err := checkCounts(counts)
	if err != nil {
		return Payload{}, err
	}
	c.AddPayload(p)
	return p, nil
}

// addInWindow reads and checks counts into the window. It stops, the
// window unchanged, at an error or at a bucket the window cannot take (done
// false): outside it, or past 16 bits. A bucket inside the window is
// within the geometry and its range (the window spans populated buckets
// only), which leaves the common entry, one byte, two branches.
func (c *Compact) addInWindow(counts []byte) (total int64, done bool, err error) {
	win := c.win
	k := -int64(c.lo) // the window index of the next bucket
	i, entry := 0, 0
	for i < len(counts) {
		entry = i
		v := uint64(counts[i])
		if v&0x81 == 0 {
			// One byte, an even zig-zag: a count of 0 to 63, most of a
			// dense payload's entries (a zero count is added as any other:
			// it is inside the window too, between populated buckets).
			if uint64(k) >= uint64(len(win)) {
				return 0, false, c.stopIn(counts[:entry], nil)
			}
			n := uint16(v >> 1)
			sum := win[k] + n
			if sum < n {
				return 0, false, c.stopIn(counts[:entry], nil)
			}
			win[k] = sum
			total += int64(n)
			i, k = i+1, k+1
			continue
		}
		if v < 0x80 {
			i++
		} else {
			n := 0
			if v, n = binary.Uvarint(counts[i:]); n <= 0 {
				return 0, false, c.stopIn(counts[:entry], errCorrupt)
			}
			i += n
		}
		at := k + int64(c.lo)
		switch {
		case at >= countsLen:
			return 0, false, c.stopIn(counts[:entry], errors.New("histogram bucket beyond its geometry"))
		case v&1 != 0:
			// A zero run of v>>1 + 1 buckets.
			if v>>1 >= uint64(countsLen-at) {
				return 0, false, c.stopIn(counts[:entry], errors.New("histogram zero run beyond its geometry"))
			}
			k += int64(v>>1) + 1
			continue
		}
		if v != 0 {
			if uint64(k) >= uint64(len(win)) || uint64(win[k])+v>>1 > math.MaxUint16 {
				return 0, false, c.stopIn(counts[:entry], nil)
			}
			win[k] += uint16(v >> 1)
			total += int64(v >> 1)
		}
		k++
	}
	if k+int64(c.lo) > countsLen {
		// An entry of zero count past the geometry (the one-byte path
		// does not check them one by one).
		return 0, false, c.stopIn(counts, errors.New("histogram bucket beyond its geometry"))
	}
	return total, true, nil
}

// stopIn takes the entries of added, a prefix of the counts addInWindow
// read, back out of the window, and returns err.
func (c *Compact) stopIn(added []byte, err error) error {
	c.subFromWindow(Payload{counts: added}, math.MaxInt32)
	return err
}
