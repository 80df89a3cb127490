package collectors_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/collectors"
	"github.com/spanbench/spanbench/internal/runtest"
)

// TestResultsCollectorServesCloudMonitoringFigures: a finished run's
// status.serverMetrics comes out as CPU by priority and region (as a
// fraction), latency per method, requests per status and the signal that
// ended the warm-up; an entry repeated in the status is served once, so
// the scrape does not fail.
func TestResultsCollectorServesCloudMonitoringFigures(t *testing.T) {
	at := time.Unix(1700000000, 0)
	run := runtest.Run("mon").InNamespace("bench").CloudSpanner().Succeeded(at).Obj()
	run.Status.Overall = &v1alpha1.ResultFigures{Count: 1}
	settled := true
	cpu := v1alpha1.ServerCPU{Priority: "high", Location: "asia-northeast1", MeanPercent: "42.3", MaxPercent: "50.0"}
	run.Status.ServerMetrics = &v1alpha1.ServerMetricsStatus{
		CPU:      []v1alpha1.ServerCPU{cpu, cpu},
		Latency:  []v1alpha1.ServerMethodLatency{{Method: "Commit", Count: 300, P50: &metav1.Duration{Duration: 3 * time.Millisecond}, P99: &metav1.Duration{Duration: 12500 * time.Microsecond}}},
		Requests: []v1alpha1.ServerRequestCount{{Status: "OK", Count: 3000}, {Status: "ABORTED", Count: 4}},
		WarmUp:   &v1alpha1.ServerWarmUp{Settled: &settled, EndedBy: v1alpha1.WarmUpSignalServer},
	}
	quiet := runtest.Run("quiet").InNamespace("bench").Succeeded(at).Obj()
	quiet.Status.Overall = &v1alpha1.ResultFigures{Count: 1}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(run, quiet).Build()
	want := `
# HELP spanbench_run_server_cpu_utilization_ratio Spanner instance CPU utilization of a finished run's measured minutes, from Cloud Monitoring, as a fraction of the region's capacity: stat=mean or max of the minute means.
# TYPE spanbench_run_server_cpu_utilization_ratio gauge
spanbench_run_server_cpu_utilization_ratio{location="asia-northeast1",namespace="bench",priority="high",run="mon",stat="max"} 0.5
spanbench_run_server_cpu_utilization_ratio{location="asia-northeast1",namespace="bench",priority="high",run="mon",stat="mean"} 0.423
# HELP spanbench_run_server_request_latency_seconds Spanner server latency of a finished run's measured minutes per API method, from Cloud Monitoring's distribution (quantile=0.5 or 0.99).
# TYPE spanbench_run_server_request_latency_seconds gauge
spanbench_run_server_request_latency_seconds{method="Commit",namespace="bench",quantile="0.5",run="mon"} 0.003
spanbench_run_server_request_latency_seconds{method="Commit",namespace="bench",quantile="0.99",run="mon"} 0.0125
# HELP spanbench_run_server_requests Spanner API requests of a finished run's measured minutes per gRPC status, from Cloud Monitoring.
# TYPE spanbench_run_server_requests gauge
spanbench_run_server_requests{namespace="bench",run="mon",status="ABORTED"} 4
spanbench_run_server_requests{namespace="bench",run="mon",status="OK"} 3000
# HELP spanbench_run_warmup_ended_by The signal that ended a finished run's warm-up, Client or Server (the server's request rate and p99 settled later); always 1.
# TYPE spanbench_run_warmup_ended_by gauge
spanbench_run_warmup_ended_by{namespace="bench",run="mon",signal="Server"} 1
`
	if err := testutil.CollectAndCompare(&collectors.ResultsCollector{Reader: reader}, strings.NewReader(want),
		"spanbench_run_server_cpu_utilization_ratio", "spanbench_run_server_request_latency_seconds",
		"spanbench_run_server_requests", "spanbench_run_warmup_ended_by"); err != nil {
		t.Errorf("the Cloud Monitoring series:\n%v", err)
	}
}
