// Package histogram records latencies in HDR histograms with a fixed, shared
// geometry, so that histograms from any worker, interval or runner can be
// merged exactly and percentiles are computed only from merged counts.
package histogram

import (
	"fmt"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// The geometry every spanbench histogram shares: microseconds from 1 µs to
// 100 s with 3 significant digits. Values above the top are clamped to it
// (and so still counted), never dropped.
const (
	LowestMicros  = 1
	HighestMicros = 100_000_000
	SigFigs       = 3
)

// MaxEncodedBytes bounds an encoded histogram accepted by Decode: results
// come from runner pods and are untrusted input.
const MaxEncodedBytes = 1 << 20

// New returns an empty histogram with the shared geometry.
func New() *hdr.Histogram {
	return hdr.New(LowestMicros, HighestMicros, SigFigs)
}

// Micros converts a duration to the histogram's unit, clamped to its range.
func Micros(d time.Duration) int64 {
	us := d.Microseconds()
	switch {
	case us < LowestMicros:
		return LowestMicros
	case us > HighestMicros:
		return HighestMicros
	}
	return us
}

// Encode serialises h for JSON: base64 of HdrHistogram's V2 payload,
// uncompressed ("" for an empty histogram). The payload is the V2
// compressed encoding's content before zlib: reading it skips the inflate
// that dominated merging dense results, and the document's own gzip
// compresses it about as well (docs/result-format.md).
func Encode(h *hdr.Histogram) (string, error) {
	var e Encoder
	return e.Encode(FromHDR(h))
}

// Decode parses an Encode'd histogram, in either form (see
// Decoder.AddTo), and checks it has the shared geometry, so that a merge
// with it is exact.
func Decode(s string) (*hdr.Histogram, error) {
	var d Decoder
	c, err := d.Decode(s)
	if err != nil {
		return nil, err
	}
	return c.HDR(), nil
}

// Merge adds src into dst. Both have the shared geometry, so nothing is
// dropped; a drop would mean a foreign histogram and is reported.
func Merge(dst, src *hdr.Histogram) error {
	if dropped := dst.Merge(src); dropped > 0 {
		return fmt.Errorf("merging histograms dropped %d values outside the shared range", dropped)
	}
	return nil
}

// Summary is the figures a user reads from a latency histogram, in
// microseconds.
type Summary struct {
	// count is the number of values recorded.
	Count int64 `json:"count"`
	// p50Micros is the median.
	P50 int64 `json:"p50Micros"`
	// p90Micros is the 90th percentile.
	P90 int64 `json:"p90Micros"`
	// p99Micros is the 99th percentile.
	P99 int64 `json:"p99Micros"`
	// p999Micros is the 99.9th percentile.
	P999 int64 `json:"p999Micros"`
	// maxMicros is the largest value recorded.
	Max int64 `json:"maxMicros"`
	// meanMicros is the arithmetic mean.
	Mean float64 `json:"meanMicros"`
}

// Summarize computes the summary of h.
func Summarize(h *hdr.Histogram) Summary {
	if h.TotalCount() == 0 {
		return Summary{}
	}
	q := h.ValueAtPercentiles([]float64{50, 90, 99, 99.9})
	return Summary{
		Count: h.TotalCount(),
		P50:   q[50], P90: q[90], P99: q[99], P999: q[99.9],
		Max:  h.Max(),
		Mean: h.Mean(),
	}
}
