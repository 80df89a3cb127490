package collectors_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/collectors"
	"github.com/spanbench/spanbench/internal/runtest"
)

// TestResultsCollectorServesTheCapacity: a search that ended has its
// capacity (and capacity per node, where known) as series labelled with
// its reason; one still running, and one whose first rate failed (no
// capacity), have none: a missing capacity is never plotted as 0.
func TestResultsCollectorServesTheCapacity(t *testing.T) {
	resolved := runtest.Run("resolved").InNamespace("bench").Obj()
	resolved.Status.Search = &v1alpha1.SearchStatus{Reason: "Resolved", Done: true, Capacity: "24.0", CapacityPerNode: "24.0", FirstFailing: "32.0"}
	atLeast := runtest.Run("at-least").InNamespace("bench").Obj()
	atLeast.Status.Search = &v1alpha1.SearchStatus{Reason: "ReachedMax", Done: true, Capacity: "128.0"}
	running := runtest.Run("running").InNamespace("bench").Obj()
	running.Status.Search = &v1alpha1.SearchStatus{Steps: []v1alpha1.SearchStepStatus{{Offered: "2.0", Pass: true}}}
	below := runtest.Run("below").InNamespace("bench").Obj()
	below.Status.Search = &v1alpha1.SearchStatus{Reason: "BelowFrom", Done: true, FirstFailing: "2.0"}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(resolved, atLeast, running, below).Build()
	want := `
# HELP spanbench_run_capacity_ops_per_second A capacity search's capacity: the highest offered rate, all runners together, whose step met the SLO, in operations per second; reason says why the search ended (ReachedMax: a lower bound).
# TYPE spanbench_run_capacity_ops_per_second gauge
spanbench_run_capacity_ops_per_second{namespace="bench",reason="ReachedMax",run="at-least"} 128
spanbench_run_capacity_ops_per_second{namespace="bench",reason="Resolved",run="resolved"} 24
# HELP spanbench_run_capacity_per_node_ops_per_second A capacity search's capacity per 1,000 processing units (one node), in operations per second; absent when the instance's size is not known.
# TYPE spanbench_run_capacity_per_node_ops_per_second gauge
spanbench_run_capacity_per_node_ops_per_second{namespace="bench",reason="Resolved",run="resolved"} 24
`
	if err := testutil.CollectAndCompare(&collectors.ResultsCollector{Reader: reader}, strings.NewReader(want),
		"spanbench_run_capacity_ops_per_second", "spanbench_run_capacity_per_node_ops_per_second"); err != nil {
		t.Error(err)
	}
}

// TestResultsCollectorServesTheSearchSteps: a search's judged steps and its
// SLO's bounds, as docs/capacity.md's contract names them and the Results
// dashboard's curve reads them, in the figures' units (seconds, ratios),
// while the search runs; a figure is its baseValue, unrounded (an error
// ratio of 0.001 %, "0.00%" as text, is 1e-05, not 0); a figure not
// measured (CPU on the emulator) or a note in a figure's place has no
// series.
func TestResultsCollectorServesTheSearchSteps(t *testing.T) {
	run := runtest.Run("searching").InNamespace("bench").Obj()
	run.Status.Search = &v1alpha1.SearchStatus{
		SLO: []string{"p99(read) <= 20ms", "errors <= 1%", "cpu <= 65%"},
		Steps: []v1alpha1.SearchStepStatus{
			{Offered: "10.0", Achieved: "9.9", Pass: true, Figures: []v1alpha1.SearchFigureStatus{
				{Condition: "p99(read) <= 20ms", Value: "5.25ms", BaseValue: "0.00525", Pass: true, Measured: true},
				{Condition: "errors <= 1%", Value: "0.00%", BaseValue: "0.00001", Pass: true, Measured: true},
				{Condition: "cpu <= 65%", Note: "not reported by the target", Measured: false}}},
			{Offered: "20.0", Achieved: "12.5", Figures: []v1alpha1.SearchFigureStatus{
				{Condition: "p99(read) <= 20ms", Value: "150ms", BaseValue: "0.15", Measured: true},
				{Condition: "errors <= 1%", Note: "no completed operation", Measured: true}}},
		}}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(run).Build()
	got, err := testutil.CollectAndFormat(&collectors.ResultsCollector{Reader: reader}, expfmt.TypeTextPlain,
		"spanbench_run_search_step_offered_ops", "spanbench_run_search_step_achieved_ops", "spanbench_run_search_step_passed",
		"spanbench_run_search_step_figure", "spanbench_run_search_slo_bound")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		`spanbench_run_search_step_offered_ops{namespace="bench",run="searching",step="1"} 10`,
		`spanbench_run_search_step_offered_ops{namespace="bench",run="searching",step="2"} 20`,
		`spanbench_run_search_step_achieved_ops{namespace="bench",run="searching",step="2"} 12.5`,
		`spanbench_run_search_step_passed{namespace="bench",run="searching",step="1"} 1`,
		`spanbench_run_search_step_passed{namespace="bench",run="searching",step="2"} 0`,
		`spanbench_run_search_step_figure{condition="p99(read) <= 20ms",namespace="bench",run="searching",step="1"} 0.00525`,
		`spanbench_run_search_step_figure{condition="p99(read) <= 20ms",namespace="bench",run="searching",step="2"} 0.15`,
		`spanbench_run_search_step_figure{condition="errors <= 1%",namespace="bench",run="searching",step="1"} 1e-05`,
		`spanbench_run_search_slo_bound{condition="p99(read) <= 20ms",namespace="bench",run="searching"} 0.02`,
		`spanbench_run_search_slo_bound{condition="errors <= 1%",namespace="bench",run="searching"} 0.01`,
		`spanbench_run_search_slo_bound{condition="cpu <= 65%",namespace="bench",run="searching"} 0.65`,
	} {
		if !strings.Contains(string(got), line+"\n") {
			t.Errorf("missing %s in:\n%s", line, got)
		}
	}
	if n := strings.Count(string(got), "spanbench_run_search_step_figure{"); n != 3 {
		t.Errorf("%d step figures, want 3: a figure not measured, or a note, has no series:\n%s", n, got)
	}
}
