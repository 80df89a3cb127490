package monitoring

import (
	"fmt"
	"math"
	"sort"
	"time"

	"cloud.google.com/go/monitoring/apiv3/v2/monitoringpb"

	"github.com/spanbench/spanbench/spanner/latencydist"
)

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
		method := ts.GetMetric().GetLabels()[labelMethod]
		scale, ok := unitScale(ts.GetUnit())
		if !ok {
			notes = append(notes, fmt.Sprintf("latency of %s left out: unit %q is not a time unit", method, ts.GetUnit()))
			continue
		}
		var m latencydist.Merged
		var err error
		for _, p := range ts.GetPoints() {
			if err = m.Add(p.GetValue().GetDistributionValue()); err != nil {
				break
			}
		}
		if err != nil {
			notes = append(notes, fmt.Sprintf("latency of %s left out: %v", method, err))
			continue
		}
		if m.Count() == 0 {
			continue
		}
		out = append(out, MethodLatency{Method: method, Count: m.Count(),
			P50: toDuration(m.Quantile(0.50), scale), P99: toDuration(m.Quantile(0.99), scale)})
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
	perMinute := make([]latencydist.Merged, len(out))
	failed := make([]bool, len(out))
	var scale time.Duration
	for _, ts := range latencies {
		s, ok := unitScale(ts.GetUnit())
		if !ok || (scale != 0 && s != scale) {
			return out
		}
		scale = s
		for _, p := range ts.GetPoints() {
			if i, ok := index[minuteEnd(p)]; ok && perMinute[i].Add(p.GetValue().GetDistributionValue()) != nil {
				failed[i] = true
			}
		}
	}
	for i := range out {
		if !failed[i] {
			out[i].P99 = toDuration(perMinute[i].Quantile(0.99), scale)
		}
	}
	return out
}
