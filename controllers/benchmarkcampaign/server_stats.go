package benchmarkcampaign

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/comparison"
	"github.com/spanbench/spanbench/controllers/runreport"
)

// An iteration that compares server CPU per operation or server query p99
// (ServerCPUPerOp, ServerQueryP99) reads them from each run's report once
// the run's statistics are collected, which follows the run's success by
// the statistics' settle time. Until every succeeded run's
// ServerStatsCollected condition is terminal, the iteration waits (the
// campaign owns its runs, so the condition's change wakes it); a run whose
// statistics were not collected then gives an inconclusive row that says
// why (campaign/comparison).

//
// Cloud Monitoring's figures (ServerHighPriorityCPU, ServerLatencyP99)
// are alike: published up to 180 s after the run's last minute, they are
// written into its report when ServerMetricsCollected becomes True. The
// iteration waits while that condition is Unknown (pending) or not yet
// set on a succeeded run; once it is False (the emulator, no permission,
// failed) the run's rows say "not collected".

// awaitsServerStats says whether run, though finished, is not yet ready
// for a comparison by spec: its server figures, or its cost, are pending.
func awaitsServerStats(spec *v1alpha1.ComparisonSpec, run *v1alpha1.BenchmarkRun) bool {
	if run.Status.Phase != v1alpha1.PhaseSucceeded {
		return false
	}
	if compares(spec, comparison.IsServerStats) {
		c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionServerStatsCollected)
		if c != nil && c.Reason == v1alpha1.ReasonServerStatsPending {
			return true
		}
	}
	if compares(spec, comparison.IsMonitoring) {
		c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionServerMetricsCollected)
		_, collectable := runreport.ServerMetricsWindow(run) // else the condition is never set
		if c == nil && collectable || c != nil && c.Status == metav1.ConditionUnknown {
			return true
		}
	}
	// A run's cost is written into its report once what it held is known
	// (an Ephemeral instance's deletion, after the run ended).
	return compares(spec, comparison.IsCost) && run.Status.Cost != nil && run.Status.Cost.Total == nil && heldSomething(run)
}

// compares says whether spec compares a statistic that is.
func compares(spec *v1alpha1.ComparisonSpec, is func(v1alpha1.CampaignStatistic) bool) bool {
	return slices.ContainsFunc(spec.EffectiveMetrics(), func(m v1alpha1.MetricSpec) bool { return is(m.Statistic) })
}
