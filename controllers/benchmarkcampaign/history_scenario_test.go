package benchmarkcampaign_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkcampaign"
	"github.com/spanbench/spanbench/internal/await"
)

// TestCampaignScenarioHistoryOutlivesPruningAndTheTrendFindsAStep: on the
// real API server, ten iterations of a one-cell campaign (started by
// runNow, the clock a day later each time; the scenario ends each run as
// the run controller would) with p99 50 % higher from the 7th: history
// pruning (successfulIterationsHistoryLimit 2) deletes the runs of all
// but the last two iterations while the history keeps all ten summaries,
// and the trend sets Regressed, not before the step, and ends with the
// change points at the 7th iteration. (Right after the step the change
// may be located a night early: with two points at the new level, the
// best split leaving three points a side is one night before it.)
func TestCampaignScenarioHistoryOutlivesPruningAndTheTrendFindsAStep(t *testing.T) {
	c, err := client.New(restConfig, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := fmt.Sprintf("h-%d", time.Now().UnixNano()%1_000_000_000)
	deleteRunsAtEnd(t, c, ns)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(time.Now())
	startCampaignManager(t, clk)
	campaign := testCampaign("trend", 1, 1)
	campaign.Namespace, campaign.UID, campaign.Generation = ns, "", 0
	campaign.Spec.SuccessfulIterationsHistoryLimit = ptr.To[int32](2)
	if err := c.Create(ctx, campaign); err != nil {
		t.Fatal(err)
	}
	poll := await.Poll{Within: 30 * time.Second, Every: 50 * time.Millisecond}
	got := &v1alpha1.BenchmarkCampaign{}
	const iterations, step = 10, 7
	firstRegressed := 0
	for i := 1; i <= iterations; i++ {
		if i > 1 {
			clk.Step(24 * time.Hour)
			patch := client.MergeFrom(got.DeepCopy())
			got.Spec.RunNow = fmt.Sprint(i)
			if err := c.Patch(ctx, got, patch); err != nil {
				t.Fatal(err)
			}
		}
		scale := 1.0
		if i >= step {
			scale = 1.5
		}
		await.Eventually(t, poll, fmt.Sprintf("iteration %d ran and succeeded", i), func() (bool, string) {
			if err := c.Get(ctx, client.ObjectKeyFromObject(campaign), got); err != nil {
				return false, err.Error()
			}
			runs := &v1alpha1.BenchmarkRunList{}
			if err := c.List(ctx, runs, client.InNamespace(ns)); err != nil {
				return false, err.Error()
			}
			for j := range runs.Items {
				if run := &runs.Items[j]; !run.IsFinished() && run.DeletionTimestamp.IsZero() {
					finishCampaignRun(t, c, run, scale)
				}
			}
			its := got.Status.Iterations
			return len(its) == i && its[i-1].Outcome == v1alpha1.IterationSucceeded, fmt.Sprintf("iterations %+v", its)
		})
		if cond := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.CampaignRegressed); cond != nil && cond.Status == metav1.ConditionTrue {
			if i < step {
				t.Fatalf("Regressed at iteration %d, before the step at %d: %+v, change points %+v", i, step, cond, got.Status.ChangePoints)
			}
			if firstRegressed == 0 {
				firstRegressed = i
				t.Logf("Regressed from iteration %d: %s", i, cond.Message)
			}
		}
	}
	its := got.Status.Iterations
	if firstRegressed == 0 {
		t.Fatalf("never Regressed; change points %+v", got.Status.ChangePoints)
	}
	// Latency scaled: p50 and p99 step, each once, at the 7th iteration.
	metrics := map[string]bool{}
	for _, cp := range got.Status.ChangePoints {
		if cp.Iteration != its[step-1].Name || cp.Verdict != v1alpha1.VerdictRegressed || metrics[cp.Metric] {
			t.Errorf("change point %+v; want one Regressed change point per metric, at the step's iteration %s", cp, its[step-1].Name)
		}
		metrics[cp.Metric] = true
	}
	if !metrics["read p99 µs"] {
		t.Errorf("change points %+v, want read p99 µs among them", got.Status.ChangePoints)
	}
	await.Eventually(t, poll, "the runs of the last two iterations only", func() (bool, string) {
		runs := &v1alpha1.BenchmarkRunList{}
		if err := c.List(ctx, runs, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		var left []string
		for _, run := range runs.Items {
			left = append(left, run.Labels[v1alpha1.LabelIteration])
		}
		return fmt.Sprint(left) == fmt.Sprint([]string{its[8].Name, its[9].Name}), fmt.Sprintf("runs of %v", left)
	})
	history := &corev1.ConfigMapList{}
	if err := c.List(ctx, history, client.InNamespace(ns), client.HasLabels{benchmarkcampaign.LabelHistory}); err != nil {
		t.Fatal(err)
	}
	if len(history.Items) != iterations {
		t.Errorf("%d history ConfigMaps, want all %d iterations' summaries", len(history.Items), iterations)
	}
}
