package collectors_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/collectors"
)

// TestComparisonValuesAreServedInBaseUnits: a comparison row's value is
// served in Prometheus' base units: a latency's µs as seconds, a
// percentage as a ratio, and what has no such unit — a capacity in
// operations or rows per second, a cost in its currency — as the status
// has it (a cost per million operations of 12.50 is 12.5, not 1.25e-05).
func TestComparisonValuesAreServedInBaseUnits(t *testing.T) {
	row := func(op string, s v1alpha1.CampaignStatistic, value string) v1alpha1.ComparisonRow {
		return v1alpha1.ComparisonRow{Variant: "v", Metric: op, Operation: op, Statistic: s, Baseline: value, Value: value, Ratio: "1.000", Verdict: v1alpha1.VerdictNeutral}
	}
	c := &v1alpha1.BenchmarkCampaign{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "bench"}}
	c.Status.Comparison = &v1alpha1.ComparisonStatus{Iteration: "c-1", Baseline: "b", Rows: []v1alpha1.ComparisonRow{
		row("read", v1alpha1.StatisticP99, "2000"),
		row("read", v1alpha1.StatisticErrorRate, "1.5"),
		row("search", v1alpha1.StatisticCapacity, "320"),
		row("search", v1alpha1.StatisticCapacityRowsPerNode, "32000"),
		row("overall", v1alpha1.StatisticCostPerMillionOps, "12.50"),
	}}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(c).Build()
	want := `
# HELP spanbench_campaign_comparison_value The variant's value of the statistic, in the units of spanbench_campaign_comparison_baseline.
# TYPE spanbench_campaign_comparison_value gauge
spanbench_campaign_comparison_value{campaign="c",namespace="bench",operation="overall",statistic="CostPerMillionOps",variant="v"} 12.5
spanbench_campaign_comparison_value{campaign="c",namespace="bench",operation="read",statistic="ErrorRate",variant="v"} 0.015
spanbench_campaign_comparison_value{campaign="c",namespace="bench",operation="read",statistic="P99",variant="v"} 0.002
spanbench_campaign_comparison_value{campaign="c",namespace="bench",operation="search",statistic="Capacity",variant="v"} 320
spanbench_campaign_comparison_value{campaign="c",namespace="bench",operation="search",statistic="CapacityRowsPerNode",variant="v"} 32000
`
	if err := testutil.CollectAndCompare(&collectors.CampaignCollector{Reader: reader}, strings.NewReader(want), "spanbench_campaign_comparison_value"); err != nil {
		t.Error(err)
	}
}
