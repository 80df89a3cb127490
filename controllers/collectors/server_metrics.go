package collectors

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/runreport"
)

// The results collector serves a run's Cloud Monitoring figures, once
// read, beside its client figures. Their labels are bounded: priority
// (high, medium, low) and location (the config's regions), method (the
// Spanner API's), status (gRPC codes), each list capped at
// v1alpha1.MaxServerMetricsItems entries a run, as the status is.
var (
	descMonCPU = prometheus.NewDesc("spanbench_run_server_cpu_utilization_ratio",
		"Spanner instance CPU utilization of a finished run's measured minutes, from Cloud Monitoring, as a fraction of the region's capacity: stat=mean or max of the minute means.",
		append(runLabels, "priority", "location", "stat"), nil)
	descMonLatency = prometheus.NewDesc("spanbench_run_server_request_latency_seconds",
		"Spanner server latency of a finished run's measured minutes per API method, from Cloud Monitoring's distribution (quantile=0.5 or 0.99).",
		append(runLabels, "method", "quantile"), nil)
	descMonRequests = prometheus.NewDesc("spanbench_run_server_requests",
		"Spanner API requests of a finished run's measured minutes per gRPC status, from Cloud Monitoring.",
		append(runLabels, "status"), nil)
	descMonWarmUp = prometheus.NewDesc("spanbench_run_warmup_ended_by",
		"The signal that ended a finished run's warm-up, Client or Server (the server's request rate and p99 settled later); always 1.",
		append(runLabels, "signal"), nil)
)

// serverMetricsDescs are the series' descriptions, for Describe.
var serverMetricsDescs = []*prometheus.Desc{descMonCPU, descMonLatency, descMonRequests, descMonWarmUp}

// collectServerMetricsSeries serves run's Cloud Monitoring figures.
func collectServerMetricsSeries(ch chan<- prometheus.Metric, run *v1alpha1.BenchmarkRun) {
	s := run.Status.ServerMetrics
	if s == nil {
		return
	}
	ns, name := run.Namespace, run.Name
	seen := map[string]bool{} // a label set served twice fails the whole scrape
	once := func(key ...string) bool {
		k := strings.Join(key, "\x00")
		if seen[k] {
			return false
		}
		seen[k] = true
		return true
	}
	for _, c := range capped(s.CPU) {
		if !once("cpu", c.Priority, c.Location) {
			continue
		}
		send(ch, descMonCPU, runreport.PercentRatio(c.MeanPercent), ns, name, c.Priority, c.Location, "mean")
		send(ch, descMonCPU, runreport.PercentRatio(c.MaxPercent), ns, name, c.Priority, c.Location, "max")
	}
	for _, l := range capped(s.Latency) {
		if !once("latency", l.Method) {
			continue
		}
		sendDuration(ch, descMonLatency, l.P50, ns, name, l.Method, "0.5")
		sendDuration(ch, descMonLatency, l.P99, ns, name, l.Method, "0.99")
	}
	for _, q := range capped(s.Requests) {
		if !once("requests", q.Status) {
			continue
		}
		send(ch, descMonRequests, float64(q.Count), ns, name, q.Status)
	}
	if w := s.WarmUp; w != nil && w.EndedBy != "" {
		send(ch, descMonWarmUp, 1, ns, name, string(w.EndedBy))
	}
}

// capped keeps at most v1alpha1.MaxServerMetricsItems entries: the CRD bounds the
// lists, this bounds the series should a status come from elsewhere.
func capped[T any](xs []T) []T {
	return xs[:min(len(xs), v1alpha1.MaxServerMetricsItems)]
}
