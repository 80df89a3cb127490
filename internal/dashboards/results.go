package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// resultQuantiles are the quantiles the manager exports per operation
// (spanbench_run_latency_seconds' quantile label), as table columns.
var resultQuantiles = []struct{ q, name string }{
	{"0.5", "p50"}, {"0.9", "p90"}, {"0.99", "p99"}, {"0.999", "p99.9"}, {"max", "max"},
}

// Every manager replica serves the same results from its cache, so a run's
// figure can come as one series per replica: `max by` keeps one of equal
// values. It never combines different figures.
func figure(metric, match, by string) string {
	return fmt.Sprintf(`max by (%s) (%s{%s})`, by, metric, match)
}

const byOp = "namespace, run, operation"

// results is the dashboard of finished runs: the exact figures the
// controller computed from the merged HDR histograms, for one run or
// several side by side.
func results() *dashboard.DashboardBuilder {
	b := base("spanbench-results", "spanbench / Results",
		"Finished BenchmarkRuns: the exact per-operation figures the controller computed from the runners' merged HDR histograms (the same as in the run's status), for one run or several side by side.").
		Time("now-24h", "now").
		WithVariable(namespaceVariable(`spanbench_run_info`)).
		WithVariable(labelVariable("run", "run", "Finished BenchmarkRuns to show; several compare side by side.", `spanbench_run_info{namespace=~"$namespace"}`, true)).
		WithVariable(labelVariable("operation", "operation", "Operations of the runs' workloads; overall is all of them together.", `spanbench_run_latency_seconds{`+runMatch+`}`, true))
	return withRows(b, []row{
		{"Finished runs", []cog.Builder[dashboard.Panel]{runsTable()}},
		{"Per-operation figures", []cog.Builder[dashboard.Panel]{figuresTable()}},
		{"Compare", comparePanels()},
		{"Capacity search", capacityPanels()},
		{"Cost", costPanels()},
		{"Server-side figures", serverPanels()},
		{"Run conditions", conditionPanels()},
	})
}

func runsTable() cog.Builder[dashboard.Panel] {
	overall := `namespace=~"$namespace", run=~"$run", operation="overall"`
	return tablePanel(panel{
		title:       "Runs",
		description: "Finished runs with what they measured (spanbench_run_info): variant, instance configuration, dialect, endpoint, runner count and region, client library version, and whether the results are partial (a runner's shard is missing). Throughput and p99 are over all operations after the warm-up; first seen is when Prometheus first saw the run's results in the dashboard's time range.",
		unit:        unitText, width: 24, height: 9,
		queries: []query{
			{expr: `max by (namespace, run, variant, instance_config, dialect, endpoint, runners, runner_region, client_version, partial) (spanbench_run_info{` + runMatch + `})`, table: true},
			{expr: figure("spanbench_run_throughput_ops", overall, "namespace, run"), table: true},
			{expr: figure("spanbench_run_latency_seconds", overall+`, quantile="0.99"`, "namespace, run"), table: true},
			// The subquery's step is the panel's interval: with Prometheus's
			// default (its evaluation interval, 1m) a run finished less than
			// a step ago had no "first seen" yet.
			{expr: `1000 * min by (namespace, run) (min_over_time(timestamp(spanbench_run_info{` + runMatch + `})[$__range:$__interval]))`, table: true},
		},
	}, []string{"Value #A"}, []column{
		{"Value #B", "throughput", unitOps},
		{"Value #C", "p99", unitSeconds},
		{"Value #D", "first seen", "dateTimeAsIso"},
	})
}

func figuresTable() cog.Builder[dashboard.Panel] {
	var qs []query
	var cols []column
	for i, q := range resultQuantiles {
		qs = append(qs, query{expr: figure("spanbench_run_latency_seconds", opMatch+`, quantile="`+q.q+`"`, byOp), table: true})
		cols = append(cols, column{fmt.Sprintf("Value #%c", 'A'+i), q.name, unitSeconds})
	}
	n := len(qs)
	qs = append(qs,
		query{expr: figure("spanbench_run_throughput_ops", opMatch, byOp), table: true},
		query{expr: figure("spanbench_run_operations", opMatch, byOp), table: true},
		// Sum the codes after taking one series per code and replica.
		query{expr: `sum by (namespace, run, operation) (` + figure("spanbench_run_errors", opMatch, byOp+", code") + `)`, table: true},
	)
	cols = append(cols,
		column{fmt.Sprintf("Value #%c", 'A'+n), "throughput", unitOps},
		column{fmt.Sprintf("Value #%c", 'A'+n+1), "operations", unitCount},
		column{fmt.Sprintf("Value #%c", 'A'+n+2), "errors", unitCount},
	)
	return tablePanel(panel{
		title:       "Exact figures per operation",
		description: "Per run and operation (overall: all operations together): latency quantiles from the intended send time, successful operations per second and in total, and failed operations, all after the warm-up. Exact: computed by the controller from the merged HDR histograms of every runner, not estimated from Prometheus buckets.",
		unit:        unitText, width: 24, height: 10,
		queries: qs,
	}, nil, cols)
}

func comparePanels() []cog.Builder[dashboard.Panel] {
	var out []cog.Builder[dashboard.Panel]
	for _, q := range []struct{ q, name string }{{"0.5", "p50"}, {"0.99", "p99"}} {
		out = append(out, barGauge(panel{
			title:       "Latency " + q.name + " by run and operation",
			description: "The exact " + q.name + " latency of each selected run and operation, side by side.",
			unit:        unitSeconds, width: 8, height: 10,
			queries: []query{{
				expr:    figure("spanbench_run_latency_seconds", opMatch+`, quantile="`+q.q+`"`, byOp),
				legend:  "{{run}} {{operation}}",
				instant: true,
			}},
		}))
	}
	out = append(out, barGauge(panel{
		title:       "Throughput by run and operation",
		description: "Successful operations per second of each selected run and operation after the warm-up.",
		unit:        unitOps, width: 8, height: 10,
		queries: []query{{
			expr: figure("spanbench_run_throughput_ops", opMatch, byOp), legend: "{{run}} {{operation}}", instant: true,
		}},
	}))
	return out
}

func conditionPanels() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{
		barGauge(panel{
			title:       "Errors by gRPC code",
			description: "Failed operations of each selected run after the warm-up, by operation and gRPC status code.",
			unit:        unitCount, width: 12,
			queries: []query{{
				expr: figure("spanbench_run_errors", opMatch, byOp+", code"), legend: "{{run}} {{operation}} {{code}}", instant: true,
			}},
		}),
		statPanel(panel{
			title:       "Warm-up excluded",
			description: "Length of the warm-up each run excluded from its results (fixed, or detected when the rate and p99 settled).",
			unit:        unitSeconds, width: 6,
			queries: []query{{expr: figure("spanbench_run_warmup_seconds", runMatch, "namespace, run"), legend: "{{run}}", instant: true}},
		}),
		statPanel(panel{
			title:       "Start skew",
			description: "Spread of the runners' actual start times: how far apart the runner pods began sending load after the common start barrier.",
			unit:        unitSeconds, width: 6,
			queries: []query{{expr: figure("spanbench_run_start_skew_seconds", runMatch, "namespace, run"), legend: "{{run}}", instant: true}},
		}),
	}
}
