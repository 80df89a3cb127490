package histogram

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestPagedRecordsWhatHDRRecords: values recorded into Paged histograms,
// merged and reset and recorded into again, encode to the bytes of an HDR
// histogram fed the same values, with the same figures; including values
// outside the range (clamped) and a bucket past its 16-bit count, in one
// histogram and by merging.
func TestPagedRecordsWhatHDRRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var a, b, sum Paged
	a.RecordValue(12345) // recorded, then reset: must not show
	a.Reset()
	want := New()
	record := func(p *Paged, v int64) {
		p.RecordValue(v)
		_ = want.RecordValue(min(max(v, LowestMicros), HighestMicros))
	}
	for i := range 50_000 {
		p := &a
		if i%2 == 1 {
			p = &b
		}
		record(p, int64(5000*math.Exp(0.7*rng.NormFloat64())))
		if i%1000 == 0 {
			record(p, int64(math.Exp(rng.Float64()*math.Log(2*HighestMicros))))
		}
	}
	record(&a, 0)
	record(&b, 3*HighestMicros)
	for range 70_000 { // past 2^16 in a and in b
		record(&a, 777)
		record(&b, 777)
	}
	for range 40_000 { // past 2^16 only in the merge
		record(&a, 999)
		record(&b, 999)
	}
	sum.Merge(&a)
	sum.Merge(&b)
	var enc Encoder
	got, err := enc.Encode(sum.Compact())
	if err != nil {
		t.Fatal(err)
	}
	if got != mustEncode(t, want) {
		t.Errorf("the merged Paged histogram of %d values encodes differently from an HDR histogram of the same %d values", sum.TotalCount(), want.TotalCount())
	}
	if g, w := SummarizeCompact(sum.Compact()), Summarize(want); g != w {
		t.Errorf("the merged Paged histogram's summary is %+v, want the HDR histogram's %+v", g, w)
	}
}

// TestAPagedBucketOfExactly65536ValuesKeepsThem: a bucket whose 16-bit
// count wrapped to 0 exactly, the only one, still holds its values.
func TestAPagedBucketOfExactly65536ValuesKeepsThem(t *testing.T) {
	var p Paged
	for range 1 << 16 {
		p.RecordValue(31)
	}
	c := p.Compact()
	if q := c.ValueAtPercentiles(50); c.TotalCount() != 1<<16 || c.Min() != 31 || q[0] != 31 {
		t.Errorf("65,536 values of 31 µs: the compact form holds %d values, min %d, median %d", c.TotalCount(), c.Min(), q[0])
	}
}

// TestAResetPagedKeepsOnlyThePagesInUse: after a reset a Paged keeps the
// pages that held values (recording into them again allocates nothing)
// and lets go of the rest, and an empty one holds nothing.
func TestAResetPagedKeepsOnlyThePagesInUse(t *testing.T) {
	var p Paged
	if p.Bytes() != 0 {
		t.Fatalf("an unused Paged holds %d bytes, want 0", p.Bytes())
	}
	p.RecordValue(5000)
	p.RecordValue(9_000_000)
	p.Reset()
	p.RecordValue(5000)
	if allocs := testing.AllocsPerRun(100, func() { p.RecordValue(5001) }); allocs != 0 {
		t.Errorf("recording into a page in use allocates %.0f times, want 0", allocs)
	}
	p.Reset() // the 9 s page held nothing since the last reset
	table := int64(numPages * 8)
	if got := p.Bytes(); got != table+pageLen*2 {
		t.Errorf("a Paged that held values in one page holds %d bytes, want its page table and one page, %d", got, table+pageLen*2)
	}
	p.Reset()
	if p.Bytes() != 0 || p.TotalCount() != 0 {
		t.Errorf("a Paged reset twice with nothing recorded between holds %d bytes and %d values, want none", p.Bytes(), p.TotalCount())
	}
}
