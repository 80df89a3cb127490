package benchmarkcampaign_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/plan"
	"github.com/spanbench/spanbench/controllers/collectors"
	"github.com/spanbench/spanbench/internal/runtest"
)

// The collectors map what the cache holds to series; the fake client
// stands in for the cache (the envtest scenario
// TestResultsCollectorServesFinishedRunsFromTheCache proves the cached
// reader itself).

// scrapedCampaign is a campaign whose status has every kind of figure:
// a structured row with an interval, a row written before rows had an
// operation and a statistic, the same row twice, an error rate, a row
// that could not be compared (ratio 0), a missed iteration and a change
// point.
func scrapedCampaign() *v1alpha1.BenchmarkCampaign {
	at := func(sec int64) *metav1.Time { return &metav1.Time{Time: time.Unix(sec, 0)} }
	it := plan.IterationName("nightly", time.Unix(1700000000, 0))
	c := &v1alpha1.BenchmarkCampaign{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "bench"}}
	c.Status = v1alpha1.BenchmarkCampaignStatus{
		Verdict: v1alpha1.VerdictRegressed, LastSuccessfulTime: at(1700000600), LastScheduleTime: at(1700086400), NextScheduleTime: at(1700172800),
		Iterations: []v1alpha1.IterationStatus{
			{Name: it, ScheduledTime: *at(1700000000), Outcome: v1alpha1.IterationSucceeded},
			{Name: "nightly-1700086400", ScheduledTime: *at(1700086400), Outcome: v1alpha1.IterationMissed},
		},
		Comparison: &v1alpha1.ComparisonStatus{Iteration: it, Baseline: "tokyo", Verdict: v1alpha1.VerdictRegressed, Rows: []v1alpha1.ComparisonRow{
			{Variant: "asia1", Metric: "commit p99 µs", Operation: "commit", Statistic: v1alpha1.StatisticP99, Baseline: "20000", Value: "50000",
				Ratio: "2.500", Low: "2.100", High: "2.900", PValue: "0.00794", N: "5+5", Verdict: v1alpha1.VerdictRegressed},
			{Variant: "asia1", Metric: "commit ops/s", Baseline: "800", Value: "790", Ratio: "0.988", N: "1+1", Verdict: v1alpha1.VerdictInconclusive},
			{Variant: "asia1", Metric: "commit ops/s", Baseline: "1", Value: "1", Ratio: "9", N: "1+1", Verdict: v1alpha1.VerdictImproved},
			{Variant: "asia1", Metric: "commit errors %", Operation: "commit", Statistic: v1alpha1.StatisticErrorRate, Baseline: "0.5", Value: "1",
				Ratio: "2.000", N: "5+5", Verdict: v1alpha1.VerdictInconclusive},
			{Variant: "asia1", Metric: "asia-northeast1 high-priority CPU %", Operation: "asia-northeast1", Statistic: v1alpha1.StatisticServerHighPriorityCPU,
				Baseline: "21", Value: "not collected", Ratio: "0.000", N: "4+4", Verdict: v1alpha1.VerdictInconclusive},
			{Variant: "asia1", Metric: "missing p50 µs", Operation: "missing", Statistic: v1alpha1.StatisticP50, Baseline: "0", Value: "0",
				Ratio: "0.000", N: "5+5", Verdict: v1alpha1.VerdictInconclusive},
		}},
		ChangePoints: []v1alpha1.ChangePointStatus{{Variant: "asia1", Metric: "commit p99 µs", Iteration: it, Before: "20000", After: "50000",
			PValue: "0.01", Verdict: v1alpha1.VerdictRegressed}},
	}
	return c
}

func TestCampaignCollectorServesTheLatestComparison(t *testing.T) {
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(scrapedCampaign()).Build()
	row := func(stat string) string {
		return fmt.Sprintf(`{campaign="nightly",namespace="bench",operation="commit",statistic=%q,variant="asia1"}`, stat)
	}
	want := `
# HELP spanbench_campaign_comparison_ratio Estimated ratio variant / baseline of a statistic in the campaign's latest comparison.
# TYPE spanbench_campaign_comparison_ratio gauge
spanbench_campaign_comparison_ratio` + row("ErrorRate") + ` 2
spanbench_campaign_comparison_ratio` + row("P99") + ` 2.5
spanbench_campaign_comparison_ratio` + row("Throughput") + ` 0.988
# HELP spanbench_campaign_comparison_ratio_low Lower bound of the ratio's confidence interval; absent when the samples are too few for one.
# TYPE spanbench_campaign_comparison_ratio_low gauge
spanbench_campaign_comparison_ratio_low` + row("P99") + ` 2.1
# HELP spanbench_campaign_comparison_ratio_high Upper bound of the ratio's confidence interval; absent when the samples are too few for one.
# TYPE spanbench_campaign_comparison_ratio_high gauge
spanbench_campaign_comparison_ratio_high` + row("P99") + ` 2.9
# HELP spanbench_campaign_comparison_baseline The baseline's value of the statistic, from the merged histogram of its runs (the mean of its runs' figures for the server's): seconds for latencies, operations per second for Throughput, a ratio (0-1) for ErrorRate and ServerHighPriorityCPU; absent for a side whose server figures were not collected.
# TYPE spanbench_campaign_comparison_baseline gauge
spanbench_campaign_comparison_baseline` + row("ErrorRate") + ` 0.005
spanbench_campaign_comparison_baseline{campaign="nightly",namespace="bench",operation="asia-northeast1",statistic="ServerHighPriorityCPU",variant="asia1"} 0.21
spanbench_campaign_comparison_baseline{campaign="nightly",namespace="bench",operation="missing",statistic="P50",variant="asia1"} 0
spanbench_campaign_comparison_baseline` + row("P99") + ` 0.02
spanbench_campaign_comparison_baseline` + row("Throughput") + ` 800
# HELP spanbench_campaign_verdict The campaign's verdict (status.verdict) in the verdict label; always 1.
# TYPE spanbench_campaign_verdict gauge
spanbench_campaign_verdict{campaign="nightly",namespace="bench",verdict="Regressed"} 1
# HELP spanbench_campaign_comparison_verdict The row's verdict (Improved, Neutral, Regressed, Inconclusive, Invalid) in the verdict label; always 1.
# TYPE spanbench_campaign_comparison_verdict gauge
spanbench_campaign_comparison_verdict{campaign="nightly",namespace="bench",operation="asia-northeast1",statistic="ServerHighPriorityCPU",variant="asia1",verdict="Inconclusive"} 1
spanbench_campaign_comparison_verdict{campaign="nightly",namespace="bench",operation="commit",statistic="ErrorRate",variant="asia1",verdict="Inconclusive"} 1
spanbench_campaign_comparison_verdict{campaign="nightly",namespace="bench",operation="commit",statistic="P99",variant="asia1",verdict="Regressed"} 1
spanbench_campaign_comparison_verdict{campaign="nightly",namespace="bench",operation="commit",statistic="Throughput",variant="asia1",verdict="Inconclusive"} 1
spanbench_campaign_comparison_verdict{campaign="nightly",namespace="bench",operation="missing",statistic="P50",variant="asia1",verdict="Inconclusive"} 1
# HELP spanbench_campaign_last_success_timestamp_seconds When the campaign's last iteration succeeded, Unix time.
# TYPE spanbench_campaign_last_success_timestamp_seconds gauge
spanbench_campaign_last_success_timestamp_seconds{campaign="nightly",namespace="bench"} 1.7000006e+09
# HELP spanbench_campaign_missed_schedules Missed iterations among those the campaign's status lists (the latest 100).
# TYPE spanbench_campaign_missed_schedules gauge
spanbench_campaign_missed_schedules{campaign="nightly",namespace="bench"} 1
# HELP spanbench_campaign_latest_iteration The outcome (Running, Succeeded, Failed, Missed) of the campaign's latest iteration in the outcome label; always 1.
# TYPE spanbench_campaign_latest_iteration gauge
spanbench_campaign_latest_iteration{campaign="nightly",namespace="bench",outcome="Missed"} 1
# HELP spanbench_campaign_change_point_timestamp_seconds Scheduled time (Unix) of the iteration where a change point's new level starts; one series per change point in the status (at most 32 a campaign).
# TYPE spanbench_campaign_change_point_timestamp_seconds gauge
spanbench_campaign_change_point_timestamp_seconds{acknowledged="false",campaign="nightly",iteration="nightly-1700000000",namespace="bench",operation="commit",statistic="P99",variant="asia1",verdict="Regressed"} 1.7e+09
`
	names := []string{"spanbench_campaign_comparison_ratio", "spanbench_campaign_comparison_ratio_low", "spanbench_campaign_comparison_ratio_high",
		"spanbench_campaign_comparison_baseline", "spanbench_campaign_verdict", "spanbench_campaign_comparison_verdict",
		"spanbench_campaign_last_success_timestamp_seconds", "spanbench_campaign_missed_schedules", "spanbench_campaign_latest_iteration",
		"spanbench_campaign_change_point_timestamp_seconds"}
	if err := testutil.CollectAndCompare(&collectors.CampaignCollector{Reader: reader}, strings.NewReader(want), names...); err != nil {
		t.Errorf("the campaign's series differ from its status (structured and legacy rows once each, base units):\n%v", err)
	}
	if n := testutil.CollectAndCount(&collectors.CampaignCollector{Reader: reader}, "spanbench_campaign_next_schedule_timestamp_seconds"); n != 1 {
		t.Errorf("%d next-schedule series, want 1", n)
	}
}

func TestCampaignCollectorOnAFreshCampaignServesOnlyItsMissedCount(t *testing.T) {
	fresh := &v1alpha1.BenchmarkCampaign{ObjectMeta: metav1.ObjectMeta{Name: "fresh", Namespace: "bench"}}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(fresh).Build()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(&collectors.CampaignCollector{Reader: reader})
	n, err := testutil.GatherAndCount(reg)
	missed, missedErr := testutil.GatherAndCount(reg, "spanbench_campaign_missed_schedules")
	if err != nil || missedErr != nil || n != 1 || missed != 1 {
		t.Errorf("a campaign without status gives %d series, %d of them spanbench_campaign_missed_schedules (%v, %v); want that one alone", n, missed, err, missedErr)
	}
}

func TestResultsCollectorServesFailuresAndLiveEphemeralInstances(t *testing.T) {
	created := time.Unix(1700000000, 0)
	failed := runtest.Run("failed").InNamespace("bench").Failed(v1alpha1.ReasonRunnerFailed, created).Obj()
	live := runtest.Run("live").InNamespace("bench").Created(created).Ephemeral().Finalizers(v1alpha1.FinalizerInstance).InstanceCreated().Obj()
	gone := runtest.Run("gone").InNamespace("bench").Created(created).Ephemeral().Finalizers(v1alpha1.FinalizerInstance).InstanceCreated().Obj()
	gone.Status.Target.DeletionTime = &metav1.Time{Time: created.Add(time.Hour)}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(failed, live, gone).Build()
	d := live.Spec.Deadlines.Resolve()
	lifetime := d.Prepare + d.Load + d.RunnersReady + live.Spec.Workload.TotalDuration() + d.Overrun + d.Aggregate
	want := fmt.Sprintf(`
# HELP spanbench_run_failed A run that ended without results (Succeeded=False), its condition's reason in the reason label; always 1.
# TYPE spanbench_run_failed gauge
spanbench_run_failed{namespace="bench",reason="RunnerFailed",run="failed"} 1
# HELP spanbench_run_ephemeral_instance_start_timestamp_seconds While an Ephemeral instance of a run may exist (its finalizer is on, its deletion not recorded): the run's creation, Unix time, from which the instance's allowed lifetime counts.
# TYPE spanbench_run_ephemeral_instance_start_timestamp_seconds gauge
spanbench_run_ephemeral_instance_start_timestamp_seconds{namespace="bench",run="live"} 1.7e+09
# HELP spanbench_run_ephemeral_instance_lifetime_seconds The longest an Ephemeral instance of a run may live: its workload's duration plus every stage deadline; the instance is deleted by then at the latest.
# TYPE spanbench_run_ephemeral_instance_lifetime_seconds gauge
spanbench_run_ephemeral_instance_lifetime_seconds{namespace="bench",run="live"} %g
`, lifetime.Seconds())
	if err := testutil.CollectAndCompare(&collectors.ResultsCollector{Reader: reader}, strings.NewReader(want),
		"spanbench_run_failed", "spanbench_run_ephemeral_instance_start_timestamp_seconds", "spanbench_run_ephemeral_instance_lifetime_seconds"); err != nil {
		t.Errorf("a failed run, a live and a deleted Ephemeral instance:\n%v", err)
	}
}

// TestCampaignCollectorServesWhatTheControllerCompared: the campaign
// controller's own comparison (one run a cell, 50 % slower) comes out of
// the collector labelled by operation and statistic, Regressed.
func TestCampaignCollectorServesWhatTheControllerCompared(t *testing.T) {
	c := testCampaign("scraped", 1, 1, axis("rate", "workload.load.rate", "base=50", "slow=100"))
	c.Spec.Comparison.Metrics = []v1alpha1.MetricSpec{{Statistic: v1alpha1.StatisticP99}, {Statistic: v1alpha1.StatisticErrorRate}}
	f := newFakeCampaign(t, c, interceptor.Funcs{})
	for range 2 {
		f.settle()
		f.finishRuns(func(run *v1alpha1.BenchmarkRun) float64 {
			if run.Labels[v1alpha1.LabelVariant] == "slow" {
				return 1.5
			}
			return 1
		})
	}
	f.settle()
	rows := f.campaign().Status.Comparison
	if rows == nil || len(rows.Rows) == 0 {
		t.Fatalf("no comparison in the status: %+v", f.campaign().Status)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(&collectors.CampaignCollector{Reader: f.stored})
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, fam := range families {
		for _, m := range fam.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if fam.GetName() == "spanbench_campaign_comparison_verdict" {
				got[labels["variant"]+" "+labels["operation"]+" "+labels["statistic"]+" "+labels["verdict"]] = true
			}
			if fam.GetName() == "spanbench_campaign_comparison_ratio" && labels["statistic"] == "P99" && !(m.GetGauge().GetValue() > 1.2) {
				t.Errorf("the P99 ratio of a 50 %% slower variant is served as %v", m.GetGauge().GetValue())
			}
		}
	}
	for _, want := range []string{"slow read P99 Regressed", "slow read ErrorRate Neutral"} {
		if !got[want] {
			t.Errorf("no row verdict %q among the series %v (status rows %+v)", want, got, rows.Rows)
		}
	}
}
