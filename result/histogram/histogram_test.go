package histogram

import (
	"bytes"
	"compress/zlib"
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
	// Each case names its own refusal: the oversized string of zeros is
	// also not a histogram, refused that way without the size bound.
	for name, tc := range map[string]struct{ in, want string }{
		"foreign geometry": {encodeRaw(b), "geometry [1, 1000]"},
		"not base64":       {"%%%", "illegal base64"},
		"not a histogram":  {encodeRaw([]byte("hello world, not hdr")), "not an HdrHistogram V2 encoding"},
		"oversized":        {strings.Repeat("A", 2*MaxEncodedBytes), "more than the 1048576 allowed"},
	} {
		if _, err := Decode(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Decode(%s) = %v; want an error saying %q", name, err, tc.want)
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
	// compressed is p in HdrHistogram's zlib-compressed V2 form.
	compressed := func(p []byte) string {
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		_, _ = zw.Write(p)
		_ = zw.Close()
		out := binary.BigEndian.AppendUint32(nil, compressedCookie)
		out = binary.BigEndian.AppendUint32(out, uint32(z.Len()))
		return encodeRaw(append(out, z.Bytes()...))
	}
	larger := func(p []byte) []byte {
		p = append(p, make([]byte, maxPayload)...)
		binary.BigEndian.PutUint32(p[4:], uint32(len(p)-headerSize))
		return p
	}
	// Each case names its own refusal, so that it cannot pass on
	// another check's.
	for name, tc := range map[string]struct{ in, want string }{
		"other digits":                     {edit(func(p []byte) []byte { p[15] = 2; return p }), "at 2 digits differs"},
		"other lowest":                     {edit(func(p []byte) []byte { p[23] = 2; return p }), "geometry [2, 100000000]"},
		"length differs":                   {edit(func(p []byte) []byte { p[7]++; return p }), "length differs from its header"},
		"truncated":                        {edit(func(p []byte) []byte { return p[:len(p)-1] }), "length differs from its header"},
		"header only, cut":                 {edit(func(p []byte) []byte { return p[:20] }), "not an HdrHistogram V2 payload"},
		"value above range":                {withCounts(-int64(bucketIndex(HighestMicros))-1, 1), "values above its range"},
		"zero run past end":                {withCounts(-countsLen - 1), "zero run beyond its geometry"},
		"bucket past end":                  {withCounts(-countsLen, 1), "bucket beyond its geometry"},
		"counts overflow":                  {withCounts(math.MaxInt64, math.MaxInt64), "counts overflow"},
		"larger than geometry":             {edit(larger), "larger than its geometry allows"},
		"compressed, larger than geometry": {compressed(larger(append([]byte(nil), good...))), "larger than its geometry allows"},
		"compressed, cut":                  {compressed(good)[:20], "truncated histogram"},
	} {
		if _, err := Decode(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Decode(%s) = %v; want an error saying %q", name, err, tc.want)
		}
	}
	if _, err := Decode(compressed(good)); err != nil {
		t.Errorf("the unedited payload, compressed, is refused: %v", err)
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
