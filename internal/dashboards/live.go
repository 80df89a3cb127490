package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// runMatch selects the chosen run's series; with opMatch, its chosen
// operations.
const (
	runMatch = `namespace=~"$namespace", run=~"$run"`
	opMatch  = runMatch + `, operation=~"$operation"`
)

// liveQuantiles are the latency quantiles the live dashboard plots.
var liveQuantiles = []struct{ q, name string }{{"0.5", "p50"}, {"0.99", "p99"}, {"0.999", "p99.9"}}

// liveRun is the dashboard to watch a run while its runners send load, from
// the runner pods' live series (and the manager's dataset progress).
func liveRun() *dashboard.DashboardBuilder {
	b := base("spanbench-live-run", "spanbench / Live run",
		"A BenchmarkRun while it runs: rate, latency from the summed histograms of all runner pods, errors, saturation of the load generator, dataset load. The exact figures are on the Results dashboard once the run ends.").
		Time("now-30m", "now").
		Refresh("10s").
		WithVariable(namespaceVariable(runSeries(""))).
		WithVariable(labelVariable("run", "run", "The BenchmarkRun.", runSeries(`namespace=~"$namespace"`), false)).
		WithVariable(labelVariable("operation", "operation", "Operations of the run's workload.", `spanbench_operations_total{`+runMatch+`}`, true))
	return withRows(b, []row{
		{"Rate", ratePanels()},
		{"Latency (live, from Prometheus buckets)", latencyPanels()},
		{"Errors and load-generator saturation", saturationPanels()},
		{"Dataset", datasetPanels()},
	})
}

func ratePanels() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{
		timeSeries(panel{
			title:       "Achieved vs target rate",
			description: "Operations finished per second by all runner pods (any outcome), against the sum of the runners' target rates. Achieved below target with missed sends means the load generator, not Spanner, is the limit. The target is 0 in a closed loop.",
			unit:        unitOps,
			queries: []query{
				{expr: `sum(rate(spanbench_operations_total{` + runMatch + `}[$__rate_interval]))`, legend: "achieved"},
				{expr: `sum(spanbench_target_rate{` + runMatch + `})`, legend: "target"},
			},
		}),
		timeSeries(panel{
			title:       "Rate per runner",
			description: "Operations finished per second by each runner pod. The runners share the target evenly, so a runner below the others is a straggler (a slow node, a far zone, CPU throttling).",
			unit:        unitOps,
			queries: []query{
				{expr: `sum by (pod) (rate(spanbench_operations_total{` + runMatch + `}[$__rate_interval]))`, legend: "{{pod}}"},
			},
		}),
		timeSeries(panel{
			title:       "Successful operations by operation",
			description: "Successful operations per second of each operation, all runner pods together.",
			unit:        unitOps, width: 24,
			queries: []query{
				{expr: `sum by (operation) (rate(spanbench_operations_total{` + opMatch + `, code="OK"}[$__rate_interval]))`, legend: "{{operation}}"},
			},
		}),
	}
}

// latencyPanels: one panel per quantile, each operation a line. The
// quantile comes from the bucket counts of every runner pod summed by le
// (and operation): the distribution of the whole run. Averaging the pods'
// own quantiles would not give the run's quantile.
func latencyPanels() []cog.Builder[dashboard.Panel] {
	var out []cog.Builder[dashboard.Panel]
	for _, q := range liveQuantiles {
		out = append(out, timeSeries(panel{
			title: "Latency " + q.name + " by operation",
			description: fmt.Sprintf("The %s latency of successful operations, from their intended send time (no coordinated omission): "+
				"histogram_quantile over the latency buckets of all runner pods summed together. Bucket bounds double from 100 µs, so the value is an estimate within a factor of two; the exact figures are on the Results dashboard.", q.name),
			unit: unitSeconds, width: 8,
			queries: []query{{
				expr:   fmt.Sprintf(`histogram_quantile(%s, sum by (le, operation) (rate(spanbench_operation_latency_seconds_bucket{%s}[$__rate_interval])))`, q.q, opMatch),
				legend: "{{operation}}",
			}},
		}))
	}
	return out
}

func saturationPanels() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{
		timeSeries(panel{
			title:       "Errors by gRPC code",
			description: "Failed operations per second, by operation and gRPC status code (ABORTED: transaction retries; DEADLINE_EXCEEDED: the request timed out; RESOURCE_EXHAUSTED: quota or overload).",
			unit:        unitOps,
			queries: []query{
				{expr: `sum by (operation, code) (rate(spanbench_operations_total{` + opMatch + `, code!="OK"}[$__rate_interval]))`, legend: "{{operation}} {{code}}"},
			},
		}),
		timeSeries(panel{
			title:       "Error ratio",
			description: "Failed operations as a share of all finished operations, per operation.",
			unit:        unitRatio,
			queries: []query{
				{expr: `sum by (operation) (rate(spanbench_operations_total{` + opMatch + `, code!="OK"}[$__rate_interval])) / sum by (operation) (rate(spanbench_operations_total{` + opMatch + `}[$__rate_interval]))`, legend: "{{operation}}"},
			},
		}),
		timeSeries(panel{
			title:       "In flight",
			description: "Operations in flight on each runner pod, sampled every second. Pinned at the in-flight cap means sends are being missed.",
			unit:        unitCount,
			queries: []query{
				{expr: `sum by (pod) (spanbench_in_flight{` + runMatch + `})`, legend: "{{pod}}"},
			},
		}),
		timeSeries(panel{
			title:       "Missed sends",
			description: "Sends per second that were due but skipped because the runner's in-flight cap was reached, per runner pod. Any missed send means the run did not offer its target rate: the load generator was the bottleneck, and the result understates what Spanner can do at that rate.",
			unit:        unitOps,
			queries: []query{
				{expr: `sum by (pod) (rate(spanbench_missed_sends_total{` + runMatch + `}[$__rate_interval]))`, legend: "{{pod}}"},
			},
		}),
	}
}

func datasetPanels() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{
		timeSeries(panel{
			title:       "Dataset load progress",
			description: "Share of the dataset's rows loaded so far, from the manager (loader pods report to it). 100 % once loaded, or at once when the database already held the dataset.",
			unit:        unitRatio,
			queries: []query{
				{expr: `sum by (namespace, run) (spanbench_run_dataset_rows{` + runMatch + `, state="loaded"}) / sum by (namespace, run) (spanbench_run_dataset_rows{` + runMatch + `, state="total"})`, legend: "{{run}}"},
			},
		}),
		timeSeries(panel{
			title:       "Dataset rows",
			description: "Rows loaded so far and the dataset's total size.",
			unit:        unitCount,
			queries: []query{
				{expr: `sum by (state) (spanbench_run_dataset_rows{` + runMatch + `})`, legend: "{{state}}"},
			},
		}),
	}
}
