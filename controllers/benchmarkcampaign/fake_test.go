package benchmarkcampaign_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/comparison"
	"github.com/spanbench/spanbench/controllers/benchmarkcampaign"
	"github.com/spanbench/spanbench/controllers/runreport"
	"github.com/spanbench/spanbench/internal/runtest"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
	"github.com/spanbench/spanbench/runner/pod"
	"github.com/spanbench/spanbench/runner/protocol"
)

// The campaign controller's decisions, against controller-runtime's fake
// client (see reconcile_fake_test.go for why a fake here). The run
// controller does not run: tests end runs by writing their status and
// report as it would (finishCampaignRun).

// fakeCampaign is the campaign reconciler over a fake API server.
type fakeCampaign struct {
	t      *testing.T
	stored client.WithWatch
	r      *benchmarkcampaign.BenchmarkCampaignReconciler
	clock  *clocktesting.FakeClock
	key    client.ObjectKey
	funcs  interceptor.Funcs
	// created are the names of the runs created so far, in order.
	created []string
}

func newFakeCampaign(t *testing.T, c *v1alpha1.BenchmarkCampaign, funcs interceptor.Funcs, objs ...client.Object) *fakeCampaign {
	t.Helper()
	stored := fake.NewClientBuilder().WithScheme(scheme).
		WithStatusSubresource(&v1alpha1.BenchmarkCampaign{}, &v1alpha1.BenchmarkRun{}).
		WithObjects(append(objs, c)...).Build()
	f := &fakeCampaign{t: t, stored: stored, clock: clocktesting.NewFakeClock(t0), key: client.ObjectKeyFromObject(c)}
	create := funcs.Create
	funcs.Create = func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		var err error
		if create != nil {
			err = create(ctx, cl, obj, opts...)
		} else {
			err = cl.Create(ctx, obj, opts...)
		}
		if _, ok := obj.(*v1alpha1.BenchmarkRun); ok && err == nil {
			f.created = append(f.created, obj.GetName())
		}
		return err
	}
	f.funcs = funcs
	f.restart()
	return f
}

// restart builds a new reconciler over the same API server: a restarted
// manager, with nothing in memory.
func (f *fakeCampaign) restart() {
	cl := interceptor.NewClient(f.stored, f.funcs)
	f.r = &benchmarkcampaign.BenchmarkCampaignReconciler{Client: cl, APIReader: cl, Scheme: scheme,
		Recorder: record.NewFakeRecorder(100), Clock: f.clock, Arrivals: pod.RunArrivals}
}

func (f *fakeCampaign) reconcile() ctrl.Result {
	f.t.Helper()
	res, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: f.key})
	if err != nil {
		f.t.Fatalf("Reconcile: %v", err)
	}
	return res
}

// settle reconciles until a pass creates nothing and starts nothing, at
// most 10 passes.
func (f *fakeCampaign) settle() {
	f.t.Helper()
	for range 10 {
		n, iterations := len(f.created), len(f.campaign().Status.Iterations)
		f.reconcile()
		if len(f.created) == n && len(f.campaign().Status.Iterations) == iterations {
			return
		}
	}
	f.t.Fatal("the campaign did not settle in 10 passes")
}

func (f *fakeCampaign) campaign() *v1alpha1.BenchmarkCampaign {
	f.t.Helper()
	c := &v1alpha1.BenchmarkCampaign{}
	if err := f.stored.Get(context.Background(), f.key, c); err != nil {
		f.t.Fatal(err)
	}
	return c
}

func (f *fakeCampaign) runs() []v1alpha1.BenchmarkRun {
	f.t.Helper()
	list := &v1alpha1.BenchmarkRunList{}
	if err := f.stored.List(context.Background(), list, client.InNamespace(f.key.Namespace)); err != nil {
		f.t.Fatal(err)
	}
	return list.Items
}

// finishRuns ends every unfinished run as the run controller would: a
// report ConfigMap, then Succeeded with status.report; latency is scaled
// by scale(run).
func (f *fakeCampaign) finishRuns(scale func(run *v1alpha1.BenchmarkRun) float64) {
	f.t.Helper()
	for i := range f.runs() {
		run := f.runs()[i]
		if !run.IsFinished() {
			finishCampaignRun(f.t, f.stored, &run, scale(&run))
		}
	}
}

// finishCampaignRun writes the run's report and marks it Succeeded.
func finishCampaignRun(t *testing.T, c client.Client, run *v1alpha1.BenchmarkRun, scale float64) {
	t.Helper()
	finishCampaignRunWith(t, c, run, campaignResultDoc(t, run, scale))
}

// finishCampaignRunWith writes d as the run's report and marks it
// Succeeded.
func finishCampaignRunWith(t *testing.T, c client.Client, run *v1alpha1.BenchmarkRun, d *result.Document) {
	t.Helper()
	data, err := protocol.EncodeResult(d)
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ResultConfigMapName(run), Namespace: run.Namespace,
		Labels: v1alpha1.RunLabels(run)}, BinaryData: map[string][]byte{runreport.ReportKey: data}}
	writeReportAndSucceed(t, c, run, cm)
}

func writeReportAndSucceed(t *testing.T, c client.Client, run *v1alpha1.BenchmarkRun, cm *corev1.ConfigMap) {
	t.Helper()
	if err := c.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	run.Status.Report = &v1alpha1.ReportReference{ConfigMapName: cm.Name, Key: runreport.ReportKey}
	run.MarkSucceeded(false, "done (test)", t0)
	if err := c.Status().Update(context.Background(), run); err != nil {
		t.Fatal(err)
	}
}

// campaignResultDoc is a finalized merged result of run, valid against
// it as the run controller's aggregation writes it (its recorded spec,
// its intervals, one shard per runner): each operation's latencies about
// 1 ms × scale, as many per interval as its share of the rate, seeded by
// the run's name. It sets the run's start time when it has none.
func campaignResultDoc(t *testing.T, run *v1alpha1.BenchmarkRun, scale float64) *result.Document {
	t.Helper()
	if run.Status.StartTime == nil {
		run.Status.StartTime = &metav1.Time{Time: t0}
	}
	w := run.Spec.Workload.Resolved()
	start, n := run.Status.StartTime.Time, int(run.Replicas())
	e, err := protocol.ResultExpectation(run.Name, &run.Spec.Workload, start, run.Spec.Deadlines.Resolve().Overrun, -1, n)
	if err != nil {
		t.Fatal(err)
	}
	var seed uint64
	for _, b := range []byte(run.Name) {
		seed = seed*31 + uint64(b)
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	interval := w.Interval.Duration
	intervals := int((w.TotalDuration() + interval - 1) / interval)
	perInterval := max(1, int(float64(ptr.Deref(w.Load.Rate, 100))*interval.Seconds())/len(w.Operations)/n)
	m := result.NewCheckedMerger(e)
	for i := range n {
		d := &result.Document{SchemaVersion: result.SchemaVersion, Run: run.Name, Spec: e.Spec, Start: start, End: start.Add(w.TotalDuration()),
			IntervalSeconds: interval.Seconds(), Target: result.Target{Endpoint: "emulator"},
			Shards: []result.Shard{{Index: i, Count: n, Started: start, Ended: start.Add(w.TotalDuration())}}}
		for in := range intervals {
			iv := result.Interval{Index: in}
			for _, op := range w.Operations {
				h := histogram.New()
				for range perInterval {
					if err := h.RecordValue(int64(1000 * scale * (1 + 0.2*rng.ExpFloat64()))); err != nil {
						t.Fatal(err)
					}
				}
				o, err := result.NewIntervalOperation(op.Name, result.Counts{OK: uint64(perInterval)}, h, h, histogram.New())
				if err != nil {
					t.Fatal(err)
				}
				iv.Operations = append(iv.Operations, o)
			}
			d.Intervals = append(d.Intervals, iv)
		}
		if err := result.Finalize(d); err != nil {
			t.Fatal(err)
		}
		if err := m.Add(d); err != nil {
			t.Fatalf("shard %d of run %s's test result: %v", i, run.Name, err)
		}
	}
	d, err := m.Result()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// testCampaign is a campaign without a schedule over runtest's run, with
// the given axes.
func testCampaign(name string, reps, maxParallel int32, axes ...v1alpha1.MatrixAxis) *v1alpha1.BenchmarkCampaign {
	c := &v1alpha1.BenchmarkCampaign{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: runtest.Namespace, UID: "uid-" + "campaign-" + "x", Generation: 1},
		Spec: v1alpha1.BenchmarkCampaignSpec{
			Template:    v1alpha1.BenchmarkRunTemplate{Spec: campaignTemplateSpec()},
			Repetitions: &reps, MaxParallel: &maxParallel,
		},
	}
	c.UID = "uid-campaign-" + "1"
	if len(axes) > 0 {
		c.Spec.Matrix = &v1alpha1.MatrixSpec{Axes: axes}
	}
	return c
}

// campaignTemplateSpec is runtest's run measured for 20 one-second
// intervals: enough for a one-repetition comparison's bootstrap.
func campaignTemplateSpec() v1alpha1.BenchmarkRunSpec {
	spec := runtest.Run("template").Obj().Spec
	spec.Workload.Duration = &metav1.Duration{Duration: 20 * time.Second}
	spec.Workload.Interval = &metav1.Duration{Duration: time.Second}
	return spec
}

// axis is a matrix axis; values are label=JSON pairs.
func axis(name, path string, values ...string) v1alpha1.MatrixAxis {
	a := v1alpha1.MatrixAxis{Name: name, Path: path}
	for _, v := range values {
		label, raw, _ := strings.Cut(v, "=")
		a.Values = append(a.Values, v1alpha1.AxisValue{Label: label, Value: apiextensionsv1.JSON{Raw: []byte(raw)}})
	}
	return a
}

// databases is an axis giving each cell its own database.
func databases(labels ...string) v1alpha1.MatrixAxis {
	var vals []string
	for _, l := range labels {
		vals = append(vals, fmt.Sprintf(`%s="db-%s"`, l, l))
	}
	return axis("db", "target.database", vals...)
}

// variants are the variant and repetition labels of runs, as "a/1".
func variants(runs []v1alpha1.BenchmarkRun, names []string) []string {
	byName := map[string]*v1alpha1.BenchmarkRun{}
	for i := range runs {
		byName[runs[i].Name] = &runs[i]
	}
	var out []string
	for _, n := range names {
		l := byName[n].Labels
		out = append(out, l[v1alpha1.LabelVariant]+"/"+l[v1alpha1.LabelRepetition])
	}
	return out
}

func unfinished(runs []v1alpha1.BenchmarkRun) int {
	n := 0
	for i := range runs {
		if !runs[i].IsFinished() {
			n++
		}
	}
	return n
}

func TestCampaignStartsRunsInterleavedOneDatabaseAtATime(t *testing.T) {
	// Both cells use one database: never two runs at once, whatever
	// maxParallel says, and the creation order is A B A B.
	c := testCampaign("inter", 2, 4, axis("rate", "workload.load.rate", "slow=50", "fast=100"))
	f := newFakeCampaign(t, c, interceptor.Funcs{})
	for range 4 {
		f.settle()
		if n := unfinished(f.runs()); n != 1 {
			t.Fatalf("%d runs active on one database after %v, want 1", n, f.created)
		}
		f.finishRuns(func(*v1alpha1.BenchmarkRun) float64 { return 1 })
	}
	f.settle()
	if got, want := variants(f.runs(), f.created), []string{"slow/1", "fast/1", "slow/2", "fast/2"}; !slices.Equal(got, want) {
		t.Errorf("runs created in order %v, want %v (Interleaved)", got, want)
	}
}

func TestCampaignRespectsMaxParallel(t *testing.T) {
	c := testCampaign("par", 1, 2, databases("a", "b", "c"))
	f := newFakeCampaign(t, c, interceptor.Funcs{})
	f.settle()
	if got := variants(f.runs(), f.created); !slices.Equal(got, []string{"a/1", "b/1"}) {
		t.Fatalf("created %v with maxParallel 2, want [a/1 b/1]", got)
	}
	if got := f.campaign().Status.Active; len(got) != 2 {
		t.Errorf("status.active = %v, want the 2 runs", got)
	}
	f.finishRuns(func(*v1alpha1.BenchmarkRun) float64 { return 1 })
	f.settle()
	if got := variants(f.runs(), f.created); !slices.Equal(got, []string{"a/1", "b/1", "c/1"}) {
		t.Errorf("created %v after two ended, want c/1 next", got)
	}
}

func TestCampaignRunsCarryLabelsAndOwnerButNoTrackingLabels(t *testing.T) {
	c := testCampaign("labels", 1, 1)
	c.Spec.Template.Metadata.Labels = map[string]string{"team": "db", "app.kubernetes.io/instance": "argo-app", "argocd.argoproj.io/instance": "x"}
	c.Spec.Template.Metadata.Annotations = map[string]string{"note": "n", "argocd.argoproj.io/tracking-id": "app:x"}
	f := newFakeCampaign(t, c, interceptor.Funcs{})
	f.settle()
	runs := f.runs()
	if len(runs) != 1 {
		t.Fatalf("%d runs, want 1", len(runs))
	}
	run, it := runs[0], f.campaign().Status.Iterations[0]
	want := map[string]string{"team": "db", v1alpha1.LabelCampaign: "labels", v1alpha1.LabelIteration: it.Name,
		v1alpha1.LabelVariant: "template", v1alpha1.LabelRepetition: "1"}
	if fmt.Sprint(run.Labels) != fmt.Sprint(want) {
		t.Errorf("labels %v, want %v", run.Labels, want)
	}
	if fmt.Sprint(run.Annotations) != fmt.Sprint(map[string]string{"note": "n"}) {
		t.Errorf("annotations %v, want only note", run.Annotations)
	}
	if owner := metav1.GetControllerOf(&run); owner == nil || owner.Kind != "BenchmarkCampaign" || owner.Name != "labels" {
		t.Errorf("controller of the run = %v, want the campaign", owner)
	}
	if wantName := it.Name + "-" + strings.Split(run.Name, "-")[2] + "-r1"; run.Name != wantName {
		t.Errorf("run name %s, want <iteration>-<cell hash>-r1 = %s", run.Name, wantName)
	}
}

// firstRunName is the name the campaign's first run gets at t0.
func firstRunName(t *testing.T, c *v1alpha1.BenchmarkCampaign) string {
	t.Helper()
	f := newFakeCampaign(t, c.DeepCopy(), interceptor.Funcs{})
	f.settle()
	if len(f.created) == 0 {
		t.Fatal("no run created")
	}
	return f.created[0]
}

func TestCampaignRefusesARunItDidNotMake(t *testing.T) {
	c := testCampaign("clash", 1, 1)
	name := firstRunName(t, c)
	squatter := runtest.Run(name).Obj()
	f := newFakeCampaign(t, c, interceptor.Funcs{}, squatter)
	f.settle()
	got := f.campaign()
	cond := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.CampaignStalled)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != v1alpha1.ReasonNameConflict || !strings.Contains(cond.Message, name) {
		t.Errorf("Stalled = %+v, want True NameConflict naming %s", cond, name)
	}
	run := &v1alpha1.BenchmarkRun{}
	if err := f.stored.Get(context.Background(), client.ObjectKeyFromObject(squatter), run); err != nil {
		t.Fatal(err)
	}
	if metav1.GetControllerOf(run) != nil || len(run.Labels) != 0 {
		t.Errorf("the squatting run was edited: owner %v, labels %v", metav1.GetControllerOf(run), run.Labels)
	}
}

func TestCampaignAdoptsAnUncontrolledRunWithItsLabels(t *testing.T) {
	c := testCampaign("adopt", 1, 1)
	name := firstRunName(t, c)
	f0 := newFakeCampaign(t, c.DeepCopy(), interceptor.Funcs{})
	f0.settle()
	orphan := f0.runs()[0].DeepCopy()
	orphan.OwnerReferences, orphan.ResourceVersion = nil, ""
	f := newFakeCampaign(t, c, interceptor.Funcs{}, orphan)
	f.settle()
	run := &v1alpha1.BenchmarkRun{}
	if err := f.stored.Get(context.Background(), client.ObjectKey{Namespace: c.Namespace, Name: name}, run); err != nil {
		t.Fatal(err)
	}
	if owner := metav1.GetControllerOf(run); owner == nil || owner.Name != "adopt" {
		t.Errorf("the orphan run with the campaign's labels was not adopted: controller %v", owner)
	}
	if cond := meta.FindStatusCondition(f.campaign().Status.Conditions, v1alpha1.CampaignStalled); cond == nil || cond.Status != metav1.ConditionFalse {
		t.Errorf("Stalled = %+v after adoption, want False", cond)
	}
}

func TestCampaignStatusConflictRequeues(t *testing.T) {
	c := testCampaign("conflict", 1, 1)
	f := newFakeCampaign(t, c, interceptor.Funcs{SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
		return apierrors.NewConflict(schema.GroupResource{Resource: "benchmarkcampaigns"}, "conflict", fmt.Errorf("injected"))
	}})
	res := f.reconcile()
	if res.RequeueAfter == 0 {
		t.Errorf("a status conflict returned %+v, want a requeue", res)
	}
	if n := len(f.campaign().Status.Iterations); n != 0 || len(f.created) != 0 {
		t.Errorf("a pass whose status write conflicted left %d iterations and created %v", n, f.created)
	}
}

func TestCampaignIsIdempotentAcrossRestarts(t *testing.T) {
	c := testCampaign("idem", 2, 2, databases("a", "b"))
	f := newFakeCampaign(t, c, interceptor.Funcs{})
	f.reconcile() // records the iteration; its runs come next pass
	it := f.campaign().Status.Iterations[0].Name
	f.clock.Step(time.Hour)
	f.restart() // a manager restarted an hour later
	f.settle()
	if len(f.created) != 2 {
		t.Fatalf("created %v, want a/1 and b/1", f.created)
	}
	for _, name := range f.created {
		if !strings.HasPrefix(name, it+"-") {
			t.Errorf("run %s is not named after the recorded iteration %s", name, it)
		}
	}
	status := f.campaign().Status
	f.restart() // and restarted again
	f.reconcile()
	f.reconcile()
	if len(f.created) != 2 {
		t.Errorf("passes without change created %v", f.created[2:])
	}
	if got := f.campaign().Status; fmt.Sprint(got.Iterations) != fmt.Sprint(status.Iterations) {
		t.Errorf("iterations changed without a cause: %+v, was %+v", got.Iterations, status.Iterations)
	}
}

func TestCampaignRunNowStartsExactlyOneIteration(t *testing.T) {
	c := testCampaign("now", 1, 1)
	f := newFakeCampaign(t, c, interceptor.Funcs{})
	f.settle()
	f.finishRuns(func(*v1alpha1.BenchmarkRun) float64 { return 1 })
	f.settle()
	if n := len(f.campaign().Status.Iterations); n != 1 {
		t.Fatalf("%d iterations after the first generation, want 1", n)
	}
	got := f.campaign()
	got.Spec.RunNow = "2026-11-24"
	got.Generation = 2 // the API server bumps it on a spec change; the fake client does not
	if err := f.stored.Update(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(time.Minute)
	f.settle()
	f.finishRuns(func(*v1alpha1.BenchmarkRun) float64 { return 1 })
	f.settle()
	f.reconcile()
	st := f.campaign().Status
	if len(st.Iterations) != 2 || len(f.created) != 2 {
		t.Errorf("runNow gave %d iterations and runs %v, want 2 and 2", len(st.Iterations), f.created)
	}
	if st.LastRunNow != "2026-11-24" {
		t.Errorf("lastRunNow = %q", st.LastRunNow)
	}
}

func TestCampaignComparesAnEndedIteration(t *testing.T) {
	// One repetition a cell: the comparison bootstraps over the runs'
	// intervals, which sees a 50 % shift.
	c := testCampaign("cmp", 1, 1, axis("rate", "workload.load.rate", "base=50", "slow=100"))
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
	st := f.campaign().Status
	if len(st.Iterations) != 1 || st.Iterations[0].Outcome != v1alpha1.IterationSucceeded || st.Iterations[0].Succeeded != 2 {
		t.Fatalf("iterations %+v, want one Succeeded with 2 runs", st.Iterations)
	}
	if st.Comparison == nil || st.Comparison.Baseline != "base" || len(st.Comparison.Rows) == 0 {
		t.Fatalf("comparison %+v, want rows against base", st.Comparison)
	}
	if st.Verdict != v1alpha1.VerdictRegressed || st.Iterations[0].Verdict != v1alpha1.VerdictRegressed {
		t.Errorf("verdict %s (iteration %s), want Regressed for 50%% slower", st.Verdict, st.Iterations[0].Verdict)
	}
	for typ, want := range map[string]metav1.ConditionStatus{v1alpha1.CampaignReady: metav1.ConditionTrue,
		v1alpha1.CampaignReconciling: metav1.ConditionFalse, v1alpha1.CampaignRegressed: metav1.ConditionTrue, v1alpha1.CampaignStalled: metav1.ConditionFalse} {
		if cond := meta.FindStatusCondition(st.Conditions, typ); cond == nil || cond.Status != want {
			t.Errorf("%s = %+v, want %s", typ, cond, want)
		}
	}
	if st.ObservedGeneration != 1 || len(st.Active) != 0 || st.LastSuccessfulTime == nil {
		t.Errorf("observedGeneration %d, active %v, lastSuccessfulTime %v", st.ObservedGeneration, st.Active, st.LastSuccessfulTime)
	}
	report := &corev1.ConfigMap{}
	if err := f.stored.Get(context.Background(), client.ObjectKey{Namespace: c.Namespace, Name: st.Iterations[0].Report}, report); err != nil {
		t.Fatalf("the iteration's report %q: %v", st.Iterations[0].Report, err)
	}
	if text := report.Data[comparison.ReportTextKey]; !strings.Contains(text, "slow") || !strings.Contains(text, "Regressed") ||
		!strings.Contains(report.Data[comparison.ReportJSONKey], `"verdict":"Regressed"`) {
		t.Errorf("report %s: text\n%s\njson %s; want every row, as text and JSON", report.Name, text, report.Data[comparison.ReportJSONKey])
	}
}

func TestCampaignReportsAMalformedResultAsACondition(t *testing.T) {
	c := testCampaign("bad", 1, 1, axis("rate", "workload.load.rate", "base=50", "other=100"))
	f := newFakeCampaign(t, c, interceptor.Funcs{})
	for range 2 {
		f.settle()
		for _, run := range f.runs() {
			if !run.IsFinished() {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ResultConfigMapName(&run), Namespace: run.Namespace,
					Labels: v1alpha1.RunLabels(&run)}, BinaryData: map[string][]byte{runreport.ReportKey: []byte("not gzip")}}
				writeReportAndSucceed(t, f.stored, &run, cm)
			}
		}
	}
	f.settle()
	st := f.campaign().Status
	if st.Iterations[0].Outcome != v1alpha1.IterationFailed {
		t.Errorf("outcome %s, want Failed", st.Iterations[0].Outcome)
	}
	cond := meta.FindStatusCondition(st.Conditions, v1alpha1.CampaignReady)
	if cond == nil || cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, "unreadable result") {
		t.Errorf("Ready = %+v, want False naming the unreadable result", cond)
	}
}
