package collectors_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
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
