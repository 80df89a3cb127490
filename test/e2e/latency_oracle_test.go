package e2e

// No build tag: the oracle is checked by its own unit test, which needs no
// cluster (go test ./test/e2e/), while the e2e suite uses it against one.

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
)

// decodeWithHDR decodes a result's histogram with the HDR library alone:
// a v1 one is base64 of the library's own text form; a v2 one base64 of
// the V2 payload, which the library reads once wrapped, as its compressed
// encoding wraps it, in a zlib stream behind the compressed cookie.
func decodeWithHDR(s string) (*hdr.Histogram, error) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	if len(raw) >= 4 && binary.BigEndian.Uint32(raw) == uint32(hdr.V2EncodingCookieBase|0x10) {
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		_, _ = zw.Write(raw) // writes to memory never fail
		_ = zw.Close()
		framed := binary.BigEndian.AppendUint32(nil, uint32(hdr.V2CompressedEncodingCookieBase|0x10))
		framed = binary.BigEndian.AppendUint32(framed, uint32(z.Len()))
		raw = []byte(base64.StdEncoding.EncodeToString(append(framed, z.Bytes()...)))
	}
	return hdr.Decode(raw)
}

// expectedLatency is the latency summary the status must show for one
// operation (name "" is overall), computed from the raw shard histograms
// without the product's merge, summary or conversion: the buckets of every
// shard's encoded histogram are added up, and each percentile is the
// nearest-rank value — the upper bound of the bucket holding the
// ceil-rounded rank — in microseconds. So the e2e checks the product
// against a definition, not against itself.
func expectedLatency(shards []*result.Document, name string) (*v1alpha1.LatencySummary, error) {
	counts := map[int64]int64{} // bucket upper bound → values in it
	var total int64
	for _, doc := range shards {
		op, ok := operationOf(doc, name)
		if !ok || op.LatencyHistogram == "" {
			continue
		}
		h, err := decodeWithHDR(op.LatencyHistogram)
		if err != nil {
			return nil, fmt.Errorf("shard histogram of %q: %w", name, err)
		}
		for _, bar := range h.Distribution() {
			counts[bar.To] += bar.Count
			total += bar.Count
		}
	}
	if total == 0 {
		return nil, nil
	}
	bounds := make([]int64, 0, len(counts))
	for to, n := range counts {
		if n > 0 {
			bounds = append(bounds, to)
		}
	}
	sort.Slice(bounds, func(i, j int) bool { return bounds[i] < bounds[j] })
	at := func(percentile float64) *metav1.Duration {
		rank := int64(math.Floor(percentile/100*float64(total) + 0.5))
		rank = min(max(rank, 1), total)
		var seen int64
		for _, to := range bounds {
			if seen += counts[to]; seen >= rank {
				return micros(to)
			}
		}
		return micros(bounds[len(bounds)-1])
	}
	return &v1alpha1.LatencySummary{P50: at(50), P90: at(90), P99: at(99), P999: at(99.9), Max: micros(bounds[len(bounds)-1])}, nil
}

// operationOf is a shard's operation of that name ("" is overall).
func operationOf(doc *result.Document, name string) (result.Operation, bool) {
	if name == "" {
		return doc.Overall, true
	}
	for _, op := range doc.Totals {
		if op.Name == name {
			return op, true
		}
	}
	return result.Operation{}, false
}

func micros(us int64) *metav1.Duration {
	return &metav1.Duration{Duration: time.Duration(us) * time.Microsecond}
}
