package collectors

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
)

// TestGFELatencySeriesAreServedOnlyWhenAvailable: the results collector
// serves an operation's GFE p50 and p99 in seconds, and nothing for an
// operation without them.
func TestGFELatencySeriesAreServedOnlyWhenAvailable(t *testing.T) {
	run := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "ladder", Namespace: "bench"}}
	run.Status.Overall = &v1alpha1.ResultFigures{}
	run.Status.Operations = []v1alpha1.OperationResult{
		{Name: "read", GFELatency: &v1alpha1.GFELatency{Count: 9, P50: &metav1.Duration{Duration: 4200 * time.Microsecond},
			P99: &metav1.Duration{Duration: 9100 * time.Microsecond}}},
		{Name: "update", GFELatency: &v1alpha1.GFELatency{NotAvailable: result.GFEUnavailable}},
	}
	want := `
# HELP spanbench_run_gfe_latency_seconds GFE latency quantiles of a finished run's operations (the server-timing header of Cloud Spanner's responses, summed over an operation's RPCs), from merged HDR histograms; absent when not available (the emulator).
# TYPE spanbench_run_gfe_latency_seconds gauge
spanbench_run_gfe_latency_seconds{namespace="bench",operation="read",quantile="0.5",run="ladder"} 0.0042
spanbench_run_gfe_latency_seconds{namespace="bench",operation="read",quantile="0.99",run="ladder"} 0.0091
`
	if err := testutil.CollectAndCompare(runCollector{run}, strings.NewReader(want), "spanbench_run_gfe_latency_seconds"); err != nil {
		t.Errorf("GFE latency series:\n%v", err)
	}
}

// runCollector serves one run's result series as ResultsCollector does.
type runCollector struct{ run *v1alpha1.BenchmarkRun }

func (c runCollector) Describe(ch chan<- *prometheus.Desc) { (&ResultsCollector{}).Describe(ch) }
func (c runCollector) Collect(ch chan<- prometheus.Metric) { collectRun(ch, c.run) }
