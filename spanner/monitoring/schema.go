package monitoring

import "slices"

// MetricSchema is one Cloud Monitoring metric the collector reads, as
// Google's Spanner metrics page documents it.
type MetricSchema struct {
	// Type is the metric type.
	Type string
	// Kind is GAUGE or DELTA; ValueType DOUBLE, INT64 or DISTRIBUTION;
	// Unit the values' unit.
	Kind, ValueType, Unit string
	// Labels are the metric's labels.
	Labels []string
	// Resource is the monitored resource its series belong to.
	Resource ResourceSchema
	// Source is the page it was taken from.
	Source string
}

// ResourceSchema is a monitored resource type and its labels.
type ResourceSchema struct {
	Type   string
	Labels []string
	// Source is the page its labels were taken from.
	Source string
}

// HasLabel reports whether the metric documents label.
func (m MetricSchema) HasLabel(label string) bool { return slices.Contains(m.Labels, label) }

// HasLabel reports whether the resource documents label.
func (r ResourceSchema) HasLabel(label string) bool { return slices.Contains(r.Labels, label) }

// MetricsSource is Google's list of Spanner's Cloud Monitoring metrics
// (read in May 2026).
const MetricsSource = "https://cloud.google.com/spanner/docs/metrics"

// SpannerInstance is the monitored resource of every metric read. Its
// labels are those of Cloud Monitoring's resource list; that page was not
// among the stored copies when this table was written, so location (the
// one label the collector groups by) is taken from the collector's
// earlier use and Google's CPU page, which recommends a maximum CPU "per
// region" of a multi-region instance, rather than re-read there. A series
// without it is reported, not dropped (Result.Notes).
var SpannerInstance = ResourceSchema{Type: "spanner_instance",
	Labels: []string{"project_id", "instance_id", "location", "instance_config"},
	Source: "https://cloud.google.com/monitoring/api/resources#tag_spanner_instance"}

// The metrics read, as MetricsSource documents them.
var (
	// CPUByPriority is instance/cpu/utilization_by_priority: the share of
	// the provisioned CPU (0.65 is 65 %) by database, by user or system
	// task (is_system) and by priority ("high", "medium", "low").
	CPUByPriority = MetricSchema{Type: MetricCPUByPriority, Kind: "GAUGE", ValueType: "DOUBLE", Unit: "10^2.%",
		Labels: []string{"database", "is_system", "priority"}, Resource: SpannerInstance, Source: MetricsSource}
	// RequestLatencies is api/request_latencies: the server's latency per
	// database and API method, a distribution in seconds.
	RequestLatencies = MetricSchema{Type: MetricRequestLatency, Kind: "DELTA", ValueType: "DISTRIBUTION", Unit: "s",
		Labels: []string{"database", "method"}, Resource: SpannerInstance, Source: MetricsSource}
	// APIRequestCount is api/api_request_count: API requests per
	// database, status and method.
	APIRequestCount = MetricSchema{Type: MetricAPIRequestCount, Kind: "DELTA", ValueType: "INT64", Unit: "1",
		Labels: []string{"database", "status", "method"}, Resource: SpannerInstance, Source: MetricsSource}
)

// DocumentedMetrics are the metrics the collector reads.
func DocumentedMetrics() []MetricSchema {
	return []MetricSchema{CPUByPriority, RequestLatencies, APIRequestCount}
}

// DocumentedMetric is the documented metric of type metricType.
func DocumentedMetric(metricType string) (MetricSchema, bool) {
	i := slices.IndexFunc(DocumentedMetrics(), func(m MetricSchema) bool { return m.Type == metricType })
	if i < 0 {
		return MetricSchema{}, false
	}
	return DocumentedMetrics()[i], true
}

// The labels the collector groups by and reads.
const (
	labelPriority = "priority"
	labelDatabase = "database"
	labelMethod   = "method"
	labelStatus   = "status"
	labelLocation = "location"
)
