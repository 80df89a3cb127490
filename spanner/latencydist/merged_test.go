package latencydist_test

import (
	"math"
	"testing"

	"google.golang.org/genproto/googleapis/api/distribution"

	"github.com/spanbench/spanbench/spanner/latencydist"
)

// TestQuantileReadsEachBucketLayout: the three bucket layouts a
// Distribution may carry, with the quantile interpolated in its bucket.
func TestQuantileReadsEachBucketLayout(t *testing.T) {
	linear := &distribution.Distribution_BucketOptions{Options: &distribution.Distribution_BucketOptions_LinearBuckets{
		LinearBuckets: &distribution.Distribution_BucketOptions_Linear{NumFiniteBuckets: 4, Width: 10, Offset: 100}}}
	exponential := &distribution.Distribution_BucketOptions{Options: &distribution.Distribution_BucketOptions_ExponentialBuckets{
		ExponentialBuckets: &distribution.Distribution_BucketOptions_Exponential{NumFiniteBuckets: 3, GrowthFactor: 2, Scale: 1}}}
	for _, tc := range []struct {
		name   string
		opts   *distribution.Distribution_BucketOptions
		counts []int64
		q      float64
		want   float64
	}{
		// Buckets: <100, [100,110), [110,120), [120,130), [130,140), ≥140.
		{"linear, middle of a bucket", linear, []int64{0, 0, 10, 10}, 0.25, 115},
		{"linear, underflow reads its upper edge", linear, []int64{10}, 0.5, 100},
		{"linear, overflow reads its lower edge", linear, []int64{0, 0, 0, 0, 0, 10}, 0.99, 140},
		// Buckets: <1, [1,2), [2,4), [4,8), ≥8.
		{"exponential", exponential, []int64{0, 0, 0, 4}, 0.5, 6},
		{"exponential, counts shorter than the buckets", exponential, []int64{0, 4}, 1, 2},
		{"no buckets: the mean", nil, []int64{4}, 0.99, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var total int64
			for _, n := range tc.counts {
				total += n
			}
			var m latencydist.Merged
			if err := m.Add(&distribution.Distribution{Count: total, Mean: 3, BucketOptions: tc.opts, BucketCounts: tc.counts}); err != nil {
				t.Fatal(err)
			}
			if got := m.Quantile(tc.q); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("quantile(%v) of %v = %v, want %v", tc.q, tc.counts, got, tc.want)
			}
		})
	}
}

func TestMergeRefusesDifferentBuckets(t *testing.T) {
	a := &distribution.Distribution_BucketOptions{Options: &distribution.Distribution_BucketOptions_ExplicitBuckets{
		ExplicitBuckets: &distribution.Distribution_BucketOptions_Explicit{Bounds: []float64{1, 2}}}}
	b := &distribution.Distribution_BucketOptions{Options: &distribution.Distribution_BucketOptions_ExplicitBuckets{
		ExplicitBuckets: &distribution.Distribution_BucketOptions_Explicit{Bounds: []float64{1, 3}}}}
	var m latencydist.Merged
	if err := m.Add(&distribution.Distribution{Count: 1, BucketOptions: a, BucketCounts: []int64{0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := m.Add(&distribution.Distribution{Count: 1, BucketOptions: b, BucketCounts: []int64{0, 1}}); err == nil {
		t.Fatal("distributions with different buckets were summed")
	}
}

// TestMergeRefusesNegativeOrTooManyBucketCounts: a distribution read from
// outside (Cloud Monitoring, SPANNER_SYS) with a negative bucket count or
// more buckets than MaxBuckets is refused, and the merge keeps what it had.
func TestMergeRefusesNegativeOrTooManyBucketCounts(t *testing.T) {
	opts := &distribution.Distribution_BucketOptions{Options: &distribution.Distribution_BucketOptions_ExplicitBuckets{
		ExplicitBuckets: &distribution.Distribution_BucketOptions_Explicit{Bounds: []float64{1, 2}}}}
	var m latencydist.Merged
	if err := m.Add(&distribution.Distribution{Count: 1, BucketOptions: opts, BucketCounts: []int64{0, 1}}); err != nil {
		t.Fatal(err)
	}
	for name, counts := range map[string][]int64{
		"a negative count": {2, -1},
		"too many buckets": make([]int64, latencydist.MaxBuckets+1),
	} {
		counts[0] = 1
		if err := m.Add(&distribution.Distribution{Count: 1, BucketOptions: opts, BucketCounts: counts}); err == nil {
			t.Errorf("%s: the distribution was summed; want a refusal", name)
		}
	}
	if m.Count() != 1 {
		t.Errorf("after the refusals the merge counts %d values, want the first distribution's 1", m.Count())
	}
}
