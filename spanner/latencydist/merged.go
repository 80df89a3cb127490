// Package latencydist merges latency distributions in Google's
// Distribution form (buckets of linear, exponential or explicit widths, as
// Cloud Monitoring and Spanner's SPANNER_SYS statistics publish them) and
// reads percentiles from the merged buckets. Distributions are summed,
// never their percentiles averaged: a p99 of several minutes is the p99
// of their merged buckets. It is the one owner of that rule for
// spanner/monitoring and spanner/serverstats.
package latencydist

import (
	"errors"
	"fmt"
	"math"

	"google.golang.org/genproto/googleapis/api/distribution"
	"google.golang.org/protobuf/proto"
)

// MaxBuckets bounds a distribution's buckets: Spanner's latency
// distributions have a few dozen; a merged one holds one count a bucket.
const MaxBuckets = 4096

// Merged is a sum of distributions with the same buckets. The zero value
// is empty.
type Merged struct {
	opts   *distribution.Distribution_BucketOptions
	counts []int64
	total  int64
	sum    float64 // of the values, from each distribution's mean
}

// Add sums d into m; distributions with other buckets cannot be summed.
func (m *Merged) Add(d *distribution.Distribution) error {
	if d.GetCount() <= 0 {
		return nil
	}
	if len(d.GetBucketCounts()) > MaxBuckets {
		return fmt.Errorf("a distribution of %d buckets is more than %d", len(d.GetBucketCounts()), MaxBuckets)
	}
	for _, n := range d.GetBucketCounts() {
		if n < 0 {
			return errors.New("a distribution has a negative bucket count")
		}
	}
	if m.opts == nil {
		m.opts = d.GetBucketOptions()
	} else if !proto.Equal(m.opts, d.GetBucketOptions()) {
		return errors.New("the distributions have different buckets")
	}
	for i, n := range d.GetBucketCounts() {
		if i == len(m.counts) {
			m.counts = append(m.counts, 0)
		}
		m.counts[i] += n
	}
	m.total += d.GetCount()
	m.sum += d.GetMean() * float64(d.GetCount())
	return nil
}

// Count is the number of values merged.
func (m *Merged) Count() int64 { return m.total }

// Quantile is the value under which a fraction q of the merged values
// lie, interpolated linearly within its bucket. A quantile in the
// underflow bucket reads as its upper bound, in the overflow bucket as its
// lower bound: the bucket's finite edge.
func (m *Merged) Quantile(q float64) float64 {
	if m.total == 0 {
		return 0
	}
	rank := q * float64(m.total)
	var seen float64
	for i, n := range m.counts {
		if n == 0 || seen+float64(n) < rank {
			seen += float64(n)
			continue
		}
		lo, hi := bucketBounds(m.opts, i)
		switch {
		case math.IsInf(lo, -1) && math.IsInf(hi, 1):
			// No buckets: the mean is all there is.
			return m.sum / float64(m.total)
		case math.IsInf(lo, -1):
			return hi
		case math.IsInf(hi, 1):
			return lo
		}
		return lo + (hi-lo)*(rank-seen)/float64(n)
	}
	if len(m.counts) == 0 {
		return m.sum / float64(m.total)
	}
	lo, _ := bucketBounds(m.opts, len(m.counts)-1)
	return lo
}

// bucketBounds is bucket i's [lower, upper) under o, as the Distribution
// type defines them: bucket 0 is the underflow, the last the overflow.
func bucketBounds(o *distribution.Distribution_BucketOptions, i int) (lo, hi float64) {
	var bound func(k int) float64 // lower bound of bucket k ≥ 1
	var n int                     // finite buckets
	switch {
	case o.GetLinearBuckets() != nil:
		l := o.GetLinearBuckets()
		n = int(l.GetNumFiniteBuckets())
		bound = func(k int) float64 { return l.GetOffset() + l.GetWidth()*float64(k-1) }
	case o.GetExponentialBuckets() != nil:
		e := o.GetExponentialBuckets()
		n = int(e.GetNumFiniteBuckets())
		bound = func(k int) float64 { return e.GetScale() * math.Pow(e.GetGrowthFactor(), float64(k-1)) }
	case o.GetExplicitBuckets() != nil:
		b := o.GetExplicitBuckets().GetBounds()
		n = len(b) - 1
		bound = func(k int) float64 { return b[min(k-1, len(b)-1)] }
	default:
		return math.Inf(-1), math.Inf(1)
	}
	lo, hi = math.Inf(-1), math.Inf(1)
	if i >= 1 {
		lo = bound(min(i, n+1))
	}
	if i <= n {
		hi = bound(i + 1)
	}
	return lo, hi
}
