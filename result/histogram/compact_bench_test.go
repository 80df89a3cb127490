package histogram

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// denseEncoded is an interval histogram of a busy operation: 50,000
// samples lognormal around 5 ms (log-sd 0.5), encoded.
func denseEncoded(b *testing.B) string {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 5))
	h := New()
	for range 50_000 {
		_ = h.RecordValue(Micros(time.Duration(5000 * math.Exp(0.5*rng.NormFloat64()) * float64(time.Microsecond))))
	}
	s, err := Encode(h)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkDecodeDenseHistogram decodes a dense interval histogram into a
// Compact one, from result v2's encoding (the uncompressed payload) and
// from v1's (zlib-compressed, base64 twice), and reports the encoded size
// and the memory the decoded form holds.
func BenchmarkDecodeDenseHistogram(b *testing.B) {
	v2 := denseEncoded(b)
	var d Decoder
	var e Encoder
	c, err := d.Decode(v2)
	if err != nil {
		b.Fatal(err)
	}
	v1, err := e.EncodeV1(c)
	if err != nil {
		b.Fatal(err)
	}
	for _, form := range []struct{ name, s string }{{"v2", v2}, {"v1", v1}} {
		b.Run(form.name, func(b *testing.B) {
			var d Decoder
			var c *Compact
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if c, err = d.Decode(form.s); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(form.s))/1024, "encoded-KiB")
			b.ReportMetric(float64(2*len(c.win)+12*len(c.idx))/1024, "held-KiB")
		})
	}
}

// BenchmarkAddDenseHistogramIntoAWindow adds a dense interval histogram
// (v2) into a merged window that covers it: a merge's inner loop (decoding
// its base64, checking its counts as they are added).
func BenchmarkAddDenseHistogramIntoAWindow(b *testing.B) {
	s := denseEncoded(b)
	var d Decoder
	c := NewCompact()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if n++; n%500 == 0 {
			c = NewCompact() // before a bucket passes 16 bits
		}
		if err := d.AddTo(c, s); err != nil {
			b.Fatal(err)
		}
	}
}
