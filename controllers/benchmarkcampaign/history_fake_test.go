package benchmarkcampaign_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkcampaign"
)

// The campaign's history, pruning and trend against the fake client (see
// fake_test.go); history_scenario_test.go runs them on
// the real API server.

// iterate starts one iteration by a new runNow token and ends its runs,
// their latency scaled by scale.
func (f *fakeCampaign) iterate(token string, scale float64) {
	f.t.Helper()
	c := f.campaign()
	c.Spec.RunNow = token
	if err := f.stored.Update(context.Background(), c); err != nil {
		f.t.Fatal(err)
	}
	f.clock.Step(24 * time.Hour)
	f.settle()
	f.finishRuns(func(*v1alpha1.BenchmarkRun) float64 { return scale })
	f.settle()
}

func (f *fakeCampaign) configMaps(labels client.MatchingLabels) []corev1.ConfigMap {
	f.t.Helper()
	list := &corev1.ConfigMapList{}
	if err := f.stored.List(context.Background(), list, client.InNamespace(f.key.Namespace), labels); err != nil {
		f.t.Fatal(err)
	}
	return list.Items
}

// historyIterations are the iterations of the history's ConfigMaps.
func (f *fakeCampaign) historyIterations() []string {
	f.t.Helper()
	var out []string
	for _, cm := range f.configMaps(client.MatchingLabels{v1alpha1.LabelCampaign: f.key.Name}) {
		if it := cm.Labels[benchmarkcampaign.LabelHistory]; it != "" {
			out = append(out, it)
		}
	}
	return out
}

// iterationConfigMap is a per-iteration object as the campaign's
// iteration code makes them (labels and owner); owned says whether the
// campaign owns it.
func iterationConfigMap(c *v1alpha1.BenchmarkCampaign, iteration, name string, owned bool) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.Namespace,
		Labels: map[string]string{v1alpha1.LabelCampaign: c.Name, v1alpha1.LabelIteration: iteration}}}
	if owned {
		cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "BenchmarkCampaign",
			Name: c.Name, UID: c.UID, Controller: ptr.To(true)}}
	}
	return cm
}

func campaignCondition(t *testing.T, c *v1alpha1.BenchmarkCampaign, typ string) metav1.Condition {
	t.Helper()
	cond := meta.FindStatusCondition(c.Status.Conditions, typ)
	if cond == nil {
		t.Fatalf("no %s condition in %+v", typ, c.Status.Conditions)
	}
	return *cond
}

// TestCampaignPrunesIterationsBeyondTheHistoryLimitsAndKeepsTheirSummaries:
// with successfulIterationsHistoryLimit 2, four iterations leave the runs
// and owned per-iteration ConfigMaps of the last two only; a ConfigMap the
// campaign does not own is left alone; every iteration keeps its summary.
func TestCampaignPrunesIterationsBeyondTheHistoryLimitsAndKeepsTheirSummaries(t *testing.T) {
	c := testCampaign("prune", 1, 1)
	c.Spec.SuccessfulIterationsHistoryLimit = ptr.To[int32](2)
	f := newFakeCampaign(t, c, interceptor.Funcs{})
	f.settle()
	f.finishRuns(func(*v1alpha1.BenchmarkRun) float64 { return 1 })
	f.settle()
	for i := 2; i <= 4; i++ {
		// The iteration's own objects exist while it runs.
		f.iterate(fmt.Sprint(i), 1)
	}
	st := f.campaign().Status
	if len(st.Iterations) != 4 {
		t.Fatalf("iterations %+v, want 4", st.Iterations)
	}
	var names []string
	for _, it := range st.Iterations {
		names = append(names, it.Name)
		for _, owned := range []bool{true, false} {
			cm := iterationConfigMap(f.campaign(), it.Name, fmt.Sprintf("%s-obj-%v", it.Name, owned), owned)
			if err := f.stored.Create(context.Background(), cm); err != nil {
				t.Fatal(err)
			}
		}
	}
	f.iterate("5", 1)
	st = f.campaign().Status
	names = append(names, st.Iterations[4].Name)
	var runIterations []string
	for _, run := range f.runs() {
		runIterations = append(runIterations, run.Labels[v1alpha1.LabelIteration])
	}
	if fmt.Sprint(runIterations) != fmt.Sprint(names[3:]) {
		t.Errorf("runs of iterations %v remain, want those of the last two %v", runIterations, names[3:])
	}
	left := map[string]bool{}
	for _, cm := range f.configMaps(client.MatchingLabels{v1alpha1.LabelCampaign: c.Name}) {
		left[cm.Name] = true
	}
	for i, it := range names[:4] {
		if owned := it + "-obj-true"; left[owned] != (i == 3) {
			t.Errorf("owned ConfigMap %s present %v, want %v (kept for the last two iterations only)", owned, left[owned], i == 3)
		}
		if foreign := it + "-obj-false"; !left[foreign] {
			t.Errorf("ConfigMap %s, not the campaign's, was deleted", foreign)
		}
	}
	if history := f.historyIterations(); len(history) != 5 {
		t.Errorf("history of %v, want one entry per iteration: 5", history)
	}
	if cond := campaignCondition(t, f.campaign(), v1alpha1.CampaignHistoryReady); cond.Status != metav1.ConditionTrue || !strings.Contains(cond.Message, "5 iteration") {
		t.Errorf("HistoryReady = %+v, want True with 5 iterations", cond)
	}
}

// TestCampaignHistoryKeepsTrendIterations: trend.iterations bounds the
// history; the oldest summaries go.
func TestCampaignHistoryKeepsTrendIterations(t *testing.T) {
	c := testCampaign("bound", 1, 1)
	c.Spec.Trend.Iterations = ptr.To[int32](6)
	f := newFakeCampaign(t, c, interceptor.Funcs{})
	f.settle()
	f.finishRuns(func(*v1alpha1.BenchmarkRun) float64 { return 1 })
	f.settle()
	for i := 2; i <= 8; i++ {
		f.iterate(fmt.Sprint(i), 1)
	}
	st := f.campaign().Status
	kept := f.historyIterations()
	var want []string
	for _, it := range st.Iterations[2:] {
		want = append(want, it.Name)
	}
	if fmt.Sprint(kept) != fmt.Sprint(want) {
		t.Errorf("history of %v, want the newest 6: %v", kept, want)
	}
}

// TestCampaignTrendSetsRegressedAtTheStepAndAnAcknowledgementClearsIt:
// p99 50 % higher from the 8th of 12 iterations (single-cell campaign, so
// no comparison verdict) sets Regressed by the trend once the step is
// significant, with a change point at the 8th iteration, never before
// the step; acknowledging that iteration clears Regressed at the next
// reconcile.
func TestCampaignTrendSetsRegressedAtTheStepAndAnAcknowledgementClearsIt(t *testing.T) {
	c := testCampaign("step", 1, 1)
	f := newFakeCampaign(t, c, interceptor.Funcs{})
	f.settle()
	f.finishRuns(func(*v1alpha1.BenchmarkRun) float64 { return 1 })
	f.settle()
	firstRegressed := 0
	for i := 2; i <= 12; i++ {
		scale := 1.0
		if i >= 8 {
			scale = 1.5
		}
		f.iterate(fmt.Sprint(i), scale)
		cond := campaignCondition(t, f.campaign(), v1alpha1.CampaignRegressed)
		if cond.Status == metav1.ConditionTrue && firstRegressed == 0 {
			firstRegressed = i
			if cond.Reason != "Trend" || !strings.Contains(cond.Message, "trend: ") {
				t.Errorf("Regressed = %+v, want reason Trend and a message naming the trend", cond)
			}
		}
	}
	st := f.campaign().Status
	step := st.Iterations[7].Name
	if firstRegressed < 8 || firstRegressed > 11 {
		t.Fatalf("Regressed first at iteration %d (change points %+v), want from the step (8) to 11", firstRegressed, st.ChangePoints)
	}
	var found bool
	for _, cp := range st.ChangePoints {
		if cp.Iteration == step && cp.Metric == "read p99 µs" && cp.Verdict == v1alpha1.VerdictRegressed && cp.Recent {
			found = true
		}
	}
	if !found || st.Verdict != v1alpha1.VerdictRegressed {
		t.Fatalf("change points %+v, verdict %s; want a recent Regressed read p99 µs at %s and verdict Regressed", st.ChangePoints, st.Verdict, step)
	}
	cond := campaignCondition(t, f.campaign(), v1alpha1.CampaignRegressed)
	if !strings.Contains(cond.Message, "at iteration "+step) {
		t.Errorf("Regressed message %q does not name the step's iteration %s", cond.Message, step)
	}
	got := f.campaign()
	got.Spec.Trend.Acknowledged = []v1alpha1.Acknowledgement{{Iteration: step, Reason: "new client version"}}
	if err := f.stored.Update(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	f.reconcile()
	if cond := campaignCondition(t, f.campaign(), v1alpha1.CampaignRegressed); cond.Status != metav1.ConditionFalse {
		t.Errorf("after acknowledging %s: Regressed = %+v, want False", step, cond)
	}
}

// TestCampaignReportsMalformedHistoryAsACondition: a history ConfigMap
// that is not an entry is named in HistoryReady, without a panic, and the
// trend reads the rest.
func TestCampaignReportsMalformedHistoryAsACondition(t *testing.T) {
	c := testCampaign("badhist", 1, 1)
	bad := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "badhist-1-history", Namespace: c.Namespace,
		Labels: map[string]string{v1alpha1.LabelCampaign: c.Name, benchmarkcampaign.LabelHistory: "badhist-1"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "BenchmarkCampaign",
			Name: c.Name, UID: c.UID, Controller: ptr.To(true)}}},
		BinaryData: map[string][]byte{"entry.json.gz": []byte("not gzip")}}
	f := newFakeCampaign(t, c, interceptor.Funcs{}, bad)
	f.settle()
	f.finishRuns(func(*v1alpha1.BenchmarkRun) float64 { return 1 })
	f.settle()
	st := f.campaign()
	if st.Status.Iterations[0].Outcome != v1alpha1.IterationSucceeded {
		t.Errorf("iteration %+v, want Succeeded: bad history does not fail it", st.Status.Iterations[0])
	}
	cond := campaignCondition(t, st, v1alpha1.CampaignHistoryReady)
	if cond.Status != metav1.ConditionFalse || cond.Reason != "InvalidHistory" || !strings.Contains(cond.Message, "ConfigMap badhist-1-history") ||
		!strings.Contains(cond.Message, "not gzip") {
		t.Errorf("HistoryReady = %+v, want False, InvalidHistory, naming the ConfigMap and the problem", cond)
	}
}
