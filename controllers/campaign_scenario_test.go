package controllers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers"
	"github.com/spanbench/spanbench/internal/await"
)

// startCampaignManager runs a manager with the campaign reconciler alone
// on the envtest API server: the run controller does not run, and the
// scenario ends runs the way it would (finishCampaignRun).
func startCampaignManager(t *testing.T, clk *clocktesting.FakeClock) {
	t.Helper()
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0", Logger: logr.Discard(), Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	r := &controllers.BenchmarkCampaignReconciler{Client: mgr.GetClient(), Scheme: scheme,
		Recorder: mgr.GetEventRecorderFor("spanbench-campaign"), Clock: clk, APIReader: mgr.GetAPIReader()}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// TestCampaignScenarioComparesTwoCellsTwice: a 2-cell × 2-repetition
// campaign on the real API server (the CRDs of config/crd/bases) gets its
// four runs one at a time (one database), and, once their statuses and
// reports say they succeeded, the comparison and verdict in its status.
func TestCampaignScenarioComparesTwoCellsTwice(t *testing.T) {
	c, err := client.New(restConfig, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := fmt.Sprintf("c-%d", time.Now().UnixNano()%1_000_000_000)
	deleteRunsAtEnd(t, c, ns)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	startCampaignManager(t, clocktesting.NewFakeClock(time.Now()))
	campaign := testCampaign("two-by-two", 2, 4, axis("rate", "workload.load.rate", "base=50", "fast=100"))
	campaign.Namespace, campaign.UID, campaign.Generation = ns, "", 0
	if err := c.Create(ctx, campaign); err != nil {
		t.Fatal(err)
	}
	var order []string
	await.Eventually(t, await.Poll{Within: 60 * time.Second, Every: 100 * time.Millisecond}, "four runs ended, one at a time",
		func() (bool, string) {
			runs := &v1alpha1.BenchmarkRunList{}
			if err := c.List(ctx, runs, client.InNamespace(ns)); err != nil {
				return false, err.Error()
			}
			if n := unfinished(runs.Items); n > 1 {
				t.Fatalf("%d runs active at once on one database", n)
			}
			for i := range runs.Items {
				run := &runs.Items[i]
				if !run.IsFinished() {
					order = append(order, run.Labels[v1alpha1.LabelVariant]+"/"+run.Labels[v1alpha1.LabelRepetition])
					scale := 1.0
					if run.Labels[v1alpha1.LabelVariant] == "fast" {
						scale = 0.5
					}
					finishCampaignRun(t, c, run, scale)
				}
			}
			return len(runs.Items) == 4 && unfinished(runs.Items) == 0, fmt.Sprintf("%d runs, started %v", len(runs.Items), order)
		})
	if fmt.Sprint(order) != "[base/1 fast/1 base/2 fast/2]" {
		t.Errorf("runs started in order %v, want interleaved [base/1 fast/1 base/2 fast/2]", order)
	}
	got := &v1alpha1.BenchmarkCampaign{}
	await.Eventually(t, await.Poll{Within: 30 * time.Second, Every: 100 * time.Millisecond}, "the comparison in the status",
		func() (bool, string) {
			if err := c.Get(ctx, client.ObjectKeyFromObject(campaign), got); err != nil {
				return false, err.Error()
			}
			return got.Status.Comparison != nil, fmt.Sprintf("%+v", got.Status.Iterations)
		})
	st := got.Status
	if len(st.Iterations) != 1 || st.Iterations[0].Outcome != v1alpha1.IterationSucceeded || st.Iterations[0].Succeeded != 4 {
		t.Errorf("iterations %+v, want one Succeeded with 4 runs", st.Iterations)
	}
	if cmp := st.Comparison; cmp.Baseline != "base" || len(cmp.Rows) == 0 || cmp.Rows[0].N != "2+2" || cmp.Verdict == "" || st.Verdict != cmp.Verdict {
		t.Errorf("comparison %+v, verdict %s; want rows of 2+2 runs against base and the table's verdict", cmp, st.Verdict)
	}
	if st.ObservedGeneration != got.Generation {
		t.Errorf("observedGeneration %d, generation %d", st.ObservedGeneration, got.Generation)
	}
}

// TestCampaignScenarioScheduleFiresInTokyo: on the real API server, a
// campaign at 02:00 Asia/Tokyo announces the next 02:00 Tokyo as
// nextScheduleTime and starts its iteration when the injected clock
// reaches that instant (a metadata touch wakes the controller, since the
// workqueue's own timer runs on real time).
func TestCampaignScenarioScheduleFiresInTokyo(t *testing.T) {
	c, err := client.New(restConfig, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := fmt.Sprintf("s-%d", time.Now().UnixNano()%1_000_000_000)
	deleteRunsAtEnd(t, c, ns)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(time.Now())
	startCampaignManager(t, clk)
	campaign := nightly("tokyo", "")
	campaign.Namespace, campaign.UID, campaign.Generation, campaign.CreationTimestamp = ns, "", 0, metav1.Time{}
	if err := c.Create(ctx, campaign); err != nil {
		t.Fatal(err)
	}
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	got := &v1alpha1.BenchmarkCampaign{}
	read := func() (bool, string) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(campaign), got); err != nil {
			return false, err.Error()
		}
		return true, fmt.Sprintf("next %v, iterations %+v", got.Status.NextScheduleTime, got.Status.Iterations)
	}
	poll := await.Poll{Within: 30 * time.Second, Every: 100 * time.Millisecond}
	await.Eventually(t, poll, "nextScheduleTime", func() (bool, string) {
		ok, s := read()
		return ok && got.Status.NextScheduleTime != nil, s
	})
	next := got.Status.NextScheduleTime.Time
	if l := next.In(tokyo); l.Hour() != 2 || l.Minute() != 0 || next.Sub(clk.Now()) > 24*time.Hour || len(got.Status.Iterations) != 0 {
		t.Fatalf("nextScheduleTime %v (%v in Tokyo), iterations %+v; want the next 02:00 Tokyo and none yet", next, next.In(tokyo), got.Status.Iterations)
	}
	clk.SetTime(next)
	touch := client.MergeFrom(got.DeepCopy())
	got.Annotations = map[string]string{"test/touch": "1"}
	if err := c.Patch(ctx, got, touch); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, poll, "the iteration at 02:00 Tokyo and its run", func() (bool, string) {
		ok, s := read()
		runs := &v1alpha1.BenchmarkRunList{}
		if err := c.List(ctx, runs, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		return ok && len(got.Status.Iterations) == 1 && len(runs.Items) == 1, s
	})
	if it := got.Status.Iterations[0]; !it.ScheduledTime.Time.Equal(next) || it.Outcome != v1alpha1.IterationRunning {
		t.Errorf("iteration %+v, want Running, scheduled at %v", it, next)
	}
}

// deleteRunsAtEnd deletes the runs a campaign scenario's campaigns created
// in ns when the test ends: the run controller of a later scenario's
// manager watches every namespace and would otherwise spend its reconciles
// preparing these runs' targets, delaying that scenario's own run.
func deleteRunsAtEnd(t *testing.T, c client.Client, ns string) {
	t.Cleanup(func() {
		if err := c.DeleteAllOf(context.Background(), &v1alpha1.BenchmarkRun{}, client.InNamespace(ns)); err != nil {
			t.Errorf("deleting the scenario's runs: %v", err)
		}
	})
}
