package collectors

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// The results collector serves a TPCC run's tpmC and the outcome of its
// consistency checks. A run whose checks failed has no tpmC series: its
// figures counted work the database lost or duplicated, and a dashboard
// must not plot them as a result.
var (
	descTpmC = prometheus.NewDesc("spanbench_run_tpmc",
		"New-Order transactions per minute of a finished TPCC run, after the warm-up, across all runners; absent when its consistency checks failed.", runLabels, nil)
	descConsistencyFailed = prometheus.NewDesc("spanbench_run_consistency_failed",
		"TPC-C consistency conditions that failed after a finished TPCC run (0 when all held); absent when they were not checked.", runLabels, nil)
)

// tpccDescs are the series' descriptions, for Describe.
var tpccDescs = []*prometheus.Desc{descTpmC, descConsistencyFailed}

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
	if v, err := strconv.ParseFloat(t.TpmC, 64); err == nil && failed == 0 {
		send(ch, descTpmC, v, run.Namespace, run.Name)
	}
}
