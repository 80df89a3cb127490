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
	res.CPU = priorityCPU(after(cpu, from))
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
		GroupByFields:      []string{"metric.label.priority", "resource.label.location"},
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
		GroupByFields:      []string{"metric.label.method"},
	})
}

// requestCountRequest asks for the database's requests per status and
// minute.
func (q querier) requestCountRequest() *monitoringpb.ListTimeSeriesRequest {
	return q.request(MetricAPIRequestCount, true, &monitoringpb.Aggregation{
		AlignmentPeriod:    durationpb.New(SamplePeriod),
		PerSeriesAligner:   monitoringpb.Aggregation_ALIGN_DELTA,
		CrossSeriesReducer: monitoringpb.Aggregation_REDUCE_SUM,
		GroupByFields:      []string{"metric.label.status"},
	})
}

// request is the request of metric over the asked minutes, of the
// instance, and of the run's database when byDatabase (CPU is the whole
// instance's: other databases' load takes the same CPU).
func (q querier) request(metric string, byDatabase bool, agg *monitoringpb.Aggregation) *monitoringpb.ListTimeSeriesRequest {
	filter := fmt.Sprintf(`metric.type = %q AND resource.type = "spanner_instance" AND resource.label.instance_id = %q`,
		metric, q.inst.Instance)
	if byDatabase {
		filter += fmt.Sprintf(` AND metric.label.database = %q`, q.inst.Database)
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

// priorityCPU summarises the minute means of each priority and location.
func priorityCPU(series []*monitoringpb.TimeSeries) []PriorityCPU {
	var out []PriorityCPU
	for _, ts := range series {
		if len(ts.GetPoints()) == 0 {
			continue
		}
		c := PriorityCPU{Priority: ts.GetMetric().GetLabels()["priority"], Location: ts.GetResource().GetLabels()["location"]}
		var sum float64
		for _, p := range ts.GetPoints() {
			v := number(p.GetValue())
			sum += v
			c.Max = max(c.Max, v)
		}
		c.Mean = sum / float64(len(ts.GetPoints()))
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Priority != out[j].Priority {
			return out[i].Priority < out[j].Priority
		}
		return out[i].Location < out[j].Location
	})
	return out
}

// statusCounts sums each status's minutes.
func statusCounts(series []*monitoringpb.TimeSeries) []StatusCount {
	byStatus := map[string]int64{}
	for _, ts := range series {
		s := ts.GetMetric().GetLabels()["status"]
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
