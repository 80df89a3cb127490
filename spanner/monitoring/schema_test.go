package monitoring_test

import (
	"regexp"
	"strings"
	"testing"

	"cloud.google.com/go/monitoring/apiv3/v2/monitoringpb"

	"github.com/spanbench/spanbench/internal/fakemonitoring"
	"github.com/spanbench/spanbench/spanner/monitoring"
)

var labelRef = regexp.MustCompile(`\b(metric|resource)\.labels?\.([a-z_]+)`)

// TestCollectAsksOnlyDocumentedLabels: every metric the collector asks
// for, and every label it filters or groups by, is in Google's
// documentation of that metric and its resource; and it aligns each
// metric by its documented kind (a gauge by its mean, a delta by its
// sum over the minute).
func TestCollectAsksOnlyDocumentedLabels(t *testing.T) {
	fake, collect, _ := startFake(t)
	serveRun(fake)
	collect()
	reqs := fake.Requests()
	if len(reqs) != len(monitoring.DocumentedMetrics()) {
		t.Fatalf("%d requests, want one per documented metric (%d)", len(reqs), len(monitoring.DocumentedMetrics()))
	}
	for _, req := range reqs {
		m, ok := monitoring.DocumentedMetric(metricOf(req.GetFilter()))
		if !ok {
			t.Errorf("the collector asked for an undocumented metric: %s", req.GetFilter())
			continue
		}
		if !strings.Contains(req.GetFilter(), `resource.type = "`+m.Resource.Type+`"`) {
			t.Errorf("%s: filter %q does not name its documented resource %s", m.Type, req.GetFilter(), m.Resource.Type)
		}
		refs := labelRef.FindAllStringSubmatch(req.GetFilter()+" "+strings.Join(req.GetAggregation().GetGroupByFields(), " "), -1)
		for _, ref := range refs {
			if ref[1] == "metric" && !m.HasLabel(ref[2]) {
				t.Errorf("%s: the collector uses metric label %q; %s documents %q", m.Type, ref[2], m.Source, m.Labels)
			}
			if ref[1] == "resource" && !m.Resource.HasLabel(ref[2]) {
				t.Errorf("%s: the collector uses resource label %q; %s has %q", m.Type, ref[2], m.Resource.Source, m.Resource.Labels)
			}
		}
		want := map[string]monitoringpb.Aggregation_Aligner{"GAUGE": monitoringpb.Aggregation_ALIGN_MEAN,
			"DELTA": monitoringpb.Aggregation_ALIGN_DELTA}[m.Kind]
		if got := req.GetAggregation().GetPerSeriesAligner(); got != want {
			t.Errorf("%s is a %s metric, aligned with %s; want %s", m.Type, m.Kind, got, want)
		}
	}
}

func metricOf(filter string) string {
	m := regexp.MustCompile(`metric\.type = "([^"]+)"`).FindStringSubmatch(filter)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestTheFakeServesOnlyDocumentedSeries: the fake refuses a series the
// real service cannot send for the metric, so no test passes against it.
func TestTheFakeServesOnlyDocumentedSeries(t *testing.T) {
	ok := fakemonitoring.Series(map[string]string{"priority": "high", "is_system": "false"},
		map[string]string{"location": "asia1", "instance_id": "i"}, "10^2.%")
	if err := fakemonitoring.Documented(monitoring.MetricCPUByPriority, ok); err != nil {
		t.Errorf("a documented CPU series was refused: %v", err)
	}
	otherResource := fakemonitoring.Series(map[string]string{"priority": "high"}, nil, "10^2.%")
	otherResource.Resource.Type = "spanner_database"
	for name, ts := range map[string]*monitoringpb.TimeSeries{
		"an undocumented metric label": fakemonitoring.Series(map[string]string{"region": "asia1"}, nil, "10^2.%"),
		"another resource type":        otherResource,
		"an undocumented resource label": fakemonitoring.Series(map[string]string{"priority": "high"},
			map[string]string{"region": "asia1"}, "10^2.%"),
		"another unit": fakemonitoring.Series(map[string]string{"priority": "high"}, nil, "%"),
	} {
		if err := fakemonitoring.Documented(monitoring.MetricCPUByPriority, ts); err == nil {
			t.Errorf("a CPU series with %s was accepted", name)
		}
	}
	if err := fakemonitoring.Documented("spanner.googleapis.com/instance/cpu/utilization_by_region", ok); err == nil {
		t.Error("an undocumented metric was accepted")
	}
}

// serveCPU serves, in place of serveRun's, high-priority CPU series of
// the given resource labels at constant values.
func serveCPU(fake *fakemonitoring.Server, locations []map[string]string, values ...float64) {
	var series []*monitoringpb.TimeSeries
	for i, loc := range locations {
		var ps []*monitoringpb.Point
		for _, end := range minuteEnds {
			ps = append(ps, fakemonitoring.Gauge(end, values[i]))
		}
		series = append(series, fakemonitoring.Series(map[string]string{"priority": "high"}, loc, "10^2.%", ps...))
	}
	fake.Serve(monitoring.MetricCPUByPriority, series...)
}

// TestCollectTakesTheBusiestRegionOfAMultiRegionInstance: Google
// recommends a maximum high-priority CPU per region of a multi-region
// instance; the mean over its regions would hide the busy one, so the
// result names the busiest region, and a regional instance has none.
func TestCollectTakesTheBusiestRegionOfAMultiRegionInstance(t *testing.T) {
	fake, collect, _ := startFake(t)
	serveRun(fake)
	serveCPU(fake, []map[string]string{{"location": "asia-northeast1"}, {"location": "asia-northeast2"},
		{"location": "asia-northeast3"}}, 0.30, 0.52, 0.10)
	got := collect()
	if len(got.CPU) != 3 || len(got.RegionPeak) != 1 || got.RegionPeak[0].Location != "asia-northeast2" ||
		got.RegionPeak[0].Max != 0.52 {
		t.Errorf("cpu %+v, peak %+v; want three regions and asia-northeast2's 52 %% as the peak", got.CPU, got.RegionPeak)
	}
	serveCPU(fake, []map[string]string{{"location": "asia-northeast1"}}, 0.30)
	if got := collect(); len(got.CPU) != 1 || got.RegionPeak != nil {
		t.Errorf("a regional instance: cpu %+v, peak %+v; want its one location and no peak", got.CPU, got.RegionPeak)
	}
}

// TestCollectKeepsCPUSeriesWithoutTheirLabels: a series lacking the
// location or the priority label it was grouped by is kept, under an
// empty location or priority, and the result says so instead of dropping
// its CPU.
func TestCollectKeepsCPUSeriesWithoutTheirLabels(t *testing.T) {
	fake, collect, _ := startFake(t)
	serveRun(fake)
	serveCPU(fake, []map[string]string{{"location": "asia-northeast1"}, nil}, 0.30, 0.40)
	got := collect()
	if len(got.CPU) != 2 || got.CPU[0].Location != "" || got.CPU[0].Max != 0.40 {
		t.Errorf("cpu %+v, want the unlabelled series kept under an empty location", got.CPU)
	}
	if notes := strings.Join(got.Notes, "\n"); !strings.Contains(notes, "1 CPU series lacked the priority metric label or the location resource label") {
		t.Errorf("notes %q do not say a CPU series lacked its labels", got.Notes)
	}
	// A series without its priority label is kept and said to be alike.
	var ps []*monitoringpb.Point
	for _, end := range minuteEnds {
		ps = append(ps, fakemonitoring.Gauge(end, 0.20))
	}
	fake.Serve(monitoring.MetricCPUByPriority, fakemonitoring.Series(nil, map[string]string{"location": "asia-northeast1"}, "10^2.%", ps...))
	got = collect()
	if len(got.CPU) != 1 || got.CPU[0].Priority != "" || got.CPU[0].Max != 0.20 {
		t.Errorf("cpu %+v, want the series without a priority kept under an empty priority", got.CPU)
	}
	if notes := strings.Join(got.Notes, "\n"); !strings.Contains(notes, "1 CPU series lacked the priority metric label") {
		t.Errorf("notes %q do not say a CPU series lacked its priority label", got.Notes)
	}
}
