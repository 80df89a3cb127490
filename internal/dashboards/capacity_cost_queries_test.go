package dashboards_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/collectors"
	"github.com/spanbench/spanbench/internal/dashboards"
	"github.com/spanbench/spanbench/internal/runtest"
)

// costRuns are a run priced by an override catalog (every line known but
// the runners', which the admin did not price) and one whose
// configuration has no price: the common case, every line unknown.
func costRuns() []*v1alpha1.BenchmarkRun {
	amount := func(a string) *v1alpha1.CostFigure { return &v1alpha1.CostFigure{Amount: a} }
	unknown := func(why string) *v1alpha1.CostFigure { return &v1alpha1.CostFigure{UnknownReason: why} }
	priced := runtest.Run("priced").InNamespace("bench").CloudSpanner().Succeeded(time.Unix(1700000000, 0)).Obj()
	priced.Status.Cost = &v1alpha1.RunCost{Currency: "USD", Catalog: "override", Holding: v1alpha1.CostHoldingExisting,
		Estimate: amount("0.10"), Instance: amount("0.0675"), Storage: amount("0.000012"),
		Runners: unknown("no price per vCPU-hour"), Total: amount("0.067512"), PerMillionOperations: amount("12.50")}
	why := "no price for regional-asia-northeast1"
	unpriced := runtest.Run("unpriced").InNamespace("bench").CloudSpanner().Succeeded(time.Unix(1700000000, 0)).Obj()
	unpriced.Status.Cost = &v1alpha1.RunCost{Currency: "USD", Catalog: "embedded", Holding: v1alpha1.CostHoldingEphemeral,
		Estimate: unknown(why), Instance: unknown(why), Storage: unknown(why), Runners: unknown(why), Total: unknown(why), PerMillionOperations: unknown(why)}
	return []*v1alpha1.BenchmarkRun{priced, unpriced}
}

// costSeries is what the results collector serves for costRuns.
func costSeries(t *testing.T) []string {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(scheme)
	for _, r := range costRuns() {
		b = b.WithObjects(r)
	}
	return gathered(t, &collectors.ResultsCollector{Reader: b.Build()})
}

var costVars = dashboards.Vars{"namespace": "bench", "run": "priced|unpriced", "operation": ".*", "__rate_interval": "1m", "__range": "1h", "__interval": "1m"}

// TestCostPanelsShowKnownFiguresAndNothingForUnknown evaluates the Results
// dashboard's cost queries in promtool's real PromQL engine over what the
// results collector serves for costRuns: each line of the priced run in
// its column, with its currency; the unpriced run's lines and the priced
// run's unpriced runners return no series (the table says "unknown"),
// never a zero.
func TestCostPanelsShowKnownFiguresAndNothingForUnknown(t *testing.T) {
	series := costSeries(t)
	priced := `{currency="USD", namespace="bench", run="priced"}`
	for _, c := range []struct {
		panel, column string
		want          []sample
	}{
		{"Cost per run", "estimate", []sample{{priced, 0.10}}},
		{"Cost per run", "instance", []sample{{priced, 0.0675}}},
		{"Cost per run", "storage", []sample{{priced, 0.000012}}},
		{"Cost per run", "runners", nil},
		{"Cost per run", "total", []sample{{priced, 0.067512}}},
		{"Cost per run", "per million operations", []sample{{priced, 12.50}}},
		{"Cost per million operations", "A", []sample{{priced, 12.50}}},
	} {
		t.Run(c.panel+"/"+c.column, func(t *testing.T) {
			q := panelQuery(t, "spanbench-results.json", c.panel, c.column)
			promtoolEvaluates(t, q.Expand(costVars), c.want, series)
		})
	}
}

// searchSeries is what the results collector serves for one finished
// search's status: four steps (10, 20 and 40 ops/s, 40 confirmed), the
// SLO's latency figure and its error figure, each condition's bound;
// capacity 20 ops/s on one node.
func searchSeries(t *testing.T) []string {
	t.Helper()
	run := runtest.Run("searched").InNamespace("bench").Obj()
	const p99, errs = "p99(read) <= 20ms", "errors <= 1%"
	search := &v1alpha1.SearchStatus{SLO: []string{p99, errs}, Done: true, Reason: "Resolved", Capacity: "20.0", CapacityPerNode: "20.0"}
	for _, st := range []struct {
		offered, achieved, latency, seconds string
		pass                                bool
	}{{"10.0", "10.0", "5ms", "0.005", true}, {"20.0", "19.9", "8ms", "0.008", true}, {"40.0", "33.1", "150ms", "0.15", false}, {"40.0", "32.4", "140ms", "0.14", false}} {
		search.Steps = append(search.Steps, v1alpha1.SearchStepStatus{Offered: st.offered, Achieved: st.achieved, Pass: st.pass,
			Figures: []v1alpha1.SearchFigureStatus{{Condition: p99, Value: st.latency, BaseValue: st.seconds, Pass: st.pass, Measured: true},
				{Condition: errs, Value: "0.00%", BaseValue: "0", Pass: true, Measured: true}}})
	}
	run.Status.Search = search
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return gathered(t, &collectors.ResultsCollector{Reader: fake.NewClientBuilder().WithScheme(scheme).WithObjects(run).Build()})
}

// TestCapacityPanelsDrawTheCurveFromTheStepSeries evaluates the capacity
// row's queries in promtool's PromQL engine over what the results
// collector serves for a search (searchSeries): the
// capacity and capacity per node; the curve's three queries, which the
// panel merges by their labels, return for each step of the latency
// condition (and not of the error condition) the step's achieved rate,
// the condition's figure and its bound, on the same labels; the step
// table each step's offered and achieved rates and verdict.
func TestCapacityPanelsDrawTheCurveFromTheStepSeries(t *testing.T) {
	series := searchSeries(t)
	vars := dashboards.Vars{"namespace": "bench", "run": "searched", "operation": ".*", "__rate_interval": "1m", "__range": "1h", "__interval": "1m"}
	run := `namespace="bench", run="searched"`
	step := func(i int, more ...string) string {
		return "{" + strings.Join(append([]string{run, fmt.Sprintf("step=%q", fmt.Sprint(i))}, more...), ", ") + "}"
	}
	onP99 := `condition="p99(read) <= 20ms"`
	for _, c := range []struct {
		panel, column string
		want          []sample
	}{
		{"Capacity", "A", []sample{{"{" + run + "}", 20}}},
		{"Capacity per node", "A", []sample{{"{" + run + "}", 20}}},
		{"Latency against throughput (capacity search)", "A", []sample{{step(1, onP99), 10}, {step(2, onP99), 19.9}, {step(3, onP99), 33.1}, {step(4, onP99), 32.4}}},
		{"Latency against throughput (capacity search)", "B", []sample{{step(1, onP99), 0.005}, {step(2, onP99), 0.008}, {step(3, onP99), 0.150}, {step(4, onP99), 0.140}}},
		{"Latency against throughput (capacity search)", "C", []sample{{step(1, onP99), 0.02}, {step(2, onP99), 0.02}, {step(3, onP99), 0.02}, {step(4, onP99), 0.02}}},
		{"Search steps", "offered", []sample{{step(1), 10}, {step(2), 20}, {step(3), 40}, {step(4), 40}}},
		{"Search steps", "achieved", []sample{{step(1), 10}, {step(2), 19.9}, {step(3), 33.1}, {step(4), 32.4}}},
		{"Search steps", "passed", []sample{{step(1), 1}, {step(2), 1}, {step(3), 0}, {step(4), 0}}},
	} {
		t.Run(c.panel+"/"+c.column, func(t *testing.T) {
			q := panelQuery(t, "spanbench-results.json", c.panel, c.column)
			promtoolEvaluates(t, q.Expand(vars), c.want, series)
		})
	}
}

// TestCapacitySeriesAreDocumented: every capacity search series a panel
// reads is named in docs/capacity.md, the contract the manager's collector
// serves them by.
func TestCapacitySeriesAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/capacity.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"spanbench_run_capacity_ops_per_second", "spanbench_run_capacity_per_node_ops_per_second",
		"spanbench_run_search_step_offered_ops", "spanbench_run_search_step_achieved_ops", "spanbench_run_search_step_passed",
		"spanbench_run_search_step_figure", "spanbench_run_search_slo_bound"} {
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("docs/capacity.md does not document %s, which the Results dashboard reads", name)
		}
	}
}
