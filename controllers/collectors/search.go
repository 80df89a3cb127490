package collectors

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result/capacity"
)

// The results collector serves a capacity search from status.search, by
// the contract docs/capacity.md ("Prometheus series") states and the
// Results dashboard's capacity row reads: once the search ended, the
// capacity, labelled with why the search ended (a ReachedMax capacity is
// a lower bound, an OutOfTime one the best found in the time), and the
// capacity per node where the instance's size is known; while it runs
// and after, each judged step's rates, verdict and SLO figures, and the
// SLO's bounds. A step's figure is its status's baseValue, unrounded (the
// status's value text rounds a ratio to 0.01 %). A missing figure (a
// search whose first rate failed has no capacity; the emulator reports no
// CPU) has no series, never a 0.
var (
	descCapacity = prometheus.NewDesc("spanbench_run_capacity_ops_per_second",
		"A capacity search's capacity: the highest offered rate, all runners together, whose step met the SLO, in operations per second; reason says why the search ended (ReachedMax: a lower bound).",
		append(runLabels, "reason"), nil)
	descCapacityPerNode = prometheus.NewDesc("spanbench_run_capacity_per_node_ops_per_second",
		"A capacity search's capacity per 1,000 processing units (one node), in operations per second; absent when the instance's size is not known.",
		append(runLabels, "reason"), nil)
	descStepOffered = prometheus.NewDesc("spanbench_run_search_step_offered_ops",
		"A capacity search step's offered rate, all runners together, in operations per second; step counts from 1 in the order the search took them.",
		append(runLabels, "step"), nil)
	descStepAchieved = prometheus.NewDesc("spanbench_run_search_step_achieved_ops",
		"A capacity search step's successful operations per second over its measured time.",
		append(runLabels, "step"), nil)
	descStepPassed = prometheus.NewDesc("spanbench_run_search_step_passed",
		"1 when every measured figure of a capacity search step met its condition, else 0.",
		append(runLabels, "step"), nil)
	descStepFigure = prometheus.NewDesc("spanbench_run_search_step_figure",
		"A capacity search step's figure for an SLO condition: seconds for a latency condition, a ratio (0.001 for 0.1 %) otherwise; absent where not measured.",
		append(runLabels, "step", "condition"), nil)
	descSLOBound = prometheus.NewDesc("spanbench_run_search_slo_bound",
		"The bound of a capacity search's SLO condition, in its figure's unit: seconds for a latency condition, a ratio otherwise.",
		append(runLabels, "condition"), nil)
)

// searchDescs are the series' descriptions, for Describe.
var searchDescs = []*prometheus.Desc{descCapacity, descCapacityPerNode, descStepOffered, descStepAchieved, descStepPassed, descStepFigure, descSLOBound}

// collectSearch serves run's search: its SLO's bounds and judged steps
// as soon as there are any, its capacity once it ended.
func collectSearch(ch chan<- prometheus.Metric, run *v1alpha1.BenchmarkRun) {
	s := run.Status.Search
	if s == nil {
		return
	}
	ns, name := run.Namespace, run.Name
	for _, text := range s.SLO {
		if c, err := capacity.ParseCondition(text); err == nil && !(c.Recommended && c.Ratio == 0) {
			ch <- prometheus.MustNewConstMetric(descSLOBound, prometheus.GaugeValue, bound(c), ns, name, text)
		}
	}
	for i := range s.Steps {
		collectStep(ch, ns, name, strconv.Itoa(i+1), &s.Steps[i])
	}
	if s.Reason == "" {
		return
	}
	for _, f := range []struct {
		desc  *prometheus.Desc
		value string
	}{{descCapacity, s.Capacity}, {descCapacityPerNode, s.CapacityPerNode}} {
		if v, err := v1alpha1.ParseThroughput(f.value); err == nil && f.value != "" {
			ch <- prometheus.MustNewConstMetric(f.desc, prometheus.GaugeValue, v, ns, name, s.Reason)
		}
	}
}

// collectStep serves one judged step.
func collectStep(ch chan<- prometheus.Metric, ns, name, step string, st *v1alpha1.SearchStepStatus) {
	if v, err := v1alpha1.ParseThroughput(st.Offered); err == nil {
		ch <- prometheus.MustNewConstMetric(descStepOffered, prometheus.GaugeValue, v, ns, name, step)
	}
	if v, err := v1alpha1.ParseThroughput(st.Achieved); err == nil && st.Achieved != "" {
		ch <- prometheus.MustNewConstMetric(descStepAchieved, prometheus.GaugeValue, v, ns, name, step)
	}
	passed := 0.0
	if st.Pass {
		passed = 1
	}
	ch <- prometheus.MustNewConstMetric(descStepPassed, prometheus.GaugeValue, passed, ns, name, step)
	for _, f := range st.Figures {
		if v, err := v1alpha1.ParseDecimal(f.BaseValue); err == nil {
			ch <- prometheus.MustNewConstMetric(descStepFigure, prometheus.GaugeValue, v, ns, name, step, f.Condition)
		}
	}
}

// bound is a condition's bound in its figure's unit.
func bound(c capacity.Condition) float64 {
	if c.Kind == capacity.Latency {
		return c.Latency.Seconds()
	}
	return c.Ratio
}
