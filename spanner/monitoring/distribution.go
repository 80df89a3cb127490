package monitoring

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"cloud.google.com/go/monitoring/apiv3/v2/monitoringpb"
	"google.golang.org/genproto/googleapis/api/distribution"
	"google.golang.org/protobuf/proto"
)

// maxBuckets bounds a distribution's buckets: Spanner's latency
// distributions have a few dozen; a merged one holds one count a bucket.
const maxBuckets = 4096

// merged is a sum of distributions with the same buckets.
type merged struct {
	opts   *distribution.Distribution_BucketOptions
	counts []int64
	total  int64
	sum    float64 // of the values, from each distribution's mean
}

// add sums d into m; distributions with other buckets cannot be summed.
func (m *merged) add(d *distribution.Distribution) error {
	if d.GetCount() == 0 {
		return nil
	}
	if len(d.GetBucketCounts()) > maxBuckets {
		return fmt.Errorf("a distribution of %d buckets is more than %d", len(d.GetBucketCounts()), maxBuckets)
	}
	if m.opts == nil {
		m.opts = d.GetBucketOptions()
	} else if !proto.Equal(m.opts, d.GetBucketOptions()) {
		return errors.New("the minutes' distributions have different buckets")
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

// quantile is the value under which a fraction q of the merged values
// lie, interpolated linearly within its bucket. A quantile in the
// underflow bucket reads as its upper bound, in the overflow bucket as its
// lower bound: the bucket's finite edge.
func (m *merged) quantile(q float64) float64 {
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
		bound = func(k int) float64 { return b[k-1] }
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

// unitScale is the length of one unit of a latency series' values.
func unitScale(unit string) (time.Duration, bool) {
	switch unit {
	case "s":
		return time.Second, true
	case "ms":
		return time.Millisecond, true
	case "us":
		return time.Microsecond, true
	case "ns":
		return time.Nanosecond, true
	}
	return 0, false
}

// toDuration turns a value in unit into a duration.
func toDuration(v float64, scale time.Duration) time.Duration {
	return time.Duration(math.Round(v * float64(scale)))
}

// methodLatencies merges each method's minutes and reads p50 and p99. A
// method whose series cannot be read (unknown unit, differing buckets) is
// left out with a note.
func methodLatencies(series []*monitoringpb.TimeSeries) ([]MethodLatency, []string) {
	var out []MethodLatency
	var notes []string
	for _, ts := range series {
		method := ts.GetMetric().GetLabels()["method"]
		scale, ok := unitScale(ts.GetUnit())
		if !ok {
			notes = append(notes, fmt.Sprintf("latency of %s left out: unit %q is not a time unit", method, ts.GetUnit()))
			continue
		}
		var m merged
		var err error
		for _, p := range ts.GetPoints() {
			if err = m.add(p.GetValue().GetDistributionValue()); err != nil {
				break
			}
		}
		if err != nil {
			notes = append(notes, fmt.Sprintf("latency of %s left out: %v", method, err))
			continue
		}
		if m.total == 0 {
			continue
		}
		out = append(out, MethodLatency{Method: method, Count: m.total,
			P50: toDuration(m.quantile(0.50), scale), P99: toDuration(m.quantile(0.99), scale)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Method < out[j].Method })
	return out, notes
}

// minutePoints is the database's requests and p99 over every method per
// minute of asked. The p99 of a minute whose methods' buckets differ, or
// whose unit is not a time, is 0.
func minutePoints(asked Window, counts, latencies []*monitoringpb.TimeSeries) []MinutePoint {
	var out []MinutePoint
	index := map[time.Time]int{}
	for t := asked.Start.Add(SamplePeriod); !t.After(asked.End); t = t.Add(SamplePeriod) {
		index[t] = len(out)
		out = append(out, MinutePoint{End: t})
	}
	for _, ts := range counts {
		for _, p := range ts.GetPoints() {
			if i, ok := index[minuteEnd(p)]; ok {
				out[i].Requests += int64(number(p.GetValue()))
			}
		}
	}
	perMinute := make([]merged, len(out))
	failed := make([]bool, len(out))
	var scale time.Duration
	for _, ts := range latencies {
		s, ok := unitScale(ts.GetUnit())
		if !ok || (scale != 0 && s != scale) {
			return out
		}
		scale = s
		for _, p := range ts.GetPoints() {
			if i, ok := index[minuteEnd(p)]; ok && perMinute[i].add(p.GetValue().GetDistributionValue()) != nil {
				failed[i] = true
			}
		}
	}
	for i := range out {
		if !failed[i] {
			out[i].P99 = toDuration(perMinute[i].quantile(0.99), scale)
		}
	}
	return out
}
