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

// TestResultsCollectorServesEachStream: a streams run's status.streams
// comes out as spanbench_run_stream_* series with a stream label, per
// operation and overall, and a batch's wall time; the run's own series
// keep no stream label, and a run without streams has no stream series.
func TestResultsCollectorServesEachStream(t *testing.T) {
	at := time.Unix(1700000000, 0)
	run := runtest.Run("streams").InNamespace("bench").Succeeded(at).Obj()
	run.Status.Overall = &v1alpha1.ResultFigures{Count: 660, Throughput: "165.0"}
	ms := func(n int) *metav1.Duration { return &metav1.Duration{Duration: time.Duration(n) * time.Millisecond} }
	run.Status.Streams = []v1alpha1.StreamResult{
		{Name: "batch", WallTime: ms(1500),
			Operations: []v1alpha1.StreamOperationResult{{Name: "update", ResultFigures: v1alpha1.ResultFigures{Count: 60, Throughput: "20.0",
				ErrorsByCode: map[string]int64{"Aborted": 2}}}},
			Overall: &v1alpha1.ResultFigures{Count: 60, Throughput: "20.0"}},
		{Name: "online",
			Operations: []v1alpha1.StreamOperationResult{{Name: "read", ResultFigures: v1alpha1.ResultFigures{Count: 600, Throughput: "150.0",
				Latency: &v1alpha1.LatencySummary{P99: ms(2)}}}},
			Overall: &v1alpha1.ResultFigures{Count: 600, Throughput: "150.0"}},
	}
	plain := runtest.Run("plain").InNamespace("bench").Succeeded(at).Obj()
	plain.Status.Overall = &v1alpha1.ResultFigures{Count: 1, Throughput: "1.0"}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(run, plain).Build()
	want := `
# HELP spanbench_run_stream_errors Failed operations of one stream of a finished streams run, by gRPC code.
# TYPE spanbench_run_stream_errors gauge
spanbench_run_stream_errors{code="Aborted",namespace="bench",operation="update",run="streams",stream="batch"} 2
# HELP spanbench_run_stream_latency_seconds Latency quantiles of one stream of a finished streams run, per operation (operation=overall for the stream's), from merged HDR histograms (quantile=max is the maximum).
# TYPE spanbench_run_stream_latency_seconds gauge
spanbench_run_stream_latency_seconds{namespace="bench",operation="read",quantile="0.99",run="streams",stream="online"} 0.002
# HELP spanbench_run_stream_throughput_ops Successful operations per second of one stream of a finished streams run, after the stream's warm-up, over its own window.
# TYPE spanbench_run_stream_throughput_ops gauge
spanbench_run_stream_throughput_ops{namespace="bench",operation="overall",run="streams",stream="batch"} 20
spanbench_run_stream_throughput_ops{namespace="bench",operation="overall",run="streams",stream="online"} 150
spanbench_run_stream_throughput_ops{namespace="bench",operation="read",run="streams",stream="online"} 150
spanbench_run_stream_throughput_ops{namespace="bench",operation="update",run="streams",stream="batch"} 20
# HELP spanbench_run_stream_wall_time_seconds A batch stream's wall time: from its earliest runner's first send to its latest runner's last return; absent when its window cut it short.
# TYPE spanbench_run_stream_wall_time_seconds gauge
spanbench_run_stream_wall_time_seconds{namespace="bench",run="streams",stream="batch"} 1.5
# HELP spanbench_run_throughput_ops Successful operations per second of a finished run, after the warm-up.
# TYPE spanbench_run_throughput_ops gauge
spanbench_run_throughput_ops{namespace="bench",operation="overall",run="plain"} 1
spanbench_run_throughput_ops{namespace="bench",operation="overall",run="streams"} 165
`
	if err := testutil.CollectAndCompare(&collectors.ResultsCollector{Reader: reader}, strings.NewReader(want),
		"spanbench_run_stream_errors", "spanbench_run_stream_latency_seconds", "spanbench_run_stream_throughput_ops",
		"spanbench_run_stream_wall_time_seconds", "spanbench_run_throughput_ops"); err != nil {
		t.Errorf("the streams run's series:\n%v", err)
	}
}
