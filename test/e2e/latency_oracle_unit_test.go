package e2e

import (
	"encoding/base64"
	"math/rand/v2"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/google/go-cmp/cmp"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
)

// shardWith is a shard result whose operation "read" (and overall)
// recorded values (µs), encoded as runners encode them (v2) or, when
// there is an odd number of values, as they did before (v1).
func shardWith(t *testing.T, values ...int64) *result.Document {
	t.Helper()
	h := hdr.New(1, 100_000_000, 3)
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	// Runners write v2 (histogram.Encode); odd shards are in v1, as the
	// HDR library writes it, as runners of an older release did.
	enc, err := histogram.Encode(h)
	if len(values)%2 == 1 {
		var b []byte
		b, err = h.Encode(hdr.V2CompressedEncodingCookieBase)
		enc = base64.StdEncoding.EncodeToString(b)
	}
	if err != nil {
		t.Fatal(err)
	}
	op := result.Operation{Name: "read", Histograms: result.Histograms{LatencyHistogram: enc}}
	overall := op
	overall.Name = ""
	return &result.Document{Totals: []result.Operation{op}, Overall: overall}
}

func span(from, to int64) []int64 {
	var out []int64
	for v := from; v <= to; v++ {
		out = append(out, v)
	}
	return out
}

// TestExpectedLatencyIsTheNearestRankOfAllShards: values split over
// shards (small values are exact in the histogram): each percentile is
// the value of rank q·N rounded half up (999 values: p50 is rank 500).
func TestExpectedLatencyIsTheNearestRankOfAllShards(t *testing.T) {
	for _, tc := range []struct {
		name   string
		shards []*result.Document
		want   *v1alpha1.LatencySummary
	}{
		{"1..1000", []*result.Document{shardWith(t, span(1, 500)...), shardWith(t, span(501, 1000)...), shardWith(t)},
			&v1alpha1.LatencySummary{P50: micros(500), P90: micros(900), P99: micros(990), P999: micros(999), Max: micros(1000)}},
		{"1..999", []*result.Document{shardWith(t, span(1, 333)...), shardWith(t, span(334, 999)...)},
			&v1alpha1.LatencySummary{P50: micros(500), P90: micros(899), P99: micros(989), P999: micros(998), Max: micros(999)}},
	} {
		for _, name := range []string{"read", ""} {
			got, err := expectedLatency(tc.shards, name)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("%s: expected latency of %q (-want +got):\n%s", tc.name, name, d)
			}
		}
		if got, err := expectedLatency(tc.shards, "update"); err != nil || got != nil {
			t.Errorf("%s: an operation no shard ran: %+v, %v; want none", tc.name, got, err)
		}
	}
}

// TestExpectedLatencyMatchesHDRsOwnPercentiles: on values large enough to
// share buckets, the oracle's nearest rank is HDR's percentile of the
// merged histogram (the convention the product documents).
func TestExpectedLatencyMatchesHDRsOwnPercentiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	merged := hdr.New(1, 100_000_000, 3)
	var shards []*result.Document
	for range 3 {
		var values []int64
		for range 5000 {
			v := int64(rng.ExpFloat64()*20_000) + 1
			values = append(values, v)
			_ = merged.RecordValue(v)
		}
		shards = append(shards, shardWith(t, values...))
	}
	got, err := expectedLatency(shards, "")
	if err != nil {
		t.Fatal(err)
	}
	d := func(p float64) time.Duration { return time.Duration(merged.ValueAtPercentile(p)) * time.Microsecond }
	want := []time.Duration{d(50), d(90), d(99), d(99.9), time.Duration(merged.Max()) * time.Microsecond}
	have := []time.Duration{got.P50.Duration, got.P90.Duration, got.P99.Duration, got.P999.Duration, got.Max.Duration}
	if diff := cmp.Diff(want, have); diff != "" {
		t.Errorf("p50, p90, p99, p99.9, max (-HDR +oracle):\n%s", diff)
	}
}
