package monitoring_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	monitoringapi "cloud.google.com/go/monitoring/apiv3/v2"
	"cloud.google.com/go/monitoring/apiv3/v2/monitoringpb"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/api/option"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/spanbench/spanbench/internal/fakemonitoring"
	"github.com/spanbench/spanbench/spanner/monitoring"
)

func at(h, m, s int) time.Time { return time.Date(2026, 11, 24, h, m, s, 0, time.UTC) }

var inst = monitoring.Instance{Project: "bench-proj", Instance: "bench-inst", Database: "ycsb"}

// runWindow starts and ends inside minutes; its warm-up ends inside one:
// asked [12:01, 12:06], figures of the minutes ending 12:04 to 12:06.
var runWindow = monitoring.Window{Start: at(12, 0, 20), WarmUpEnd: at(12, 2, 10), End: at(12, 6, 40)}

// startFake starts the fake and returns it with two ways to collect
// runWindow from it at 12:09, when the window has settled.
func startFake(t *testing.T) (*fakemonitoring.Server, func() *monitoring.Result, func() error) {
	t.Helper()
	fake, client := fakeAndClient(t)
	var res *monitoring.Result
	var collectErr error
	collect := func(now time.Time) {
		c := monitoring.Collector{Clock: clocktesting.NewFakePassiveClock(now)}
		res, collectErr = c.Collect(context.Background(), client, inst, runWindow)
	}
	return fake, func() *monitoring.Result { collect(at(12, 9, 0)); return res },
		func() error { collect(at(12, 9, 0)); return collectErr }
}

// fakeAndClient starts the fake MetricService and a client of it, both
// stopped at the test's end.
func fakeAndClient(t *testing.T) (*fakemonitoring.Server, *monitoringapi.MetricClient) {
	t.Helper()
	fake, err := fakemonitoring.Start()
	if err != nil {
		t.Fatalf("starting the fake MetricService: %v", err)
	}
	t.Cleanup(fake.Stop)
	client, err := monitoring.NewClient(context.Background(), monitoring.Endpoint{Address: fake.Addr, Options: fake.ClientOptions()})
	if err != nil {
		t.Fatalf("opening a client of the fake: %v", err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return fake, client
}

// minuteEnds are the asked minutes, newest first as the service answers.
var minuteEnds = []time.Time{at(12, 6, 0), at(12, 5, 0), at(12, 4, 0), at(12, 3, 0), at(12, 2, 0)}

// serveRun records a run: warm-up minutes (ending 12:02, 12:03) busy and
// slow, then steady ones. Figures that include them are wrong.
func serveRun(fake *fakemonitoring.Server) {
	cpu := func(priority, location string, vs ...float64) *monitoringpb.TimeSeries {
		var ps []*monitoringpb.Point
		for i, end := range minuteEnds {
			ps = append(ps, fakemonitoring.Gauge(end, vs[i]))
		}
		return fakemonitoring.Series(map[string]string{"priority": priority}, map[string]string{"location": location}, "10^2.%", ps...)
	}
	fake.Serve(monitoring.MetricCPUByPriority,
		cpu("high", "asia-northeast1", 0.6, 0.5, 0.4, 0.9, 0.9),
		cpu("low", "asia-northeast1", 0.02, 0.01, 0.03, 0.2, 0.2),
		cpu("high", "asia-northeast2", 0.2, 0.3, 0.1, 0.5, 0.5),
	)
	var ok, aborted, lat []*monitoringpb.Point
	for i, end := range minuteEnds {
		ok = append(ok, fakemonitoring.Delta(end, fakemonitoring.Count(1000)))
		aborted = append(aborted, fakemonitoring.Delta(end, fakemonitoring.Count(5)))
		if i < 3 {
			lat = append(lat, fakemonitoring.Delta(end, fakemonitoring.Latency(0, 50, 30, 15, 5)))
		} else {
			lat = append(lat, fakemonitoring.Delta(end, fakemonitoring.Latency(0, 0, 0, 0, 100)))
		}
	}
	fake.Serve(monitoring.MetricAPIRequestCount,
		fakemonitoring.Series(map[string]string{"status": "OK"}, nil, "1", ok...),
		fakemonitoring.Series(map[string]string{"status": "ABORTED"}, nil, "1", aborted...))
	fake.Serve(monitoring.MetricRequestLatency, fakemonitoring.Series(map[string]string{"method": "ExecuteSql"}, nil, "s", lat...))
}

func TestCollectReadsTheRunsFiguresAfterItsWarmUp(t *testing.T) {
	fake, collect, _ := startFake(t)
	serveRun(fake)
	got := collect()
	if got == nil {
		t.Fatal("Collect returned no result from the fake MetricService")
	}
	want := &monitoring.Result{
		Window:       runWindow,
		Asked:        monitoring.Window{Start: at(12, 1, 0), End: at(12, 6, 0)},
		Alignment:    time.Minute,
		MeasuredFrom: at(12, 3, 0),
		CPU: []monitoring.PriorityCPU{
			{Priority: "high", Location: "asia-northeast1", Mean: 0.5, Max: 0.6},
			{Priority: "high", Location: "asia-northeast2", Mean: 0.2, Max: 0.3},
			{Priority: "low", Location: "asia-northeast1", Mean: 0.02, Max: 0.03},
		},
		// Of the two regions' high-priority CPU, asia-northeast1's minutes
		// peaked highest (0.6 against 0.3).
		RegionPeak: []monitoring.PriorityCPU{{Priority: "high", Location: "asia-northeast1", Mean: 0.5, Max: 0.6}},
		// [0 150 90 45 15]: p50 at the top of [0,1ms), p99 12/15 into [4,8ms).
		Latency:  []monitoring.MethodLatency{{Method: "ExecuteSql", Count: 300, P50: time.Millisecond, P99: 7200 * time.Microsecond}},
		Requests: []monitoring.StatusCount{{Status: "ABORTED", Count: 15}, {Status: "OK", Count: 3000}},
		Minutes: []monitoring.MinutePoint{
			{End: at(12, 2, 0), Requests: 1005, P99: 7960 * time.Microsecond},
			{End: at(12, 3, 0), Requests: 1005, P99: 7960 * time.Microsecond},
			{End: at(12, 4, 0), Requests: 1005, P99: 7200 * time.Microsecond},
			{End: at(12, 5, 0), Requests: 1005, P99: 7200 * time.Microsecond},
			{End: at(12, 6, 0), Requests: 1005, P99: 7200 * time.Microsecond},
		},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })); diff != "" {
		t.Errorf("the figures read from the fake MetricService (-want +got):\n%s", diff)
	}
}

func TestCollectAsksWholeMinutesAlignedToTheSamplingPeriod(t *testing.T) {
	fake, collect, _ := startFake(t)
	serveRun(fake)
	collect()
	interval := &monitoringpb.TimeInterval{StartTime: timestamppb.New(at(12, 1, 0)), EndTime: timestamppb.New(at(12, 6, 0))}
	agg := func(aligner monitoringpb.Aggregation_Aligner, by ...string) *monitoringpb.Aggregation {
		return &monitoringpb.Aggregation{AlignmentPeriod: durationpb.New(time.Minute), PerSeriesAligner: aligner,
			CrossSeriesReducer: monitoringpb.Aggregation_REDUCE_SUM, GroupByFields: by}
	}
	const instance = `resource.type = "spanner_instance" AND resource.label.instance_id = "bench-inst"`
	req := func(filter string, a *monitoringpb.Aggregation) *monitoringpb.ListTimeSeriesRequest {
		return &monitoringpb.ListTimeSeriesRequest{Name: "projects/bench-proj", Filter: filter, Interval: interval,
			Aggregation: a, View: monitoringpb.ListTimeSeriesRequest_FULL}
	}
	want := []*monitoringpb.ListTimeSeriesRequest{
		req(`metric.type = "spanner.googleapis.com/instance/cpu/utilization_by_priority" AND `+instance,
			agg(monitoringpb.Aggregation_ALIGN_MEAN, "metric.label.priority", "resource.label.location")),
		req(`metric.type = "spanner.googleapis.com/api/request_latencies" AND `+instance+` AND metric.label.database = "ycsb"`,
			agg(monitoringpb.Aggregation_ALIGN_DELTA, "metric.label.method")),
		req(`metric.type = "spanner.googleapis.com/api/api_request_count" AND `+instance+` AND metric.label.database = "ycsb"`,
			agg(monitoringpb.Aggregation_ALIGN_DELTA, "metric.label.status")),
	}
	if diff := cmp.Diff(want, fake.Requests(), protocmp.Transform()); diff != "" {
		t.Errorf("the requests the collector sent (-want +got):\n%s", diff)
	}
}

func TestCollectWaitsForTheLastMinutesPublishingDelay(t *testing.T) {
	fake, err := fakemonitoring.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Stop()
	client, err := monitoring.NewClient(context.Background(), monitoring.Endpoint{Address: fake.Addr, Options: fake.ClientOptions()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Close() }()
	c := monitoring.Collector{Clock: clocktesting.NewFakePassiveClock(at(12, 8, 59))}
	_, err = c.Collect(context.Background(), client, inst, runWindow)
	var ns *monitoring.NotSettledError
	if !errors.As(err, &ns) {
		t.Fatalf("Collect 179 s after the last whole minute = %v, want a NotSettledError", err)
	}
	if !ns.ReadyAt.Equal(at(12, 9, 0)) {
		t.Errorf("ReadyAt = %s, want 12:09:00 (the last whole minute 12:06 + 180 s)", ns.ReadyAt)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("the collector sent %d requests before the window settled, want none", n)
	}
}

func TestCollectClassifiesPermissionDenied(t *testing.T) {
	fake, _, collectErr := startFake(t)
	fake.Fail(codes.PermissionDenied, "monitoring.timeSeries.list denied")
	var pd *monitoring.PermissionDeniedError
	if err := collectErr(); !errors.As(err, &pd) {
		t.Fatalf("Collect against a refusing service = %v, want a PermissionDeniedError", err)
	}
	fake.Fail(codes.Internal, "boom")
	if err := collectErr(); err == nil || errors.As(err, &pd) {
		t.Fatalf("Collect against a failing service = %v, want an error that is not PermissionDenied", err)
	}
}

func TestCollectRefusesMoreSeriesThanTheFilterMeans(t *testing.T) {
	fake, err := fakemonitoring.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Stop()
	serveRun(fake)
	client, err := monitoring.NewClient(context.Background(), monitoring.Endpoint{Address: fake.Addr, Options: fake.ClientOptions()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Close() }()
	c := monitoring.Collector{Clock: clocktesting.NewFakePassiveClock(at(13, 0, 0)), MaxSeries: 2}
	if _, err := c.Collect(context.Background(), client, inst, runWindow); err == nil {
		t.Fatal("3 CPU series were read with MaxSeries 2")
	}
}

func TestNewClientRefusesAnEmptyEndpoint(t *testing.T) {
	// Without authentication, so that only the missing address can refuse
	// it (not the missing credentials of this machine).
	client, err := monitoring.NewClient(context.Background(), monitoring.Endpoint{
		Options: []option.ClientOption{option.WithoutAuthentication()}})
	if err == nil {
		_ = client.Close()
		t.Fatal("a client without an endpoint was opened")
	}
	if !strings.Contains(err.Error(), "endpoint is empty") {
		t.Errorf("refused with %q, want the empty endpoint named", err)
	}
}

// TestNewClientDialsOnlyTheGivenAddress: an endpoint option among the
// client options does not move the client off the given address.
func TestNewClientDialsOnlyTheGivenAddress(t *testing.T) {
	fake, err := fakemonitoring.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Stop()
	serveRun(fake)
	opts := append(fake.ClientOptions(), option.WithEndpoint("127.0.0.1:1"))
	client, err := monitoring.NewClient(context.Background(), monitoring.Endpoint{Address: fake.Addr, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := monitoring.Collector{Clock: clocktesting.NewFakePassiveClock(at(13, 0, 0))}
	if _, err := c.Collect(ctx, client, inst, runWindow); err != nil {
		t.Fatalf("a client given %s and an option naming 127.0.0.1:1 did not reach %s: %v", fake.Addr, fake.Addr, err)
	}
	if n := len(fake.Requests()); n != 3 {
		t.Errorf("the fake at the given address received %d requests, want 3", n)
	}
}
