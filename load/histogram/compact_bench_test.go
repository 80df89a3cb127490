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
// full-geometry HDR histogram (before) and into a Compact one (after), and
// reports the memory the decoded form holds.
func BenchmarkDecodeDenseHistogram(b *testing.B) {
	s := denseEncoded(b)
	b.Run("hdr", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Decode(s); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(New().ByteSize())/1024, "held-KiB")
	})
	b.Run("compact", func(b *testing.B) {
		var d Decoder
		var c *Compact
		b.ReportAllocs()
		for b.Loop() {
			var err error
			if c, err = d.Decode(s); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(2*len(c.win)+12*len(c.idx))/1024, "held-KiB")
	})
}
