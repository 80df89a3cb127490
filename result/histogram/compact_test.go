package histogram

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// randomHistogram records n values of one of several shapes: dense
// lognormal, a few scattered values, or a single repeated one.
func randomHistogram(rng *rand.Rand, shape, n int) *hdr.Histogram {
	h := New()
	for range n {
		var v float64
		switch shape {
		case 0:
			v = 5000 * math.Exp(0.5*rng.NormFloat64())
		case 1:
			v = math.Exp(rng.Float64() * math.Log(HighestMicros))
		default:
			v = 777
		}
		_ = h.RecordValue(Micros(fromMicros(v)))
	}
	return h
}

// TestCompactMergeEqualsHDRHistogramOfAllValues is the property that makes
// compact histograms safe to aggregate: decoding encoded HDR histograms into
// Compact ones and merging them in any order gives the counts, quantiles,
// min, max and mean of one HDR histogram fed every value, and encodes to
// bytes the HDR library decodes to that histogram. Parts come in both
// forms a result may hold: today's uncompressed payload and the v1 form,
// written by the HDR library itself.
func TestCompactMergeEqualsHDRHistogramOfAllValues(t *testing.T) {
	var dec Decoder
	var enc Encoder
	for seed := range uint64(30) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			truth, acc := New(), NewCompact()
			for range 1 + rng.IntN(12) {
				h := randomHistogram(rng, rng.IntN(3), rng.IntN([]int{3, 300, 50_000}[rng.IntN(3)]))
				_ = Merge(truth, h)
				s, err := Encode(h)
				if rng.IntN(2) == 0 {
					s, err = encodeV1ByHDR(h)
				}
				if err != nil {
					t.Fatal(err)
				}
				part, err := dec.Decode(s)
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				if got, want := SummarizeCompact(part), Summarize(h); got != want {
					t.Fatalf("decoded part: %+v, HDR %+v", got, want)
				}
				acc.Merge(part)
			}
			if got, want := SummarizeCompact(acc), Summarize(truth); got != want {
				t.Errorf("merged compact %+v, one HDR histogram of all values %+v", got, want)
			}
			if acc.TotalCount() > 0 && (acc.Min() != truth.Min() || acc.Max() != truth.Max()) {
				t.Errorf("min/max %d/%d, want %d/%d", acc.Min(), acc.Max(), truth.Min(), truth.Max())
			}
			s, err := enc.Encode(acc)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Decode(s)
			if err != nil {
				t.Fatalf("HDR decode of a compact encoding: %v", err)
			}
			if !back.Equals(truth) {
				t.Errorf("compact encoding decodes to a different histogram: %+v, want %+v", Summarize(back), Summarize(truth))
			}
			if acc.TotalCount() == 0 {
				return
			}
			v1, err := enc.EncodeV1(acc)
			if err != nil {
				t.Fatal(err)
			}
			text, _ := base64.StdEncoding.DecodeString(v1)
			if back, err := hdr.Decode(text); err != nil || !back.Equals(truth) {
				t.Errorf("the v1 form does not decode with the HDR library to the histogram of all values (err %v)", err)
			}
		})
	}
}

func fromMicros(v float64) (d time.Duration) { return time.Duration(v * 1000) }

// TestBinaryFormRoundTripsAndIsTheV1FormUnwrapped: EncodeBinary's
// bytes decode to the same counts, and are the v1 string form without its
// two base64 layers (so a byte store pays no base64 inflation).
func TestBinaryFormRoundTripsAndIsTheV1FormUnwrapped(t *testing.T) {
	var dec Decoder
	var enc Encoder
	rng := rand.New(rand.NewPCG(3, 3))
	c, err := dec.Decode(mustEncode(t, randomHistogram(rng, 0, 20_000)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := enc.EncodeBinary(c)
	if err != nil {
		t.Fatal(err)
	}
	back := NewCompact()
	if err := dec.AddBinaryTo(back, b); err != nil {
		t.Fatalf("AddBinaryTo: %v", err)
	}
	if got, want := SummarizeCompact(back), SummarizeCompact(c); got != want {
		t.Errorf("binary round trip %+v, want %+v", got, want)
	}
	s, err := enc.EncodeV1(c)
	if err != nil {
		t.Fatal(err)
	}
	inner, _ := base64.StdEncoding.DecodeString(s)
	raw, _ := base64.StdEncoding.DecodeString(string(inner))
	if !bytes.Equal(raw, b) {
		t.Errorf("binary form (%d bytes) is not the v1 string form (%d chars) unwrapped (%d bytes)", len(b), len(s), len(raw))
	}
	if err := dec.AddBinaryTo(NewCompact(), b[:len(b)/2]); err == nil {
		t.Error("a truncated binary histogram decoded without error")
	}
}

// TestEncodeWritesTheUncompressedPayload: the string form is base64 of a
// V2 payload (no zlib to inflate when merging), which the HDR library
// reads once compressed: it is the compressed encoding's content.
func TestEncodeWritesTheUncompressedPayload(t *testing.T) {
	h := randomHistogram(rand.New(rand.NewPCG(4, 4)), 0, 20_000)
	raw, err := base64.StdEncoding.DecodeString(mustEncode(t, h))
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) < 4 || binary.BigEndian.Uint32(raw) != payloadCookie {
		t.Fatalf("Encode wrote %x..., want a V2 payload (cookie %x)", raw[:min(len(raw), 8)], payloadCookie)
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	_, _ = zw.Write(raw)
	_ = zw.Close()
	framed := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, compressedCookie), uint32(z.Len()))
	back, err := hdr.Decode([]byte(base64.StdEncoding.EncodeToString(append(framed, z.Bytes()...))))
	if err != nil || !back.Equals(h) {
		t.Errorf("the payload, compressed, does not decode with the HDR library to the histogram encoded (err %v)", err)
	}
}

// encodeV1ByHDR is the v1 form as the HDR library writes it.
func encodeV1ByHDR(h *hdr.Histogram) (string, error) {
	if h.TotalCount() == 0 {
		return "", nil
	}
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	return base64.StdEncoding.EncodeToString(b), err
}

func mustEncode(t *testing.T, h *hdr.Histogram) string {
	t.Helper()
	s, err := Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMergeIntoAWindowPastSixteenBitsKeepsEveryCount: a sparse histogram
// merged into a window where one bucket would pass 16 bits, after others
// were added, leaves every count exact (the window's partial additions are
// undone and the merge goes to pairs).
func TestMergeIntoAWindowPastSixteenBitsKeepsEveryCount(t *testing.T) {
	c, src, truth := NewCompact(), &Compact{}, New()
	for v := int64(1000); v <= 1100; v++ {
		c.RecordValues(v, 1)
		_ = truth.RecordValues(v, 1)
	}
	c.RecordValues(1100, 65_000)
	_ = truth.RecordValues(1100, 65_000)
	if c.win == nil {
		t.Fatal("the fixture is not in window form; the test means nothing")
	}
	for _, v := range []int64{1000, 1050, 1100} {
		src.idx, src.cnt, src.total = append(src.idx, bucketIndex(v)), append(src.cnt, 1000), src.total+1000
		_ = truth.RecordValues(v, 1000)
	}
	window := NewCompact()
	window.copyFrom(c)
	c.Merge(src)
	if !c.HDR().Equals(truth) {
		t.Errorf("sparse into a window: merged %+v, want %+v", SummarizeCompact(c), Summarize(truth))
	}
	other := NewCompact()
	for v := int64(1000); v <= 1100; v++ {
		other.RecordValues(v, 1000)
		_ = truth.RecordValues(v, 1000)
	}
	if window.win == nil || other.win == nil {
		t.Fatal("the fixtures are not in window form; the test means nothing")
	}
	c.Merge(other)
	window.Merge(other) // the window overflows at its last bucket
	window.Merge(src)
	if !window.HDR().Equals(truth) || !c.HDR().Equals(truth) {
		t.Errorf("a window into a window: merged %+v, want %+v", SummarizeCompact(window), Summarize(truth))
	}
}

// TestAddCheckingAndTakingBackAreExact: histograms added in one pass
// (Decoder.AddToFrom, straight into a merged window when it covers them,
// in two passes otherwise, to pairs past 16 bits) give the histogram of all
// values, and taking some back out (SubPayload, as a refused shard is)
// gives the histogram of the others, whatever form the merged one took.
func TestAddCheckingAndTakingBackAreExact(t *testing.T) {
	var dec Decoder
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 17))
		all, kept, acc := New(), New(), NewCompact()
		var back []Payload
		for range 2 + rng.IntN(10) {
			h := randomHistogram(rng, rng.IntN(3), []int{3, 300, 50_000}[rng.IntN(3)])
			_, p, err := dec.AddToFrom(acc, nil, mustEncode(t, h))
			if err != nil {
				t.Fatalf("seed %d: AddToFrom: %v", seed, err)
			}
			if p.TotalCount() != h.TotalCount() {
				t.Fatalf("seed %d: added %d values, the histogram holds %d", seed, p.TotalCount(), h.TotalCount())
			}
			_ = Merge(all, h)
			if rng.IntN(2) == 0 {
				back = append(back, p)
			} else {
				_ = Merge(kept, h)
			}
		}
		if !acc.HDR().Equals(all) {
			t.Errorf("seed %d: merged %+v, want %+v", seed, SummarizeCompact(acc), Summarize(all))
		}
		for _, p := range back {
			acc.SubPayload(p)
		}
		if !acc.HDR().Equals(kept) || SummarizeCompact(acc) != Summarize(kept) {
			t.Errorf("seed %d: after taking %d back: %+v, want %+v", seed, len(back), SummarizeCompact(acc), Summarize(kept))
		}
	}
}

// TestAHostilePayloadLeavesTheWindowAsItWas: a payload refused midway
// through a one-pass add into a window leaves the window's counts as they
// were.
func TestAHostilePayloadLeavesTheWindowAsItWas(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	var e Encoder
	c, err := new(Decoder).Decode(mustEncode(t, randomHistogram(rng, 0, 50_000)))
	if err != nil || c.win == nil {
		t.Fatalf("the fixture is not a window (%v); the test means nothing", err)
	}
	want := c.HDR()
	good := e.encodePayload(c)[headerSize:]
	for name, counts := range map[string][]byte{
		"cut varint":        append(append([]byte(nil), good...), 0x80),
		"zero run past end": binary.AppendUvarint(append([]byte(nil), good...), uint64(2*countsLen-1)),
		"bucket past end":   append(binary.AppendUvarint(append([]byte(nil), good[:len(good)/2]...), uint64(2*countsLen-1)), 2),
		"zero past end":     append(binary.AppendUvarint(append([]byte(nil), good...), uint64(2*(countsLen-bucketIndex(c.Max())-1)-1)), 0),
	} {
		if _, err := c.AddChecking(counts); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if !c.HDR().Equals(want) {
			t.Errorf("%s: the refused payload changed the window", name)
		}
	}
}

// TestOnePassAddAgreesWithTheTwoPassCheck: on randomly corrupted payloads
// (bytes changed, inserted, cut), the one-pass add into a window refuses
// exactly what the two-pass check refuses, leaving the window unchanged,
// and otherwise adds exactly the counts the check reads.
func TestOnePassAddAgreesWithTheTwoPassCheck(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	var dec Decoder
	var e Encoder
	src, err := dec.Decode(mustEncode(t, randomHistogram(rng, 0, 50_000)))
	if err != nil {
		t.Fatal(err)
	}
	good := append([]byte(nil), e.encodePayload(src)[headerSize:]...)
	var targets []string
	for range 4 {
		targets = append(targets, mustEncode(t, randomHistogram(rng, 0, 50_000)))
	}
	for i := range 3000 {
		p := append([]byte(nil), good...)
		for range 1 + rng.IntN(3) {
			if len(p) == 0 {
				break
			}
			switch at := rng.IntN(len(p)); rng.IntN(3) {
			case 0:
				p[at] = byte(rng.IntN(256))
			case 1:
				p = append(p[:at], append([]byte{byte(rng.IntN(256))}, p[at:]...)...)
			default:
				p = p[:at]
			}
		}
		// A merged window that covers the source's span, as in a merge.
		c, err := dec.Decode(targets[i%len(targets)])
		if err != nil {
			t.Fatalf("decoding target %d: %v", i%len(targets), err)
		}
		c.Merge(src)
		if c.win == nil {
			t.Fatal("the target is not a window; the test means nothing")
		}
		want := c.HDR()
		check, checkErr := checkCounts(p)
		if checkErr == nil {
			check.pairs().each(func(idx int32, n uint64) bool {
				_ = want.RecordValues(bucketValue(idx), int64(n))
				return true
			})
		}
		_, addErr := c.AddChecking(p)
		if (addErr == nil) != (checkErr == nil) {
			t.Fatalf("mutation %d: the one-pass add says %v, the check %v", i, addErr, checkErr)
		}
		if !c.HDR().Equals(want) {
			t.Fatalf("mutation %d (err %v): the window holds %+v, want %+v", i, addErr, SummarizeCompact(c), Summarize(want))
		}
	}
}
