package benchmarkcampaign_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/comparison"
	"github.com/spanbench/spanbench/campaign/plan"
	"github.com/spanbench/spanbench/internal/await"
)

// Campaign scenarios of the iteration lifecycle on the real API server:
// concurrency policies, suspend and runNow, a missed deadline, order and
// the one-database rule seen from the runs' creation, a manager killed
// mid-iteration, and a template edit mid-iteration. The harness is
// scenario_test.go's: the campaign reconciler runs alone
// (startCampaignManager), and the scenario (campaignScenario) ends runs
// as the run controller would (finishCampaignRun) and moves the injected
// clock.

func TestCampaignScenarioConcurrencyPoliciesAndAMissedDeadline(t *testing.T) {
	s := newCampaignScenario(t, "pol")
	startCampaignManager(t, s.clk)
	late := nightly("late", "")
	deadline := int64(60)
	late.Spec.StartingDeadlineSeconds = &deadline
	for _, c := range []*v1alpha1.BenchmarkCampaign{nightly("forbid", v1alpha1.ConcurrencyForbid),
		nightly("allow", v1alpha1.ConcurrencyAllow), nightly("replace", v1alpha1.ConcurrencyReplace), late} {
		s.create(c)
	}
	all := []string{"forbid", "allow", "replace", "late"}
	first := s.awaitNextSchedule(all...)

	// Ten minutes after 02:00 Tokyo: late for a 60 s deadline, in time for
	// the others.
	s.clk.SetTime(first.Add(10 * time.Minute))
	s.touch(all...)
	for _, name := range all[:3] {
		s.awaitCampaign(name, "the first iteration Running with its run", func(c *v1alpha1.BenchmarkCampaign) bool {
			return outcomesOf(c) == "Running" && len(s.runsOf(name, "")) == 1
		})
	}
	got := s.awaitCampaign("late", "a Missed iteration", func(c *v1alpha1.BenchmarkCampaign) bool { return outcomesOf(c) == "Missed" })
	if it := got.Status.Iterations[0]; !it.ScheduledTime.Time.Equal(first) || len(s.runsOf("late", "")) != 0 {
		t.Errorf("late: iteration %+v and %d runs; want Missed at %v, no run", it, len(s.runsOf("late", "")), first)
	}
	replaced := s.runsOf("replace", "")[0].Name

	// The next night, each first iteration still runs.
	s.clk.SetTime(first.Add(24 * time.Hour))
	s.touch(all[:3]...)
	s.awaitCampaign("forbid", "Forbid: the second iteration Missed", func(c *v1alpha1.BenchmarkCampaign) bool {
		return outcomesOf(c) == "Running,Missed"
	})
	s.awaitCampaign("replace", "Replace: the first iteration Failed, the second Running with its run",
		func(c *v1alpha1.BenchmarkCampaign) bool {
			return outcomesOf(c) == "Failed,Running" && len(s.runsOf("replace", c.Status.Iterations[1].Name)) == 1
		})
	if err := s.c.Get(context.Background(), client.ObjectKey{Namespace: s.ns, Name: replaced}, &v1alpha1.BenchmarkRun{}); !apierrors.IsNotFound(err) {
		t.Errorf("Replace: the replaced iteration's unfinished run %s: %v, want it deleted", replaced, err)
	}
	allow := s.awaitCampaign("allow", "Allow: two iterations Running", func(c *v1alpha1.BenchmarkCampaign) bool {
		return outcomesOf(c) == "Running,Running"
	})
	// Allow: the second iteration's run waits for the first's, on the same
	// database; it starts once that one ended.
	second := allow.Status.Iterations[1].Name
	if n := len(s.runsOf("allow", second)); n != 0 {
		t.Errorf("Allow: the second iteration created %d runs while the first's ran on the same database", n)
	}
	s.finish("allow", -1, sameScale)
	s.awaitCampaign("allow", "Allow: the first iteration Succeeded, the second's run created", func(c *v1alpha1.BenchmarkCampaign) bool {
		return outcomesOf(c) == "Succeeded,Running" && len(s.runsOf("allow", second)) == 1
	})
	if o := s.runs.overlapping(); len(o) > 0 {
		t.Errorf("runs overlapped on one database: %v", o)
	}
}

func TestCampaignScenarioSuspendHoldsAndRunNowStarts(t *testing.T) {
	s := newCampaignScenario(t, "susp")
	startCampaignManager(t, s.clk)
	c := nightly("held", "")
	yes := true
	c.Spec.Suspend = &yes
	s.create(c)
	s.awaitCampaign("held", "observed while suspended", func(c *v1alpha1.BenchmarkCampaign) bool {
		return c.Status.ObservedGeneration == c.Generation
	})

	// A night passes and a runNow arrives, both while suspended.
	s.clk.Step(25 * time.Hour)
	s.edit("held", func(spec *v1alpha1.BenchmarkCampaignSpec) { spec.RunNow = "first" })
	await.Consistently(t, await.Poll{Within: time.Second, Every: 50 * time.Millisecond}, "no iteration while suspended",
		func() (bool, string) {
			got := s.campaign("held")
			return len(got.Status.Iterations) == 0 && got.Status.NextScheduleTime == nil && len(s.runs.created()) == 0,
				fmt.Sprintf("iterations %+v, nextScheduleTime %v, runs %v", got.Status.Iterations, got.Status.NextScheduleTime, s.runs.created())
		})

	// Resumed: the pending runNow starts one iteration, and only one.
	s.edit("held", func(spec *v1alpha1.BenchmarkCampaignSpec) { spec.Suspend = nil })
	got := s.awaitCampaign("held", "the runNow iteration with its run", func(c *v1alpha1.BenchmarkCampaign) bool {
		return len(c.Status.Iterations) > 0 && len(s.runs.created()) == 1
	})
	if st := got.Status; outcomesOf(got) != "Running" || st.LastRunNow != "first" || st.NextScheduleTime == nil {
		t.Fatalf("on resume: iterations %+v, lastRunNow %q, nextScheduleTime %v; want one Running for runNow first and the schedule back",
			st.Iterations, st.LastRunNow, st.NextScheduleTime)
	}

	// Not suspended, a new runNow starts the next iteration.
	s.finish("held", -1, sameScale)
	s.awaitCampaign("held", "the first iteration done", func(c *v1alpha1.BenchmarkCampaign) bool { return outcomesOf(c) == "Succeeded" })
	s.clk.Step(time.Minute)
	s.edit("held", func(spec *v1alpha1.BenchmarkCampaignSpec) { spec.RunNow = "second" })
	got = s.awaitCampaign("held", "the second runNow's iteration with its run", func(c *v1alpha1.BenchmarkCampaign) bool {
		return outcomesOf(c) == "Succeeded,Running" && len(s.runs.created()) == 2
	})
	if got.Status.LastRunNow != "second" || !strings.HasPrefix(s.runs.created()[1], got.Status.Iterations[1].Name+"-") {
		t.Errorf("lastRunNow %q, runs %v; want second, and the new run in iteration %s",
			got.Status.LastRunNow, s.runs.created(), got.Status.Iterations[1].Name)
	}
}

func TestCampaignScenarioRunsInOrderNeverTwoOnOneDatabase(t *testing.T) {
	// Cells a and b share a database, c has its own; maxParallel 3 would
	// allow all three at once. The runs finish one at a time, oldest
	// first, so every chance of an overlap is offered.
	s := newCampaignScenario(t, "ord")
	startCampaignManager(t, s.clk)
	s.create(testCampaign("ord", 2, 3, axis("cell", "target.database", `a="shared"`, `b="shared"`, `c="own"`)))
	await.Eventually(t, await.Poll{Within: 60 * time.Second, Every: 50 * time.Millisecond}, "six runs ended", func() (bool, string) {
		s.finish("ord", 1, sameScale)
		runs := s.runsOf("ord", "")
		return len(runs) == 6 && unfinished(runs) == 0, fmt.Sprintf("created %v", s.runs.created())
	})
	if got, want := variants(s.runsOf("ord", ""), s.runs.created()), []string{"a/1", "b/1", "c/1", "a/2", "b/2", "c/2"}; !slices.Equal(got, want) {
		t.Errorf("runs created in order %v, want %v (Interleaved)", got, want)
	}
	if o := s.runs.overlapping(); len(o) > 0 {
		t.Errorf("two runs on one database at once: %v", o)
	}
	s.awaitCampaign("ord", "the iteration compared", func(c *v1alpha1.BenchmarkCampaign) bool { return outcomesOf(c) == "Succeeded" })
}

// restartCampaign is a 2-cell × 2-repetition campaign on one database
// whose cell "slow" is 30 % slower.
func restartCampaign() *v1alpha1.BenchmarkCampaign {
	return testCampaign("restart", 2, 2, axis("rate", "workload.load.rate", "base=50", "slow=100"))
}

func slowerScale(run *v1alpha1.BenchmarkRun) float64 {
	if run.Labels[v1alpha1.LabelVariant] == "slow" {
		return 1.3
	}
	return 1
}

// completeIteration finishes the campaign's runs as they come until its
// first iteration has ended, and returns the campaign.
func (s *campaignScenario) completeIteration(name string) *v1alpha1.BenchmarkCampaign {
	s.t.Helper()
	return s.awaitCampaign(name, "the iteration ended", func(c *v1alpha1.BenchmarkCampaign) bool {
		s.finish(name, -1, slowerScale)
		return len(c.Status.Iterations) > 0 && c.Status.Iterations[0].Outcome != v1alpha1.IterationRunning
	})
}

// report reads the iteration's report ConfigMap.
func (s *campaignScenario) report(it v1alpha1.IterationStatus) *corev1.ConfigMap {
	s.t.Helper()
	if it.Report != plan.ReportName(it.Name) {
		s.t.Fatalf("iteration %s names report %q, want %s", it.Name, it.Report, plan.ReportName(it.Name))
	}
	cm := &corev1.ConfigMap{}
	if err := s.c.Get(context.Background(), client.ObjectKey{Namespace: s.ns, Name: it.Report}, cm); err != nil {
		s.t.Fatalf("the report of iteration %s: %v", it.Name, err)
	}
	return cm
}

func TestCampaignScenarioManagerKilledMidIterationLosesAndDuplicatesNothing(t *testing.T) {
	// The same campaign at the same instant, once without interruption...
	at := time.Now()
	ref := newCampaignScenario(t, "ref")
	ref.clk.SetTime(at)
	stop := startCampaignManager(t, ref.clk)
	ref.create(restartCampaign())
	want := ref.completeIteration("restart")
	stop()

	// ... and once with its manager killed after two runs were created.
	s := newCampaignScenario(t, "kill")
	s.clk.SetTime(at)
	stop = startCampaignManager(t, s.clk)
	s.create(restartCampaign())
	s.awaitCreated(1)
	s.finish("restart", -1, slowerScale)
	s.awaitCreated(2)
	stop()
	s.finish("restart", -1, slowerScale)
	s.clk.Step(time.Hour) // restarted an hour later
	startCampaignManager(t, s.clk)
	got := s.completeIteration("restart")

	created := s.runs.created()
	if len(created) != 4 || len(slices.Compact(slices.Sorted(slices.Values(created)))) != 4 {
		t.Errorf("runs created %v, want 4 distinct: a restart must neither duplicate nor lose one", created)
	}
	if !slices.Equal(created, ref.runs.created()) {
		t.Errorf("runs created %v across the restart, %v without one", created, ref.runs.created())
	}
	if g, w := fmt.Sprintf("%+v", got.Status.Comparison), fmt.Sprintf("%+v", want.Status.Comparison); g != w || got.Status.Comparison == nil {
		t.Errorf("comparison across a restart:\n%s\nwithout one:\n%s", g, w)
	}
	gotReport, wantReport := s.report(got.Status.Iterations[0]), ref.report(want.Status.Iterations[0])
	if fmt.Sprint(gotReport.Data) != fmt.Sprint(wantReport.Data) {
		t.Errorf("report across a restart:\n%s\nwithout one:\n%s", gotReport.Data[comparison.ReportTextKey], wantReport.Data[comparison.ReportTextKey])
	}
	if o := s.runs.overlapping(); len(o) > 0 {
		t.Errorf("two runs on one database at once: %v", o)
	}
}

func TestCampaignScenarioTemplateEditAppliesFromTheNextIteration(t *testing.T) {
	s := newCampaignScenario(t, "edit")
	stop := startCampaignManager(t, s.clk)
	c := restartCampaign()
	c.Name = "edit"
	c.Spec.Repetitions = ptr.To(int32(1))
	c.Spec.Template.Metadata.Labels = map[string]string{"template": "v1"}
	s.create(c)
	first := s.awaitCreated(1)[0]

	// Mid-iteration: a new template (a label, a longer duration) and
	// comparison (p50 only); then the manager restarts.
	s.edit("edit", func(spec *v1alpha1.BenchmarkCampaignSpec) {
		spec.Template.Metadata.Labels["template"] = "v2"
		spec.Template.Spec.Workload.Duration = &metav1.Duration{Duration: 30 * time.Second}
		spec.Comparison.Metrics = []v1alpha1.MetricSpec{{Statistic: v1alpha1.StatisticP50}}
	})
	stop()
	startCampaignManager(t, s.clk)
	got := s.completeIteration("edit")
	it1 := got.Status.Iterations[0]
	for _, run := range s.runsOf("edit", it1.Name) {
		if run.Labels["template"] != "v1" || run.Spec.Workload.Duration.Duration != 20*time.Second {
			t.Errorf("run %s of the running iteration: template label %q, duration %v; want the iteration's spec (v1, 20s)",
				run.Name, run.Labels["template"], run.Spec.Workload.Duration.Duration)
		}
	}
	if n := len(s.runsOf("edit", it1.Name)); n != 2 || !strings.HasPrefix(first, it1.Name) {
		t.Fatalf("iteration %s has %d runs (first %s), want 2", it1.Name, n, first)
	}
	text := s.report(it1).Data[comparison.ReportTextKey]
	if !strings.Contains(text, "ops/s") || !strings.Contains(text, "p99") {
		t.Errorf("the running iteration's report lacks its own metrics (p50, p99, ops/s):\n%s", text)
	}

	// The edit applies from the next iteration on: its runs and comparison.
	got = s.awaitCampaign("edit", "the second iteration ended", func(c *v1alpha1.BenchmarkCampaign) bool {
		s.finish("edit", -1, slowerScale)
		return len(c.Status.Iterations) == 2 && c.Status.Iterations[1].Outcome != v1alpha1.IterationRunning
	})
	it2 := got.Status.Iterations[1]
	for _, run := range s.runsOf("edit", it2.Name) {
		if run.Labels["template"] != "v2" || run.Spec.Workload.Duration.Duration != 30*time.Second {
			t.Errorf("run %s of the next iteration: template label %q, duration %v; want the edited spec (v2, 30s)",
				run.Name, run.Labels["template"], run.Spec.Workload.Duration.Duration)
		}
	}
	text = s.report(it2).Data[comparison.ReportTextKey]
	if strings.Contains(text, "ops/s") || strings.Contains(text, "p99") || !strings.Contains(text, "p50") {
		t.Errorf("the next iteration's report does not follow the edited comparison (p50 only):\n%s", text)
	}
	if it1.TemplateHash == it2.TemplateHash || it2.Outcome != v1alpha1.IterationSucceeded {
		t.Errorf("iterations %+v: want two Succeeded with different template hashes", got.Status.Iterations)
	}
	for _, it := range []v1alpha1.IterationStatus{it1, it2} {
		for _, name := range []string{plan.SnapshotName(it.Name), plan.ReportName(it.Name)} {
			cm := &corev1.ConfigMap{}
			if err := s.c.Get(context.Background(), client.ObjectKey{Namespace: s.ns, Name: name}, cm); err != nil {
				t.Fatal(err)
			}
			l := cm.Labels
			if l[v1alpha1.LabelCampaign] != "edit" || l[v1alpha1.LabelIteration] != it.Name || !metav1.IsControlledBy(cm, got) {
				t.Errorf("ConfigMap %s: labels %v, controller %v; want the campaign's and iteration's labels and the campaign as controller",
					name, l, metav1.GetControllerOf(cm))
			}
		}
	}
}
