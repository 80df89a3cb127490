package collectors

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// The results collector serves a TPCC run's tpmC, its committed tpmC and
// the outcome of its consistency checks. A run whose checks failed has no
// tpmC series: its figures counted work the database lost or duplicated,
// and a dashboard must not plot them as a result.
var (
	descTpmC = prometheus.NewDesc("spanbench_run_tpmc",
		"New-Order transactions per minute of a finished TPCC run, after the warm-up, across all runners; absent when its consistency checks failed.", runLabels, nil)
	descCommittedTpmC = prometheus.NewDesc("spanbench_run_committed_tpmc",
		"spanbench_run_tpmc without the New-Orders rolled back by design: committed New-Order transactions per minute; absent when the consistency checks failed.", runLabels, nil)
	descConsistencyFailed = prometheus.NewDesc("spanbench_run_consistency_failed",
		"TPC-C consistency conditions that failed after a finished TPCC run (0 when all held); absent when they were not checked.", runLabels, nil)
)

// tpccDescs are the series' descriptions, for Describe.
var tpccDescs = []*prometheus.Desc{descTpmC, descCommittedTpmC, descConsistencyFailed}

// collectTPCC serves run's TPC-C figures.
func collectTPCC(ch chan<- prometheus.Metric, run *v1alpha1.BenchmarkRun) {
	t := run.Status.TPCC
	if t == nil {
		return
	}
	failed := 0
	for _, c := range t.Checks {
		if !c.Passed {
			failed++
		}
	}
	if len(t.Checks) > 0 {
		send(ch, descConsistencyFailed, float64(failed), run.Namespace, run.Name)
	}
	if failed == 0 {
		sendDecimal(ch, descTpmC, t.TpmC, run.Namespace, run.Name)
		sendDecimal(ch, descCommittedTpmC, t.CommittedTpmC, run.Namespace, run.Name)
	}
}
