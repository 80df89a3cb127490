package collectors_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/collectors"
	"github.com/spanbench/spanbench/internal/runtest"
)

// TestResultsCollectorServesTheCost: a run's estimate is served while it
// runs, its lines and cost per million operations once it ended; an
// unknown figure has no series (never a 0).
func TestResultsCollectorServesTheCost(t *testing.T) {
	running := runtest.Run("running").InNamespace("bench").Obj()
	running.Status.Cost = &v1alpha1.RunCost{Currency: "USD", Estimate: &v1alpha1.CostFigure{Amount: "2.50"}}
	done := runtest.Run("done").InNamespace("bench").Succeeded(time.Unix(1700000000, 0)).Obj()
	done.Status.Cost = &v1alpha1.RunCost{Currency: "USD", Estimate: &v1alpha1.CostFigure{Amount: "2.50"},
		Instance: &v1alpha1.CostFigure{Amount: "1.116667"}, Storage: &v1alpha1.CostFigure{Amount: "0.00"},
		Runners: &v1alpha1.CostFigure{UnknownReason: "no runner vCPU-hour price"}, Total: &v1alpha1.CostFigure{Amount: "1.116667"},
		PerMillionOperations: &v1alpha1.CostFigure{Amount: "0.277778"}}
	unpriced := runtest.Run("unpriced").InNamespace("bench").Obj()
	unpriced.Status.Cost = &v1alpha1.RunCost{Currency: "USD", Estimate: &v1alpha1.CostFigure{UnknownReason: "no price for asia1"}}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(running, done, unpriced).Build()
	want := `
# HELP spanbench_run_cost A run's cost in Cloud Spanner prices, in the currency label's units: line=estimate before anything was created, instance, storage, runners and total once the run ended; absent when unknown.
# TYPE spanbench_run_cost gauge
spanbench_run_cost{currency="USD",line="estimate",namespace="bench",run="done"} 2.5
spanbench_run_cost{currency="USD",line="estimate",namespace="bench",run="running"} 2.5
spanbench_run_cost{currency="USD",line="instance",namespace="bench",run="done"} 1.116667
spanbench_run_cost{currency="USD",line="storage",namespace="bench",run="done"} 0
spanbench_run_cost{currency="USD",line="total",namespace="bench",run="done"} 1.116667
# HELP spanbench_run_cost_per_million_operations The measured window's share of a finished run's cost per million operations measured, in the currency label's units; absent when unknown.
# TYPE spanbench_run_cost_per_million_operations gauge
spanbench_run_cost_per_million_operations{currency="USD",namespace="bench",run="done"} 0.277778
`
	if err := testutil.CollectAndCompare(&collectors.ResultsCollector{Reader: reader}, strings.NewReader(want),
		"spanbench_run_cost", "spanbench_run_cost_per_million_operations"); err != nil {
		t.Error(err)
	}
}
