package monitoring

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	monitoring "cloud.google.com/go/monitoring/apiv3/v2"
	"cloud.google.com/go/monitoring/apiv3/v2/monitoringpb"
	"google.golang.org/api/iterator"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// The metrics read, as Cloud Monitoring's metrics list names them.
const (
	MetricCPUByPriority   = "spanner.googleapis.com/instance/cpu/utilization_by_priority"
	MetricRequestLatency  = "spanner.googleapis.com/api/request_latencies"
	MetricAPIRequestCount = "spanner.googleapis.com/api/api_request_count"
)

// querier issues one run's requests.
type querier struct {
	client    *monitoring.MetricClient
	inst      Instance
	asked     Window
	maxSeries int
}

// collect reads the three metrics over the asked minutes; the figures
// are of the minutes ending after from, the minute series of all.
func (q querier) collect(ctx context.Context, res *Result, from time.Time) error {
	cpu, err := q.list(ctx, q.cpuRequest())
	if err != nil {
		return fmt.Errorf("reading %s: %w", MetricCPUByPriority, err)
	}
	lat, err := q.list(ctx, q.latencyRequest())
	if err != nil {
		return fmt.Errorf("reading %s: %w", MetricRequestLatency, err)
	}
	count, err := q.list(ctx, q.requestCountRequest())
	if err != nil {
		return fmt.Errorf("reading %s: %w", MetricAPIRequestCount, err)
	}
	res.Minutes = minutePoints(q.asked, count, lat)
	var cpuNotes []string
	res.CPU, res.RegionPeak, cpuNotes = priorityCPU(after(cpu, from))
	res.Notes = append(res.Notes, cpuNotes...)
	res.Requests = statusCounts(after(count, from))
	lats, notes := methodLatencies(after(lat, from))
	res.Latency = lats
	res.Notes = append(res.Notes, notes...)
	return nil
}

// after is series with only the points of minutes ending after from.
func after(series []*monitoringpb.TimeSeries, from time.Time) []*monitoringpb.TimeSeries {
	out := make([]*monitoringpb.TimeSeries, 0, len(series))
	for _, ts := range series {
		kept := &monitoringpb.TimeSeries{Metric: ts.GetMetric(), Resource: ts.GetResource(), Unit: ts.GetUnit()}
		for _, p := range ts.GetPoints() {
			if minuteEnd(p).After(from) {
				kept.Points = append(kept.Points, p)
			}
		}
		out = append(out, kept)
	}
	return out
}

// cpuRequest asks for the instance's CPU per priority and location: each
// series (database × priority × system or user) averaged over each
// minute, then summed per priority and location, so the figure is the
// instance's, as Spanner's own CPU recommendations read it.
func (q querier) cpuRequest() *monitoringpb.ListTimeSeriesRequest {
	return q.request(MetricCPUByPriority, false, &monitoringpb.Aggregation{
		AlignmentPeriod:    durationpb.New(SamplePeriod),
		PerSeriesAligner:   monitoringpb.Aggregation_ALIGN_MEAN,
		CrossSeriesReducer: monitoringpb.Aggregation_REDUCE_SUM,
		GroupByFields:      []string{"metric.label." + labelPriority, "resource.label." + labelLocation},
	})
}

// latencyRequest asks for the database's latency distribution per method
// and minute: summing distributions merges their buckets, so percentiles
// are read from the merged distribution, never averaged.
func (q querier) latencyRequest() *monitoringpb.ListTimeSeriesRequest {
	return q.request(MetricRequestLatency, true, &monitoringpb.Aggregation{
		AlignmentPeriod:    durationpb.New(SamplePeriod),
		PerSeriesAligner:   monitoringpb.Aggregation_ALIGN_DELTA,
		CrossSeriesReducer: monitoringpb.Aggregation_REDUCE_SUM,
		GroupByFields:      []string{"metric.label." + labelMethod},
	})
}

// requestCountRequest asks for the database's requests per status and
// minute.
func (q querier) requestCountRequest() *monitoringpb.ListTimeSeriesRequest {
	return q.request(MetricAPIRequestCount, true, &monitoringpb.Aggregation{
		AlignmentPeriod:    durationpb.New(SamplePeriod),
		PerSeriesAligner:   monitoringpb.Aggregation_ALIGN_DELTA,
		CrossSeriesReducer: monitoringpb.Aggregation_REDUCE_SUM,
		GroupByFields:      []string{"metric.label." + labelStatus},
	})
}

// request is the request of metric over the asked minutes, of the
// instance, and of the run's database when byDatabase (CPU is the whole
// instance's: other databases' load takes the same CPU).
func (q querier) request(metric string, byDatabase bool, agg *monitoringpb.Aggregation) *monitoringpb.ListTimeSeriesRequest {
	filter := fmt.Sprintf(`metric.type = %q AND resource.type = %q AND resource.label.instance_id = %q`,
		metric, SpannerInstance.Type, q.inst.Instance)
	if byDatabase {
		filter += fmt.Sprintf(` AND metric.label.%s = %q`, labelDatabase, q.inst.Database)
	}
	return &monitoringpb.ListTimeSeriesRequest{
		Name:   "projects/" + q.inst.Project,
		Filter: filter,
		// Points are read at minute ends in (StartTime, EndTime]: exactly
		// the asked minutes.
		Interval: &monitoringpb.TimeInterval{
			StartTime: timestamppb.New(q.asked.Start),
			EndTime:   timestamppb.New(q.asked.End),
		},
		Aggregation: agg,
		View:        monitoringpb.ListTimeSeriesRequest_FULL,
	}
}

// errTooManySeries stops a response larger than the filter can mean.
var errTooManySeries = errors.New("more series than the filter can match")

// list reads every page of req, at most q.maxSeries series.
func (q querier) list(ctx context.Context, req *monitoringpb.ListTimeSeriesRequest) ([]*monitoringpb.TimeSeries, error) {
	it := q.client.ListTimeSeries(ctx, req)
	var out []*monitoringpb.TimeSeries
	for {
		ts, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(out) == q.maxSeries {
			return nil, fmt.Errorf("%w: over %d", errTooManySeries, q.maxSeries)
		}
		out = append(out, ts)
	}
}

// priorityCPU summarises the minute means of each priority and location,
// and per priority the location whose minutes peaked highest: a
// multi-region instance is sized by its busiest region (Google's CPU page
// recommends a maximum per region), which the mean over its regions
// would hide. A series without a priority or a location label is kept
// under "" and said to be.
func priorityCPU(series []*monitoringpb.TimeSeries) (all, peaks []PriorityCPU, notes []string) {
	unlabelled := 0
	for _, ts := range series {
		if len(ts.GetPoints()) == 0 {
			continue
		}
		priority, hasPriority := ts.GetMetric().GetLabels()[labelPriority]
		location, hasLocation := ts.GetResource().GetLabels()[labelLocation]
		if !hasPriority || !hasLocation {
			unlabelled++
		}
		c := PriorityCPU{Priority: priority, Location: location}
		var sum float64
		for _, p := range ts.GetPoints() {
			v := number(p.GetValue())
			sum += v
			c.Max = max(c.Max, v)
		}
		c.Mean = sum / float64(len(ts.GetPoints()))
		all = append(all, c)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Priority != all[j].Priority {
			return all[i].Priority < all[j].Priority
		}
		return all[i].Location < all[j].Location
	})
	if unlabelled > 0 {
		notes = append(notes, fmt.Sprintf("%d CPU series lacked the %s metric label or the %s resource label (%s, %s): "+
			"they are listed under an empty name", unlabelled, labelPriority, labelLocation, CPUByPriority.Source, SpannerInstance.Source))
	}
	return all, regionPeaks(all), notes
}

// regionPeaks are, per priority with more than one location, the location
// whose largest minute mean is the highest.
func regionPeaks(all []PriorityCPU) []PriorityCPU {
	var out []PriorityCPU
	for i := 0; i < len(all); {
		j, peak := i, all[i]
		for ; j < len(all) && all[j].Priority == all[i].Priority; j++ {
			if all[j].Max > peak.Max {
				peak = all[j]
			}
		}
		if j-i > 1 {
			out = append(out, peak)
		}
		i = j
	}
	return out
}

// statusCounts sums each status's minutes.
func statusCounts(series []*monitoringpb.TimeSeries) []StatusCount {
	byStatus := map[string]int64{}
	for _, ts := range series {
		s := ts.GetMetric().GetLabels()[labelStatus]
		for _, p := range ts.GetPoints() {
			byStatus[s] += int64(number(p.GetValue()))
		}
	}
	out := make([]StatusCount, 0, len(byStatus))
	for s, n := range byStatus {
		out = append(out, StatusCount{Status: s, Count: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Status < out[j].Status })
	return out
}

// number is a point's value, whichever numeric type the aligner gave.
func number(v *monitoringpb.TypedValue) float64 {
	switch x := v.GetValue().(type) {
	case *monitoringpb.TypedValue_DoubleValue:
		return x.DoubleValue
	case *monitoringpb.TypedValue_Int64Value:
		return float64(x.Int64Value)
	}
	return 0
}

// minuteEnd is the end of a point's interval, the minute it stands for.
func minuteEnd(p *monitoringpb.Point) time.Time {
	return p.GetInterval().GetEndTime().AsTime().UTC()
}
