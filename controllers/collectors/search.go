package collectors

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// The results collector serves a capacity search's outcome
// (status.search, docs/capacity.md) once the search ended: the capacity,
// labelled with why the search ended (a ReachedMax capacity is a lower
// bound, an OutOfTime one the best found in the time), and the capacity
// per node where the instance's size is known. A search whose first rate
// failed has no capacity, and no series: a missing figure is never
// plotted as 0.
var (
	descCapacity = prometheus.NewDesc("spanbench_run_capacity_ops_per_second",
		"A capacity search's capacity: the highest offered rate, all runners together, whose step met the SLO, in operations per second; reason says why the search ended (ReachedMax: a lower bound).",
		append(runLabels, "reason"), nil)
	descCapacityPerNode = prometheus.NewDesc("spanbench_run_capacity_per_node_ops_per_second",
		"A capacity search's capacity per 1,000 processing units (one node), in operations per second; absent when the instance's size is not known.",
		append(runLabels, "reason"), nil)
)

// searchDescs are the series' descriptions, for Describe.
var searchDescs = []*prometheus.Desc{descCapacity, descCapacityPerNode}

// collectSearch serves run's capacity, in any phase, once its search
// ended.
func collectSearch(ch chan<- prometheus.Metric, run *v1alpha1.BenchmarkRun) {
	s := run.Status.Search
	if s == nil || s.Reason == "" {
		return
	}
	for _, f := range []struct {
		desc  *prometheus.Desc
		value string
	}{{descCapacity, s.Capacity}, {descCapacityPerNode, s.CapacityPerNode}} {
		if v, err := v1alpha1.ParseThroughput(f.value); err == nil && f.value != "" {
			ch <- prometheus.MustNewConstMetric(f.desc, prometheus.GaugeValue, v, run.Namespace, run.Name, s.Reason)
		}
	}
}
