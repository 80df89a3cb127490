package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// serverPanels show what Spanner says about finished runs
// (docs/server-stats.md): per operation its SPANNER_SYS figures, and per
// run Cloud Monitoring's CPU by priority and server latency per method.
// Every figure is the controller's, one series per run and label set;
// `max by` keeps one of the replicas' equal series. An operation
// Spanner's TOP tables did not capture has only the not-captured series,
// so an empty CPU cell is unknown, never zero.
func serverPanels() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{serverTable(), serverCPUBars(), monitoringCPUBars(), monitoringLatencyTable(), warmUpSignal()}
}

func warmUpSignal() cog.Builder[dashboard.Panel] {
	return statPanel(panel{
		title:       "Warm-up ended by",
		description: "The signal that settled last and so ended each run's warm-up: Client (the client's throughput and p99) or Server (Spanner's request rate and p99, from Cloud Monitoring, settled later: the run's figures include server warm-up minutes).",
		unit:        unitCount, width: 24, height: 4,
		queries: []query{{expr: figure("spanbench_run_warmup_ended_by", runMatch, "namespace, run, signal"), legend: "{{run}}: {{signal}}", instant: true}},
	})
}

func serverTable() cog.Builder[dashboard.Panel] {
	return tablePanel(panel{
		title:       "Spanner statistics per operation",
		description: "Per run and operation, from Spanner's SPANNER_SYS statistics of the run's measured minutes: server CPU per logical operation (summed CPU over the client's count of operations: a read over 4 splits counts once), executions per operation (the splits a read touched), coverage (the share of client operations in minutes where the TOP tables had the operation's row), not captured (1: no row in any minute; the figures are unknown, not zero), and the latency ladder's GFE p99 (from the server-timing header) beside the client's p99. Runs on the emulator have no server or GFE figures.",
		unit:        unitText, width: 24, height: 8,
		queries: []query{
			{expr: figure("spanbench_run_server_cpu_seconds_per_operation", opMatch, byOp), table: true},
			{expr: figure("spanbench_run_server_executions_per_operation", opMatch, byOp), table: true},
			{expr: figure("spanbench_run_server_coverage_ratio", opMatch, byOp), table: true},
			{expr: figure("spanbench_run_server_not_captured", opMatch, byOp), table: true},
			{expr: figure("spanbench_run_gfe_latency_seconds", opMatch+`, quantile="0.99"`, byOp), table: true},
			{expr: figure("spanbench_run_latency_seconds", opMatch+`, quantile="0.99"`, byOp), table: true},
		},
	}, nil, []column{
		{"Value #A", "server CPU/op", unitSeconds},
		{"Value #B", "executions/op", unitCount},
		{"Value #C", "coverage", unitRatio},
		{"Value #D", "not captured", unitCount},
		{"Value #E", "GFE p99", unitSeconds},
		{"Value #F", "client p99", unitSeconds},
	})
}

func serverCPUBars() cog.Builder[dashboard.Panel] {
	return barGauge(panel{
		title:       "Server CPU per operation",
		description: "Spanner CPU per logical operation of each selected run and operation (SPANNER_SYS, per-split corrected): the figure a campaign compares as ServerCPUPerOp.",
		unit:        unitSeconds, width: 8, height: 10,
		queries: []query{{
			expr: figure("spanbench_run_server_cpu_seconds_per_operation", opMatch, byOp), legend: "{{run}} {{operation}}", instant: true,
		}},
	})
}

func monitoringCPUBars() cog.Builder[dashboard.Panel] {
	return barGauge(panel{
		title:       "Instance CPU by priority (Cloud Monitoring)",
		description: "Mean CPU utilization of the run's instance over its measured minutes, per task priority and region (instance/cpu/utilization_by_priority), as a share of the region's capacity: the leader region's high priority is the figure to watch on a multi-region configuration.",
		unit:        unitRatio, width: 8, height: 10,
		queries: []query{{
			expr:   figure("spanbench_run_server_cpu_utilization_ratio", runMatch+`, stat="mean"`, "namespace, run, priority, location"),
			legend: "{{run}} {{priority}} {{location}}", instant: true,
		}},
	})
}

func monitoringLatencyTable() cog.Builder[dashboard.Panel] {
	by := "namespace, run, method"
	return tablePanel(panel{
		title:       "Server latency per method (Cloud Monitoring)",
		description: "Spanner's server latency per API method over the run's measured minutes (api/request_latencies, interpolated within Cloud Monitoring's buckets).",
		unit:        unitText, width: 8, height: 10,
		queries: []query{
			{expr: figure("spanbench_run_server_request_latency_seconds", runMatch+`, quantile="0.5"`, by), table: true},
			{expr: figure("spanbench_run_server_request_latency_seconds", runMatch+`, quantile="0.99"`, by), table: true},
		},
	}, nil, []column{
		{"Value #A", "server p50", unitSeconds},
		{"Value #B", "server p99", unitSeconds},
	})
}
