package histogram

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

func TestEncodeDecodeRoundTripKeepsEveryCount(t *testing.T) {
	h := New()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10_000 {
		_ = h.RecordValue(1 + rng.Int64N(5_000_000))
	}
	s, err := Encode(h)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	got, err := Decode(s)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if !got.Equals(h) {
		t.Fatalf("decoded histogram differs: count %d p99 %d, want count %d p99 %d",
			got.TotalCount(), got.ValueAtQuantile(99), h.TotalCount(), h.ValueAtQuantile(99))
	}
}

func TestDecodeRefusesForeignGeometryAndGarbage(t *testing.T) {
	foreign := hdr.New(1, 1000, 2)
	_ = foreign.RecordValue(10)
	b, _ := foreign.Encode(hdr.V2CompressedEncodingCookieBase)
	for name, in := range map[string]string{
		"foreign geometry": encodeRaw(b),
		"not base64":       "%%%",
		"not a histogram":  encodeRaw([]byte("hello world, not hdr")),
		"oversized":        strings.Repeat("A", 2*MaxEncodedBytes),
	} {
		if _, err := Decode(in); err == nil {
			t.Errorf("Decode(%s) succeeded; want an error", name)
		}
	}
}

// TestDecodeRefusesHostilePayloads: the uncompressed form gets the checks
// the compressed one gets (geometry, range, size, consistency), since a
// payload comes from a pod.
func TestDecodeRefusesHostilePayloads(t *testing.T) {
	var e Encoder
	c := NewCompact()
	c.RecordValues(5000, 3)
	good := e.encodePayload(c)
	edit := func(f func(p []byte) []byte) string {
		return encodeRaw(f(append([]byte(nil), good...)))
	}
	withCounts := func(counts ...int64) string {
		return edit(func(p []byte) []byte {
			p = p[:headerSize]
			for _, v := range counts {
				p = binary.AppendUvarint(p, uint64(v<<1)^uint64(v>>63))
			}
			binary.BigEndian.PutUint32(p[4:], uint32(len(p)-headerSize))
			return p
		})
	}
	for name, in := range map[string]string{
		"other digits":      edit(func(p []byte) []byte { p[15] = 2; return p }),
		"other lowest":      edit(func(p []byte) []byte { p[23] = 2; return p }),
		"length differs":    edit(func(p []byte) []byte { p[7]++; return p }),
		"truncated":         edit(func(p []byte) []byte { return p[:len(p)-1] }),
		"header only, cut":  edit(func(p []byte) []byte { return p[:20] }),
		"value above range": withCounts(-int64(bucketIndex(HighestMicros))-1, 1),
		"zero run past end": withCounts(-countsLen - 1),
		"bucket past end":   withCounts(-countsLen, 1),
		"counts overflow":   withCounts(math.MaxInt64, math.MaxInt64),
		"larger than geometry": edit(func(p []byte) []byte {
			p = append(p, make([]byte, maxPayload)...)
			binary.BigEndian.PutUint32(p[4:], uint32(len(p)-headerSize))
			return p
		}),
	} {
		if _, err := Decode(in); err == nil {
			t.Errorf("Decode(%s) succeeded; want an error", name)
		}
	}
	if _, err := Decode(encodeRaw(good)); err != nil {
		t.Fatalf("the unedited payload is refused: %v", err)
	}
}

func TestMicrosClampsInsteadOfDropping(t *testing.T) {
	if got := Micros(200 * time.Second); got != HighestMicros {
		t.Errorf("Micros(200s) = %d, want clamp to %d", got, HighestMicros)
	}
	if got := Micros(10 * time.Nanosecond); got != LowestMicros {
		t.Errorf("Micros(10ns) = %d, want clamp to %d", got, LowestMicros)
	}
}

func encodeRaw(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
