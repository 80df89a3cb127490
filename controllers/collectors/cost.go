package collectors

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// The results collector serves a run's cost (status.cost, docs/cost.md):
// its estimate from the moment it is made, its lines once the run ended.
// An unknown figure has no series: a missing price is never plotted as 0.
var (
	descCost = prometheus.NewDesc("spanbench_run_cost",
		"A run's cost in Cloud Spanner prices, in the currency label's units: line=estimate before anything was created, instance, storage, runners and total once the run ended; absent when unknown.",
		append(runLabels, "line", "currency"), nil)
	descCostPerMillion = prometheus.NewDesc("spanbench_run_cost_per_million_operations",
		"The measured window's share of a finished run's cost per million operations measured, in the currency label's units; absent when unknown.",
		append(runLabels, "currency"), nil)
)

// costDescs are the series' descriptions, for Describe.
var costDescs = []*prometheus.Desc{descCost, descCostPerMillion}

// collectCost serves run's cost figures, in any phase.
func collectCost(ch chan<- prometheus.Metric, run *v1alpha1.BenchmarkRun) {
	c := run.Status.Cost
	if c == nil {
		return
	}
	for _, line := range []struct {
		name string
		fig  *v1alpha1.CostFigure
	}{{"estimate", c.Estimate}, {"instance", c.Instance}, {"storage", c.Storage}, {"runners", c.Runners}, {"total", c.Total}} {
		if line.fig != nil {
			sendDecimal(ch, descCost, line.fig.Amount, run.Namespace, run.Name, line.name, c.Currency)
		}
	}
	if f := c.PerMillionOperations; f != nil {
		sendDecimal(ch, descCostPerMillion, f.Amount, run.Namespace, run.Name, c.Currency)
	}
}
