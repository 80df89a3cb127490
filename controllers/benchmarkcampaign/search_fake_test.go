package benchmarkcampaign_test

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/comparison"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/capacity"
	"github.com/spanbench/spanbench/spanner/customcheck"
)

// searchCampaign is the single-vs-multi-region question as a campaign of
// capacity searches: a regional (tokyo, the baseline) and a multi-region
// (asia1) configuration of one node each, reps repetitions a cell, every
// run a search from 10 to 200 ops/s to within 5, compared in capacity
// per node and in capacity.
func searchCampaign(reps int32) *v1alpha1.BenchmarkCampaign {
	c := testCampaign("capacity", reps, 2,
		axis("region", "target.instance.config", `tokyo="regional-asia-northeast1"`, `asia1="asia1"`),
		axis("instance", "target.instance.name", `tokyo="bench-tokyo"`, `asia1="bench-asia1"`))
	c.Spec.Matrix.Zip = [][]v1alpha1.AxisName{{"region", "instance"}}
	c.Spec.Baseline = map[string]v1alpha1.AxisLabel{"region": "tokyo"}
	w := &c.Spec.Template.Spec.Workload
	w.Load = v1alpha1.LoadSpec{Search: &v1alpha1.SearchSpec{From: 10, Max: 200, Resolution: 5,
		StepDuration: metav1.Duration{Duration: time.Second}, SLO: []string{"p99 <= 20ms"}}}
	w.Duration = &metav1.Duration{Duration: 2 * time.Minute}
	c.Spec.Comparison = v1alpha1.ComparisonSpec{MinEffect: "10%", Confidence: "95%",
		Metrics: []v1alpha1.MetricSpec{{Statistic: v1alpha1.StatisticCapacityPerNode}, {Statistic: v1alpha1.StatisticCapacity}}}
	return c
}

// finishSearchRuns ends every unfinished run as the run controller ends a
// search: its merged result with the search section the manager writes
// (customcheck.PlanSearch's section, the outcome of capacity.Search over
// the steps it judged) and the same search in status.search, then
// Succeeded. Each step passes when its rate is within the run's true
// capacity, truth(run) ±3 % seeded by the run's name, so the search
// itself finds each run's capacity; edit, when not nil, changes the
// report's section afterwards (the status keeps the search's).
func (f *fakeCampaign) finishSearchRuns(truth func(run *v1alpha1.BenchmarkRun) float64, edit func(run *v1alpha1.BenchmarkRun, s *result.Search)) {
	f.t.Helper()
	for i := range f.runs() {
		run := f.runs()[i]
		if run.IsFinished() {
			continue
		}
		sec := searchSection(f.t, &run, truth(&run))
		run.Status.Search = searchStatus(sec)
		if edit != nil {
			edit(&run, sec)
		}
		d := campaignResultDoc(f.t, &run, 1)
		d.SetSearch(sec)
		finishCampaignRunWith(f.t, f.stored, &run, d)
	}
}

// searchStatus is status.search as the run controller writes it for a
// search that ended with s's outcome.
func searchStatus(s *result.Search) *v1alpha1.SearchStatus {
	o := s.Outcome
	st := &v1alpha1.SearchStatus{SLO: s.SLO, Done: o.Done, Reason: o.Reason, FailedConditions: o.FailedConditions}
	for _, step := range o.Steps {
		st.Steps = append(st.Steps, v1alpha1.SearchStepStatus{Offered: v1alpha1.FormatThroughput(step.Offered), Pass: step.Pass})
	}
	if o.Capacity > 0 {
		st.Capacity = v1alpha1.FormatThroughput(o.Capacity)
	}
	if o.CapacityPerNode > 0 {
		st.CapacityPerNode = v1alpha1.FormatThroughput(o.CapacityPerNode)
	}
	return st
}

// tokyoTwiceAsia1 is each run's true capacity: tokyo's nodes carry twice
// asia1's.
func tokyoTwiceAsia1(run *v1alpha1.BenchmarkRun) float64 {
	if run.Spec.Target.Instance.Config == "asia1" {
		return 60
	}
	return 120
}

// endSearchIteration finishes the campaign's runs with finishSearchRuns
// until its iteration has ended, at most 10 rounds.
func (f *fakeCampaign) endSearchIteration(edit func(run *v1alpha1.BenchmarkRun, s *result.Search)) v1alpha1.BenchmarkCampaignStatus {
	f.t.Helper()
	for range 10 {
		f.settle()
		for _, run := range f.runs() {
			if !run.IsFinished() && run.Spec.Workload.Load.Search == nil {
				f.t.Fatalf("run %s of a search campaign has no search: %+v", run.Name, run.Spec.Workload.Load)
			}
		}
		f.finishSearchRuns(tokyoTwiceAsia1, edit)
		if st := f.campaign().Status; len(st.Iterations) > 0 && st.Iterations[0].Outcome != v1alpha1.IterationRunning {
			break
		}
	}
	f.settle()
	st := f.campaign().Status
	if len(st.Iterations) != 1 || st.Comparison == nil {
		f.t.Fatalf("iterations %+v, comparison %+v; want one iteration compared", st.Iterations, st.Comparison)
	}
	return st
}

// searchSection is run's search section after a search of a system whose
// capacity is about truth ops/s.
func searchSection(t *testing.T, run *v1alpha1.BenchmarkRun, truth float64) *result.Search {
	t.Helper()
	w := run.Spec.Workload.Resolved()
	plan, err := customcheck.PlanSearch(&w, run.Spec.Target.Instance.Config)
	if err != nil {
		t.Fatal(err)
	}
	var seed uint64
	for _, b := range []byte(run.Name) {
		seed = seed*31 + uint64(b)
	}
	truth *= 0.97 + 0.06*rand.New(rand.NewPCG(seed, 3)).Float64()
	s, err := capacity.New(plan.Params)
	if err != nil {
		t.Fatal(err)
	}
	for range s.MaxSteps() {
		rate, ok := s.Next()
		if !ok {
			break
		}
		pass := rate <= truth
		step := result.SearchStep{Offered: rate, Pass: pass,
			Figures: []result.SearchFigure{{Condition: plan.Section.SLO[0], Value: 20000 * rate / truth, Measured: true, Pass: pass}}}
		if err := s.Record(step); err != nil {
			t.Fatal(err)
		}
	}
	sec := *plan.Section
	sec.Outcome = s.Outcome(run.Spec.Target.Instance.Capacity())
	if !sec.Outcome.Done {
		t.Fatalf("run %s: the synthetic search did not end: %+v", run.Name, sec.Outcome)
	}
	return &sec
}

// TestCampaignComparesCapacityPerNodeOfSearchRuns: a campaign whose
// template is a capacity search stamps out search runs, reads each run's
// capacity from the search section of its report, and compares the cells
// run by run: asia1's nodes carrying half of tokyo's is Regressed at
// about 0.5, in capacity per node and in capacity, each row with its
// exact Mann–Whitney interval (4+4 runs reach 95 %); the iteration's
// report holds the rows as text and JSON.
func TestCampaignComparesCapacityPerNodeOfSearchRuns(t *testing.T) {
	c := searchCampaign(4)
	f := newFakeCampaign(t, c, interceptor.Funcs{})
	st := f.endSearchIteration(nil)
	if len(st.Iterations) != 1 || st.Iterations[0].Outcome != v1alpha1.IterationSucceeded || st.Iterations[0].Succeeded != 8 {
		t.Fatalf("iterations %+v, want one Succeeded with 8 runs", st.Iterations)
	}
	if st.Comparison.Baseline != "tokyo" {
		t.Fatalf("comparison %+v, want rows against tokyo", st.Comparison)
	}
	rows := map[string]v1alpha1.ComparisonRow{}
	for _, r := range st.Comparison.Rows {
		rows[r.Variant+"/"+r.Metric] = r
	}
	for _, metric := range []string{"search capacity ops/s per node", "search capacity ops/s"} {
		r, ok := rows["asia1/"+metric]
		if !ok {
			t.Errorf("no asia1 row of %q among %v", metric, st.Comparison.Rows)
			continue
		}
		if r.Low == "" || r.High == "" {
			t.Errorf("%s: %s at %s over %s runs has no interval; want one from 4+4 runs", metric, r.Verdict, r.Ratio, r.N)
			continue
		}
		ratio, lo, hi := num(t, r.Ratio), num(t, r.Low), num(t, r.High)
		if r.Verdict != v1alpha1.VerdictRegressed || r.N != "4+4" || ratio < 0.42 || ratio > 0.58 || !(lo <= ratio && ratio <= hi && hi < 0.9) {
			t.Errorf("%s: %s at %s [%s, %s] over %s runs; want Regressed at about 0.5 with an interval below 0.9, over 4+4 runs",
				metric, r.Verdict, r.Ratio, r.Low, r.High, r.N)
		}
		if r.Statistic == "" || r.Operation != comparison.CapacityRow {
			t.Errorf("%s: operation %q statistic %q; want the search row of a capacity statistic", metric, r.Operation, r.Statistic)
		}
	}
	if st.Verdict != v1alpha1.VerdictRegressed {
		t.Errorf("campaign verdict %s, want Regressed", st.Verdict)
	}
	report := &corev1.ConfigMap{}
	if err := f.stored.Get(t.Context(), client.ObjectKey{Namespace: c.Namespace, Name: st.Iterations[0].Report}, report); err != nil {
		t.Fatalf("the iteration's report %q: %v", st.Iterations[0].Report, err)
	}
	if text := report.Data[comparison.ReportTextKey]; !strings.Contains(text, "capacity ops/s per node") || !strings.Contains(text, "Regressed") {
		t.Errorf("report text has no capacity row with its verdict:\n%s", text)
	}
}

// TestCampaignWithAnUnfinishedSearchIsInconclusive: a run whose report
// has no finished search (the manager stopped it out of time) has no
// capacity: its cell's rows are Inconclusive saying so, not a verdict on
// the three runs that finished (which alone would say Regressed).
func TestCampaignWithAnUnfinishedSearchIsInconclusive(t *testing.T) {
	c := searchCampaign(4)
	f := newFakeCampaign(t, c, interceptor.Funcs{})
	st := f.endSearchIteration(func(run *v1alpha1.BenchmarkRun, s *result.Search) {
		if run.Spec.Target.Instance.Config == "asia1" && run.Labels[v1alpha1.LabelRepetition] == "2" {
			s.Outcome.Done, s.Outcome.Reason = false, string(capacity.OutOfTime)
			run.Status.Search = searchStatus(s) // the manager's record says so too
		}
	})
	n := 0
	for _, r := range st.Comparison.Rows {
		if r.Variant == "asia1" {
			n++
			if r.Verdict != v1alpha1.VerdictInconclusive {
				t.Errorf("%s: %s; want Inconclusive for a cell with a search that did not finish", r.Metric, r.Verdict)
			}
		}
	}
	if n == 0 {
		t.Errorf("no asia1 rows in %+v", st.Comparison.Rows)
	}
	report := &corev1.ConfigMap{}
	if err := f.stored.Get(t.Context(), client.ObjectKey{Namespace: c.Namespace, Name: st.Iterations[0].Report}, report); err != nil {
		t.Fatalf("the iteration's report %q: %v", st.Iterations[0].Report, err)
	}
	if text := report.Data[comparison.ReportJSONKey]; !strings.Contains(text, "did not finish") {
		t.Errorf("the report's JSON does not say which search did not finish:\n%s", text)
	}
}

// num parses a row's number, failing the test on text that is none.
func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q is not a number: %v", s, err)
	}
	return v
}

// TestCampaignRefusesAnEditedCapacity: a report ConfigMap whose search
// section was edited after the run ended (one asia1 run's capacity
// doubled) disagrees with the run's status.search: its
// cell's rows are Invalid naming the run, the iteration fails, and no
// verdict comes of it.
func TestCampaignRefusesAnEditedCapacity(t *testing.T) {
	c := searchCampaign(4)
	f := newFakeCampaign(t, c, interceptor.Funcs{})
	var edited string
	st := f.endSearchIteration(func(run *v1alpha1.BenchmarkRun, s *result.Search) {
		if run.Spec.Target.Instance.Config == "asia1" && run.Labels[v1alpha1.LabelRepetition] == "1" {
			edited = run.Name
			s.Outcome.Capacity *= 2
			s.Outcome.CapacityPerNode *= 2
		}
	})
	if st.Iterations[0].Outcome != v1alpha1.IterationFailed {
		t.Errorf("iteration %s, want Failed for an edited report", st.Iterations[0].Outcome)
	}
	for _, r := range st.Comparison.Rows {
		if r.Variant == "asia1" && r.Verdict != v1alpha1.VerdictInvalid {
			t.Errorf("%s: %s; want Invalid for a cell whose report was edited", r.Metric, r.Verdict)
		}
	}
	cond := meta.FindStatusCondition(st.Conditions, v1alpha1.CampaignReady)
	if cond == nil || !strings.Contains(cond.Message, edited) || !strings.Contains(cond.Message, "capacity search") {
		t.Errorf("Ready = %+v; want it to name the edited run %s and its capacity search", cond, edited)
	}
}
