package v1alpha1

import (
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func cond(condType string, status metav1.ConditionStatus, at time.Time) metav1.Condition {
	return metav1.Condition{Type: condType, Status: status, Reason: "R", LastTransitionTime: metav1.NewTime(at)}
}

func condReason(condType string, status metav1.ConditionStatus, reason string, at time.Time) metav1.Condition {
	c := cond(condType, status, at)
	c.Reason = reason
	return c
}

func goodRun() *BenchmarkRun {
	return &BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "tokyo", Namespace: "bench", Generation: 1, CreationTimestamp: metav1.NewTime(t0)},
		Spec: BenchmarkRunSpec{
			Target:   TargetSpec{Project: "my-project", Instance: InstanceSpec{Name: "bench"}, Database: "ycsb"},
			Workload: goodWorkload(),
		},
	}
}

func TestDerivePhaseFollowsTheGates(t *testing.T) {
	const T, F, U = metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown
	for _, tc := range []struct {
		name  string
		conds []metav1.Condition
		want  BenchmarkRunPhase
	}{
		{"no conditions", nil, PhasePending},
		{"provisioning", []metav1.Condition{cond(ConditionTargetReady, F, t0)}, PhasePreparing},
		{"waiting for the database", []metav1.Condition{cond(ConditionPreflight, T, t0), condReason(ConditionDatabaseClaimed, F, ReasonDatabaseInUse, t0)}, PhasePending},
		{"holding the database", []metav1.Condition{condReason(ConditionDatabaseClaimed, T, ReasonDatabaseClaimed, t0), cond(ConditionTargetReady, F, t0)}, PhasePreparing},
		{"failed waiting for the database", []metav1.Condition{condReason(ConditionDatabaseClaimed, F, ReasonDatabaseInUse, t0), cond(ConditionSucceeded, F, t0)}, PhaseFailed},
		{"target unknown", []metav1.Condition{cond(ConditionTargetReady, U, t0)}, PhasePreparing},
		{"target ready", []metav1.Condition{cond(ConditionTargetReady, T, t0), cond(ConditionDatasetLoaded, F, t0)}, PhaseLoading},
		{"dataset loaded", []metav1.Condition{cond(ConditionTargetReady, T, t0), cond(ConditionDatasetLoaded, T, t0)}, PhaseWaitingForRunners},
		{"runners ready", []metav1.Condition{cond(ConditionDatasetLoaded, T, t0), cond(ConditionRunnersReady, T, t0), cond(ConditionLoadCompleted, F, t0)}, PhaseRunning},
		{"load completed", []metav1.Condition{cond(ConditionRunnersReady, T, t0), cond(ConditionLoadCompleted, T, t0)}, PhaseAggregating},
		{"succeeded", []metav1.Condition{cond(ConditionLoadCompleted, T, t0), cond(ConditionSucceeded, T, t0)}, PhaseSucceeded},
		{"failed while loading", []metav1.Condition{cond(ConditionTargetReady, T, t0), cond(ConditionDatasetLoaded, F, t0), cond(ConditionSucceeded, F, t0)}, PhaseFailed},
		{"outcome unknown is not an outcome", []metav1.Condition{cond(ConditionRunnersReady, T, t0), cond(ConditionSucceeded, U, t0)}, PhaseRunning},
	} {
		if got := DerivePhase(tc.conds); got != tc.want {
			t.Errorf("%s: DerivePhase = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestSetConditionKeepsTransitionTimeAndDerivesPhase(t *testing.T) {
	r := goodRun()
	if !r.SetCondition(ConditionTargetReady, metav1.ConditionFalse, ReasonProvisioning, "creating instance", t0) {
		t.Fatal("setting a new condition reported no change")
	}
	r.Generation = 2
	if !r.SetCondition(ConditionTargetReady, metav1.ConditionFalse, ReasonProvisioning, "creating database", t0.Add(time.Minute)) {
		t.Error("changing the message reported no change")
	}
	c := r.Status.Conditions[0]
	if !c.LastTransitionTime.Time.Equal(t0) || c.Message != "creating database" || c.ObservedGeneration != 2 {
		t.Errorf("same status: want lastTransitionTime kept at %s, new message and generation 2; got %+v", t0, c)
	}
	if r.SetCondition(ConditionTargetReady, metav1.ConditionFalse, ReasonProvisioning, "creating database", t0.Add(2*time.Minute)) {
		t.Error("setting an identical condition reported a change")
	}
	r.SetCondition(ConditionTargetReady, metav1.ConditionTrue, ReasonTargetAvailable, "", t0.Add(3*time.Minute))
	c = r.Status.Conditions[0]
	if !c.LastTransitionTime.Time.Equal(t0.Add(3 * time.Minute)) {
		t.Errorf("status change: lastTransitionTime = %s, want %s", c.LastTransitionTime, t0.Add(3*time.Minute))
	}
	if r.Status.Phase != PhaseLoading || r.Status.ObservedGeneration != 2 {
		t.Errorf("phase %s, observedGeneration %d; want Loading, 2", r.Status.Phase, r.Status.ObservedGeneration)
	}
}

func TestMarkOutcomeEndsTheRunOnce(t *testing.T) {
	r := goodRun()
	if r.IsFinished() {
		t.Fatal("a new run is finished")
	}
	r.MarkFailed(ReasonRunnerImagePullFailed, "runner 2: ErrImagePull localhost/spanbench:dev", t0)
	r.MarkFailed(ReasonDeadlineExceeded, "later", t0.Add(time.Hour))
	if !r.IsFinished() || r.Status.Phase != PhaseFailed || !r.Status.CompletionTime.Time.Equal(t0) {
		t.Errorf("after MarkFailed: finished %v, phase %s, completion %v; want true, Failed, %s", r.IsFinished(), r.Status.Phase, r.Status.CompletionTime, t0)
	}

	ok := goodRun()
	ok.MarkSucceeded(true, "3 of 4 shards", t0)
	c := ok.Status.Conditions[0]
	if c.Reason != ReasonPartialResults || !ok.Status.Partial || ok.Status.Phase != PhaseSucceeded {
		t.Errorf("partial success: reason %s, partial %v, phase %s", c.Reason, ok.Status.Partial, ok.Status.Phase)
	}
	ok = goodRun()
	ok.MarkSucceeded(false, "", t0)
	if c := ok.Status.Conditions[0]; c.Reason != ReasonCompleted || ok.Status.Partial {
		t.Errorf("complete success: reason %s, partial %v", c.Reason, ok.Status.Partial)
	}
}

func TestChildNamesAndDefaults(t *testing.T) {
	r := goodRun()
	got := []string{RunnerJobName(r), LoaderJobName(r), RunnerServiceAccountName(r), ResultConfigMapName(r)}
	want := []string{"tokyo-runners", "tokyo-loader", "tokyo-runner", "tokyo-result"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("child names (-want +got):\n%s", diff)
	}
	r.Name = strings.Repeat("a", MaxRunNameLength)
	for _, name := range []string{RunnerJobName(r), LoaderJobName(r), RunnerServiceAccountName(r), ResultConfigMapName(r)} {
		if len(name) > 63 {
			t.Errorf("child name %s of a run named at the limit is %d characters, over 63", name, len(name))
		}
	}
	if got := RunLabels(r)[LabelRun]; got != r.Name {
		t.Errorf("RunLabels[%s] = %q, want the run's name", LabelRun, got)
	}
	if got := goodRun().Replicas(); got != 1 {
		t.Errorf("Replicas() default = %d, want 1", got)
	}
	r.Spec.Runners.Replicas = ptr.To[int32](4)
	if got := r.Replicas(); got != 4 {
		t.Errorf("Replicas() = %d, want 4", got)
	}
}

func TestDeadlinesResolveDefaults(t *testing.T) {
	got := (&DeadlinesSpec{Load: dur("2h")}).Resolve()
	want := Deadlines{Prepare: 15 * time.Minute, Load: 2 * time.Hour, RunnersReady: 10 * time.Minute, Overrun: 5 * time.Minute, Aggregate: 5 * time.Minute}
	if got != want {
		t.Errorf("Resolve() = %+v, want %+v", got, want)
	}
}

func TestStageDeadlineCountsFromTheStageStart(t *testing.T) {
	const T, F = metav1.ConditionTrue, metav1.ConditionFalse
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	start := metav1.NewTime(at(30))
	for _, tc := range []struct {
		name      string
		conds     []metav1.Condition
		startTime *metav1.Time
		field     string
		want      time.Time
		ok        bool
	}{
		{"pending", nil, nil, "prepare", at(15), true},
		{"preparing", []metav1.Condition{cond(ConditionTargetReady, F, at(1))}, nil, "prepare", at(15), true},
		// Waiting for another run's database counts from creation; once
		// the run holds it, preparing gets the whole deadline.
		{"waiting for the database", []metav1.Condition{condReason(ConditionDatabaseClaimed, F, ReasonDatabaseInUse, at(1))}, nil, "prepare", at(15), true},
		{"preparing after a wait for the database", []metav1.Condition{cond(ConditionDatabaseClaimed, T, at(40)), cond(ConditionTargetReady, F, at(41))}, nil, "prepare", at(55), true},
		{"loading", []metav1.Condition{cond(ConditionTargetReady, T, at(5))}, nil, "load", at(65), true},
		{"waiting for runners", []metav1.Condition{cond(ConditionTargetReady, T, at(5)), cond(ConditionDatasetLoaded, T, at(20))}, nil, "runnersReady", at(30), true},
		// The workload runs 1m; overrun 5m, from the common start time.
		{"running", []metav1.Condition{cond(ConditionRunnersReady, T, at(29))}, &start, "overrun", at(36), true},
		{"running, start not yet recorded", []metav1.Condition{cond(ConditionRunnersReady, T, at(29))}, nil, "overrun", at(35), true},
		{"aggregating", []metav1.Condition{cond(ConditionRunnersReady, T, at(29)), cond(ConditionLoadCompleted, T, at(40))}, &start, "aggregate", at(45), true},
		{"finished", []metav1.Condition{cond(ConditionSucceeded, T, at(41))}, &start, "", time.Time{}, false},
	} {
		r := goodRun()
		r.Status.Conditions = tc.conds
		r.Status.StartTime = tc.startTime
		f, got, ok := r.StageDeadline()
		if f != tc.field || !got.Equal(tc.want) || ok != tc.ok {
			t.Errorf("%s: StageDeadline() = %q, %s, %v; want %q, %s, %v", tc.name, f, got, ok, tc.field, tc.want, tc.ok)
		}
	}
	r := goodRun()
	r.CreationTimestamp = metav1.Time{}
	if _, _, ok := r.StageDeadline(); ok {
		t.Error("a run without a creation time has a prepare deadline")
	}
}

func TestThroughputAndLatencyFormats(t *testing.T) {
	for in, want := range map[float64]string{812.44: "812.4", 812.45001: "812.5", 0: "0.0", -1: "0.0", 12000: "12000.0",
		// 9.2e18 ops over a nanosecond: the schema holds 24 characters.
		9.2e27: "1000000000000000000.0"} {
		if got := FormatThroughput(in); got != want {
			t.Errorf("FormatThroughput(%v) = %q, want %q", in, got, want)
		}
	}
	if v, err := ParseThroughput("812.4"); err != nil || v != 812.4 {
		t.Errorf(`ParseThroughput("812.4") = %v, %v`, v, err)
	}
	for _, bad := range []string{"", "fast", "-1", "+Inf"} {
		if _, err := ParseThroughput(bad); err == nil {
			t.Errorf("ParseThroughput(%q) accepted a malformed throughput", bad)
		}
	}
	for us, want := range map[int64]string{4211: "4.211ms", 1_250_000: "1.25s", 850: "850µs"} {
		if got := LatencyFromMicros(us).Duration.String(); got != want {
			t.Errorf("LatencyFromMicros(%d) = %s, want %s", us, got, want)
		}
	}
}

// TestDecimalFormatKeepsSmallFigures: a figure such as an error ratio of
// 1e-05 reads back as itself (a percentage with two decimals read it back
// as 0), rounded to 12 significant digits, in a form that fits the
// schema's pattern and 40 characters whatever the value; what is not a
// non-negative number renders as "0" and is refused when read.
func TestDecimalFormatKeepsSmallFigures(t *testing.T) {
	schema := regexp.MustCompile(`^[0-9]+([.][0-9]+)?$`)
	for in, want := range map[float64]string{1e-05: "0.00001", 0.0124: "0.0124", 12.345678: "12.345678", 1.0 / 3: "0.333333333333",
		0: "0", -1: "0", math.NaN(): "0", math.Inf(1): "0", 1e-30: "0", 1e30: "1000000000000000000",
		1.23456789012345e-20: "0.0000000000000000000123456789012"} {
		got := FormatDecimal(in)
		if got != want || len(got) > 40 || !schema.MatchString(got) {
			t.Errorf("FormatDecimal(%v) = %q, want %q (at most 40 characters, no exponent)", in, got, want)
		}
	}
	if v, err := ParseDecimal(FormatDecimal(1e-05)); err != nil || v != 1e-05 {
		t.Errorf("1e-05 read back as %v (%v)", v, err)
	}
	for _, bad := range []string{"", "NaN", "-0.1", "Inf", "0.10%"} {
		if v, err := ParseDecimal(bad); err == nil {
			t.Errorf("ParseDecimal(%q) = %v; want it refused", bad, v)
		}
	}
}

func TestBenchmarkRunValidateNamesTheField(t *testing.T) {
	if errs := goodRun().Validate(); len(errs) > 0 {
		t.Fatalf("a good run does not validate: %v", errs)
	}
	for _, tc := range []struct {
		name   string
		mutate func(*BenchmarkRun)
		field  string
	}{
		{"name with dots", func(r *BenchmarkRun) { r.Name = "run.1" }, "metadata.name"},
		{"name too long", func(r *BenchmarkRun) { r.Name = strings.Repeat("a", MaxRunNameLength+1) }, "metadata.name"},
		{"name starting with a digit", func(r *BenchmarkRun) { r.Name = "1run" }, "metadata.name"},
		{"bad rate", func(r *BenchmarkRun) { r.Spec.Workload.Load.Rate = ptr.To[int32](0) }, "spec.workload.load.rate"},
		{"bad project", func(r *BenchmarkRun) { r.Spec.Target.Project = "P" }, "spec.target.project"},
		{"zero replicas", func(r *BenchmarkRun) { r.Spec.Runners.Replicas = ptr.To[int32](0) }, "spec.runners.replicas"},
		{"too many tolerations", func(r *BenchmarkRun) { r.Spec.Runners.Tolerations = make([]Toleration, 33) }, "spec.runners.tolerations"},
		{"long region", func(r *BenchmarkRun) { r.Spec.Runners.Region = strings.Repeat("r", 64) }, "spec.runners.region"},
		{"zero deadline", func(r *BenchmarkRun) { r.Spec.Deadlines.Prepare = dur("0s") }, "spec.deadlines.prepare"},
		{"deadline over a week", func(r *BenchmarkRun) { r.Spec.Deadlines.Aggregate = dur("169h") }, "spec.deadlines.aggregate"},
	} {
		r := goodRun()
		tc.mutate(r)
		errs := r.Validate()
		found := false
		for _, e := range errs {
			found = found || e.Field == tc.field
		}
		if !found {
			t.Errorf("%s: want an error at %s, got %v", tc.name, tc.field, errs)
		}
	}
}
