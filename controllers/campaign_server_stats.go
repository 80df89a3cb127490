package controllers

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// An iteration that compares server CPU per operation reads it from each
// run's report once the run's statistics are collected, which follows the
// run's success by the statistics' settle time. Until every succeeded run's
// ServerStatsCollected condition is terminal, the iteration waits (the
// campaign owns its runs, so the condition's change wakes it); a run whose
// statistics were not collected then gives an inconclusive row that says
// why (campaign/comparison).

// awaitsServerStats says whether run, though finished, is not yet ready
// for a comparison by spec.
func awaitsServerStats(spec *v1alpha1.ComparisonSpec, run *v1alpha1.BenchmarkRun) bool {
	if !comparesServerStats(spec) || run.Status.Phase != v1alpha1.PhaseSucceeded {
		return false
	}
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionServerStatsCollected)
	return c != nil && c.Reason == v1alpha1.ReasonServerStatsPending
}

// comparesServerStats says whether spec compares a server statistic.
func comparesServerStats(spec *v1alpha1.ComparisonSpec) bool {
	return slices.ContainsFunc(spec.EffectiveMetrics(), func(m v1alpha1.MetricSpec) bool {
		return m.Statistic == v1alpha1.StatisticServerCPUPerOp
	})
}
