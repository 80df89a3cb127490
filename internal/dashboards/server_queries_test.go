package dashboards_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers"
	"github.com/spanbench/spanbench/internal/dashboards"
	"github.com/spanbench/spanbench/internal/runtest"
)

// serverRun is a finished Cloud Spanner run whose status has Spanner's
// statistics of its read (the seed's 564 µs over 4 splits) and Cloud
// Monitoring's figures (high-priority CPU, ExecuteSql latency, a warm-up
// the server ended).
func serverRun() *v1alpha1.BenchmarkRun {
	run := runtest.Run("served").InNamespace("bench").CloudSpanner().Succeeded(time.Unix(1700000000, 0)).Obj()
	run.Status.Overall = &v1alpha1.ResultFigures{Count: 4000}
	run.Status.Operations = []v1alpha1.OperationResult{{Name: "read", ResultFigures: v1alpha1.ResultFigures{Count: 4000},
		Server: &v1alpha1.ServerOperationFigures{Coverage: "1.000", ExecutionsPerOperation: "4.00",
			CPUPerOperation: &metav1.Duration{Duration: 564 * time.Microsecond}},
		GFELatency: &v1alpha1.GFELatency{Count: 4000, P50: &metav1.Duration{Duration: 2 * time.Millisecond}, P99: &metav1.Duration{Duration: 6 * time.Millisecond}}}}
	settled := true
	run.Status.ServerMetrics = &v1alpha1.ServerMetricsStatus{
		CPU:     []v1alpha1.ServerCPU{{Priority: "high", Location: "asia-northeast1", MeanPercent: "42.3", MaxPercent: "50.0"}},
		Latency: []v1alpha1.ServerMethodLatency{{Method: "ExecuteSql", Count: 300, P50: &metav1.Duration{Duration: 3 * time.Millisecond}, P99: &metav1.Duration{Duration: 7 * time.Millisecond}}},
		WarmUp:  &v1alpha1.ServerWarmUp{Settled: &settled, EndedBy: v1alpha1.WarmUpSignalServer},
	}
	return run
}

// TestServerPanelQueriesReturnSeries runs every query of the Results
// dashboard that reads a server series, its variables filled in, in
// promtool's real PromQL engine over what the results collector serves
// for serverRun: each must return a series.
func TestServerPanelQueriesReturnSeries(t *testing.T) {
	vars := dashboards.Vars{"namespace": "bench", "run": "served|missed", "operation": ".*", "__rate_interval": "1m", "__range": "1h", "__interval": "1m"}
	promtool, rules, where := panelAlerts(t, vars, func(q dashboards.PanelQuery) bool {
		return q.Dashboard == "spanbench-results" && (strings.Contains(q.Expr, "spanbench_run_server_") ||
			strings.Contains(q.Expr, "spanbench_run_warmup_ended_by") || strings.Contains(q.Expr, "spanbench_run_gfe_"))
	})
	if len(rules) < 10 {
		t.Fatalf("%d server queries on the Results dashboard; want its server CPU/op, executions/op, coverage, not captured, GFE p99, CPU by priority, latency and warm-up signal panels' (10)", len(rules))
	}
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	notCaptured := serverRun()
	notCaptured.Name, notCaptured.Status.ServerMetrics = "missed", nil
	notCaptured.Status.Operations[0].Server = &v1alpha1.ServerOperationFigures{NotCaptured: true}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(serverRun(), notCaptured).Build()
	promtoolFires(t, promtool, rules, where, gathered(t, &controllers.ResultsCollector{Reader: reader}), "a server panel's query")
}
