package collectors

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// The results collector serves a run's server statistics, once collected,
// beside its client figures: per operation, with the same bounded labels
// (namespace, run, operation). A figure Spanner did not report has no
// series; an operation not captured has only the not-captured series, so
// a dashboard never reads "not captured" as zero CPU.
var (
	descServerCPU = prometheus.NewDesc("spanbench_run_server_cpu_seconds_per_operation",
		"Spanner CPU per logical operation of a finished run, from SPANNER_SYS (per-split corrected).", opLabels, nil)
	descServerExecutions = prometheus.NewDesc("spanbench_run_server_executions_per_operation",
		"Spanner executions per logical operation of a finished run: the splits a read touched, above 1 for a retried query.", opLabels, nil)
	descServerLatency = prometheus.NewDesc("spanbench_run_server_latency_avg_seconds",
		"Spanner's average server latency per execution of a finished run's queries, from SPANNER_SYS.", opLabels, nil)
	descServerRows = prometheus.NewDesc("spanbench_run_server_rows_per_operation",
		"Rows per logical operation of a finished run, from SPANNER_SYS: kind=returned or scanned.", append(opLabels, "kind"), nil)
	descServerCoverage = prometheus.NewDesc("spanbench_run_server_coverage_ratio",
		"Share of a finished run's client operations in minutes where Spanner's TOP statistics had the operation's row.", opLabels, nil)
	descServerLatencyQuantile = prometheus.NewDesc("spanbench_run_server_latency_seconds",
		"Spanner's server latency per execution of a finished run's queries at quantile=0.5 or 0.99, from the merged SPANNER_SYS latency histograms.",
		append(opLabels, "quantile"), nil)
	descServerTxnLatency = prometheus.NewDesc("spanbench_run_server_transaction_latency_seconds",
		"Spanner's total latency per read-write transaction attempt of a finished run at quantile=0.99, from the merged SPANNER_SYS histograms.",
		append(opLabels, "quantile"), nil)
	descServerLockWait = prometheus.NewDesc("spanbench_run_server_lock_wait_seconds",
		"A finished run's operation's estimated lock wait over the statistics intervals read, from SPANNER_SYS lock samples.", opLabels, nil)
	descServerNotCaptured = prometheus.NewDesc("spanbench_run_server_not_captured",
		"An operation of a finished run that Spanner's TOP statistics tables did not capture in any minute read (its server figures are unknown, not zero); always 1.", opLabels, nil)
)

// serverStatsDescs are the series' descriptions, for Describe.
var serverStatsDescs = []*prometheus.Desc{descServerCPU, descServerExecutions, descServerLatency, descServerRows,
	descServerCoverage, descServerNotCaptured, descServerLatencyQuantile, descServerTxnLatency, descServerLockWait}

// collectServerStats serves run's server figures.
func collectServerStats(ch chan<- prometheus.Metric, run *v1alpha1.BenchmarkRun) {
	ns, name := run.Namespace, run.Name
	for _, op := range run.Status.Operations {
		s := op.Server
		if s == nil {
			continue
		}
		if s.NotCaptured {
			send(ch, descServerNotCaptured, 1, ns, name, op.Name)
			continue
		}
		sendDuration(ch, descServerCPU, s.CPUPerOperation, ns, name, op.Name)
		sendDuration(ch, descServerLatency, s.LatencyAvg, ns, name, op.Name)
		sendDuration(ch, descServerLatencyQuantile, s.LatencyP50, ns, name, op.Name, "0.5")
		sendDuration(ch, descServerLatencyQuantile, s.LatencyP99, ns, name, op.Name, "0.99")
		sendDuration(ch, descServerTxnLatency, s.TransactionLatencyP99, ns, name, op.Name, "0.99")
		sendDuration(ch, descServerLockWait, s.LockWait, ns, name, op.Name)
		sendDecimal(ch, descServerExecutions, s.ExecutionsPerOperation, ns, name, op.Name)
		sendDecimal(ch, descServerCoverage, s.Coverage, ns, name, op.Name)
		sendDecimal(ch, descServerRows, s.RowsReturnedPerOperation, ns, name, op.Name, "returned")
		sendDecimal(ch, descServerRows, s.RowsScannedPerOperation, ns, name, op.Name, "scanned")
	}
}

func sendDuration(ch chan<- prometheus.Metric, d *prometheus.Desc, v *metav1.Duration, labels ...string) {
	if v != nil {
		send(ch, d, v.Duration.Seconds(), labels...)
	}
}

func sendDecimal(ch chan<- prometheus.Metric, d *prometheus.Desc, v string, labels ...string) {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		send(ch, d, f, labels...)
	}
}
