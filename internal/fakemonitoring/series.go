package fakemonitoring

import (
	"time"

	"cloud.google.com/go/monitoring/apiv3/v2/monitoringpb"
	"google.golang.org/genproto/googleapis/api/distribution"
	"google.golang.org/genproto/googleapis/api/metric"
	"google.golang.org/genproto/googleapis/api/monitoredres"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Series is a time series as the service answers one: its labels after
// the request's grouping, its unit and its points (newest first).
func Series(metricLabels, resourceLabels map[string]string, unit string, points ...*monitoringpb.Point) *monitoringpb.TimeSeries {
	return &monitoringpb.TimeSeries{
		Metric:   &metric.Metric{Labels: metricLabels},
		Resource: &monitoredres.MonitoredResource{Type: "spanner_instance", Labels: resourceLabels},
		Unit:     unit,
		Points:   points,
	}
}

// Gauge is an aligned gauge point of the minute ending at end.
func Gauge(end time.Time, v float64) *monitoringpb.Point {
	return &monitoringpb.Point{
		Interval: &monitoringpb.TimeInterval{EndTime: timestamppb.New(end)},
		Value:    &monitoringpb.TypedValue{Value: &monitoringpb.TypedValue_DoubleValue{DoubleValue: v}},
	}
}

// Delta is an aligned delta point of the minute ending at end.
func Delta(end time.Time, v *monitoringpb.TypedValue) *monitoringpb.Point {
	return &monitoringpb.Point{
		Interval: &monitoringpb.TimeInterval{StartTime: timestamppb.New(end.Add(-time.Minute)), EndTime: timestamppb.New(end)},
		Value:    v,
	}
}

// Count is an INT64 value.
func Count(n int64) *monitoringpb.TypedValue {
	return &monitoringpb.TypedValue{Value: &monitoringpb.TypedValue_Int64Value{Int64Value: n}}
}

// LatencyBuckets are [0,1ms) [1,2ms) [2,4ms) [4,8ms), in seconds, with an
// underflow and an overflow bucket.
var LatencyBuckets = &distribution.Distribution_BucketOptions{Options: &distribution.Distribution_BucketOptions_ExplicitBuckets{
	ExplicitBuckets: &distribution.Distribution_BucketOptions_Explicit{Bounds: []float64{0, 0.001, 0.002, 0.004, 0.008}},
}}

// Latency is a distribution value over LatencyBuckets with the given
// bucket counts.
func Latency(counts ...int64) *monitoringpb.TypedValue {
	var total int64
	for _, n := range counts {
		total += n
	}
	return &monitoringpb.TypedValue{Value: &monitoringpb.TypedValue_DistributionValue{DistributionValue: &distribution.Distribution{
		Count: total, Mean: 0.002, BucketOptions: LatencyBuckets, BucketCounts: counts,
	}}}
}
