package histogram

import (
	"encoding/base64"
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

func TestMicrosClampsInsteadOfDropping(t *testing.T) {
	if got := Micros(200 * time.Second); got != HighestMicros {
		t.Errorf("Micros(200s) = %d, want clamp to %d", got, HighestMicros)
	}
	if got := Micros(10 * time.Nanosecond); got != LowestMicros {
		t.Errorf("Micros(10ns) = %d, want clamp to %d", got, LowestMicros)
	}
}

func encodeRaw(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
