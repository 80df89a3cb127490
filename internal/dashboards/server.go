package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// serverPanels show what Spanner says about finished runs
// (docs/server-stats.md): per operation its SPANNER_SYS figures and the
// latency ladder, and per run Cloud Monitoring's CPU by priority, server
// latency per method and requests by status. Every figure is the
// controller's, one series per run and label set; `max by` keeps one of
// the replicas' equal series. An operation Spanner's TOP tables did not
// capture has only the not-captured series, so an empty cell is unknown,
// never zero.
func serverPanels() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{
		serverTable(), ladderTable(),
		ladderBars(), rowsBars(),
		serverCPUBars(), monitoringCPUBars(), monitoringLatencyTable(),
		lockWaitBars(), monitoringRequestsBars(),
		warmUpSignal(),
	}
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
		description: "Per run and operation, from Spanner's SPANNER_SYS statistics of the run's measured minutes: server CPU per logical operation (summed CPU over the client's count of operations: a read over 4 splits counts once), executions per operation (the splits a read touched), rows returned and rows scanned per logical operation (scanned: queries only; far above returned means a scan where a key lookup was meant), coverage (the share of client operations in minutes where the TOP tables had the operation's row), and not captured (1: no row in any minute; the figures are unknown, not zero). Runs on the emulator have no server figures.",
		unit:        unitText, width: 24, height: 8,
		queries: []query{
			{expr: figure("spanbench_run_server_cpu_seconds_per_operation", opMatch, byOp), table: true},
			{expr: figure("spanbench_run_server_executions_per_operation", opMatch, byOp), table: true},
			{expr: figure("spanbench_run_server_rows_per_operation", opMatch+`, kind="returned"`, byOp), table: true},
			{expr: figure("spanbench_run_server_rows_per_operation", opMatch+`, kind="scanned"`, byOp), table: true},
			{expr: figure("spanbench_run_server_coverage_ratio", opMatch, byOp), table: true},
			{expr: figure("spanbench_run_server_not_captured", opMatch, byOp), table: true},
		},
	}, nil, []column{
		{"Value #A", "server CPU/op", unitSeconds},
		{"Value #B", "executions/op", unitCount},
		{"Value #C", "rows returned/op", unitCount},
		{"Value #D", "rows scanned/op", unitCount},
		{"Value #E", "coverage", unitRatio},
		{"Value #F", "not captured", unitCount},
	})
}

// ladderTable is the latency ladder per operation: the client's p99, the
// GFE's and the server's, then the server's own figures beside them.
func ladderTable() cog.Builder[dashboard.Panel] {
	return tablePanel(panel{
		title:       "Latency ladder per operation",
		description: "Per run and operation, how much of the latency is network, frontend and server: the client's p99 (from the intended send time), the GFE's p99 (the server-timing header of Cloud Spanner's responses, summed over the operation's RPCs) and Spanner's server p99 (SPANNER_SYS merged latency histograms, per execution: queries only, reads have none); then the server's p50 and average per execution, the read-write transactions' total latency p99 per attempt, and the operation's estimated lock wait over the run (from LOCK_STATS samples; empty: no sampled conflict, not zero). Runs on the emulator have the client's column only.",
		unit:        unitText, width: 24, height: 8,
		queries: []query{
			{expr: figure("spanbench_run_latency_seconds", opMatch+`, quantile="0.99"`, byOp), table: true},
			{expr: figure("spanbench_run_gfe_latency_seconds", opMatch+`, quantile="0.99"`, byOp), table: true},
			{expr: figure("spanbench_run_server_latency_seconds", opMatch+`, quantile="0.99"`, byOp), table: true},
			{expr: figure("spanbench_run_server_latency_seconds", opMatch+`, quantile="0.5"`, byOp), table: true},
			{expr: figure("spanbench_run_server_latency_avg_seconds", opMatch, byOp), table: true},
			{expr: figure("spanbench_run_server_transaction_latency_seconds", opMatch+`, quantile="0.99"`, byOp), table: true},
			{expr: figure("spanbench_run_server_lock_wait_seconds", opMatch, byOp), table: true},
		},
	}, nil, []column{
		{"Value #A", "client p99", unitSeconds},
		{"Value #B", "GFE p99", unitSeconds},
		{"Value #C", "server p99", unitSeconds},
		{"Value #D", "server p50", unitSeconds},
		{"Value #E", "server avg", unitSeconds},
		{"Value #F", "transaction p99", unitSeconds},
		{"Value #G", "lock wait", unitSeconds},
	})
}

// ladderBars draws the ladder's three p99s side by side, one bar each per
// run and operation.
func ladderBars() cog.Builder[dashboard.Panel] {
	p99 := opMatch + `, quantile="0.99"`
	return barGauge(panel{
		title:       "Latency ladder p99: client, GFE, server",
		description: "Per run and operation, the client's p99, the GFE's p99 (server-timing header) and Spanner's server p99 (SPANNER_SYS, per execution, queries only): the gap between client and GFE is network and client, between GFE and server the frontend. A worker in another region shows as a long client bar over short GFE and server bars.",
		unit:        unitSeconds, width: 12, height: 10,
		queries: []query{
			{expr: figure("spanbench_run_latency_seconds", p99, byOp), legend: "{{run}} {{operation}} client", instant: true},
			{expr: figure("spanbench_run_gfe_latency_seconds", p99, byOp), legend: "{{run}} {{operation}} GFE", instant: true},
			{expr: figure("spanbench_run_server_latency_seconds", p99, byOp), legend: "{{run}} {{operation}} server", instant: true},
		},
	})
}

func rowsBars() cog.Builder[dashboard.Panel] {
	return barGauge(panel{
		title:       "Rows scanned vs returned per operation",
		description: "Rows Spanner scanned (queries only) and returned per logical operation of each selected run and operation (SPANNER_SYS, per-split corrected): a query that scans many more rows than it returns reads what it does not need.",
		unit:        unitCount, width: 12, height: 10,
		queries: []query{{
			expr: figure("spanbench_run_server_rows_per_operation", opMatch, byOp+", kind"), legend: "{{run}} {{operation}} {{kind}}", instant: true,
		}},
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

func lockWaitBars() cog.Builder[dashboard.Panel] {
	return barGauge(panel{
		title:       "Lock wait per operation",
		description: "Each selected run's operation's estimated lock wait over the statistics intervals read: the LOCK_WAIT_SECONDS of the contended row ranges whose sampled lock requests carry its transaction tag, apportioned by its share of the samples. No bar: no sampled conflict, not zero wait.",
		unit:        unitSeconds, width: 12, height: 8,
		queries: []query{{
			expr: figure("spanbench_run_server_lock_wait_seconds", opMatch, byOp), legend: "{{run}} {{operation}}", instant: true,
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

func monitoringRequestsBars() cog.Builder[dashboard.Panel] {
	return barGauge(panel{
		title:       "API requests by status (Cloud Monitoring)",
		description: "Spanner API requests of each selected run's measured minutes per gRPC status (api/api_request_count over every method and every client of the run's database, not only the run's): ABORTED or RESOURCE_EXHAUSTED beside OK is the share of requests the server aborted or refused.",
		unit:        unitCount, width: 12, height: 8,
		queries: []query{{
			expr: figure("spanbench_run_server_requests", runMatch, "namespace, run, status"), legend: "{{run}} {{status}}", instant: true,
		}},
	})
}
