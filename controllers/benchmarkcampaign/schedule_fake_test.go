package benchmarkcampaign_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// nightly is a campaign at 02:00 Tokyo time, created at t0 (12:04:05
// in Tokyo): its first iteration is due at 17:00 UTC the same day.
func nightly(name string, policy v1alpha1.ConcurrencyPolicy) *v1alpha1.BenchmarkCampaign {
	c := testCampaign(name, 1, 1)
	tz := "Asia/Tokyo"
	c.Spec.Schedule, c.Spec.TimeZone, c.Spec.ConcurrencyPolicy = "0 2 * * *", &tz, policy
	c.CreationTimestamp = metav1.NewTime(t0)
	return c
}

var tokyo2am = time.Date(2026, 1, 2, 17, 0, 0, 0, time.UTC)

func TestCampaignScheduleFiresAtTheTimeZonesInstant(t *testing.T) {
	f := newFakeCampaign(t, nightly("tz", ""), interceptor.Funcs{})
	res := f.reconcile()
	st := f.campaign().Status
	if len(st.Iterations) != 0 {
		t.Fatalf("an iteration started at creation: %+v", st.Iterations)
	}
	if st.NextScheduleTime == nil || !st.NextScheduleTime.Time.Equal(tokyo2am) {
		t.Errorf("nextScheduleTime %v, want %v (02:00 in Tokyo)", st.NextScheduleTime, tokyo2am)
	}
	if res.RequeueAfter != tokyo2am.Sub(t0) {
		t.Errorf("requeue after %v, want %v: woken at the next schedule, no polling", res.RequeueAfter, tokyo2am.Sub(t0))
	}
	f.clock.SetTime(tokyo2am.Add(-time.Second))
	f.reconcile()
	if n := len(f.campaign().Status.Iterations); n != 0 {
		t.Fatalf("%d iterations a second before 02:00 Tokyo", n)
	}
	f.clock.SetTime(tokyo2am)
	f.settle()
	st = f.campaign().Status
	if len(st.Iterations) != 1 || !st.Iterations[0].ScheduledTime.Time.Equal(tokyo2am) || len(f.created) != 1 {
		t.Fatalf("at 02:00 Tokyo: iterations %+v, runs %v; want one scheduled at %v with its run", st.Iterations, f.created, tokyo2am)
	}
	if st.LastScheduleTime == nil || !st.LastScheduleTime.Time.Equal(tokyo2am) || !st.NextScheduleTime.Time.Equal(tokyo2am.Add(24*time.Hour)) {
		t.Errorf("lastScheduleTime %v, nextScheduleTime %v", st.LastScheduleTime, st.NextScheduleTime)
	}
}

func TestCampaignScheduleRecordsALateIterationAsMissed(t *testing.T) {
	c := nightly("late", "")
	deadline := int64(60)
	c.Spec.StartingDeadlineSeconds = &deadline
	f := newFakeCampaign(t, c, interceptor.Funcs{})
	f.clock.SetTime(tokyo2am.Add(10 * time.Minute))
	f.settle()
	st := f.campaign().Status
	if len(st.Iterations) != 1 || st.Iterations[0].Outcome != v1alpha1.IterationMissed || len(f.created) != 0 {
		t.Errorf("10 minutes late with a 60 s deadline: iterations %+v, runs %v; want one Missed, no run", st.Iterations, f.created)
	}
}

func TestCampaignScheduleConcurrencyPolicies(t *testing.T) {
	for _, tc := range []struct {
		policy       v1alpha1.ConcurrencyPolicy
		want         []v1alpha1.IterationOutcome
		firstRunGone bool
	}{
		{"", []v1alpha1.IterationOutcome{v1alpha1.IterationRunning, v1alpha1.IterationMissed}, false},
		{v1alpha1.ConcurrencyAllow, []v1alpha1.IterationOutcome{v1alpha1.IterationRunning, v1alpha1.IterationRunning}, false},
		{v1alpha1.ConcurrencyReplace, []v1alpha1.IterationOutcome{v1alpha1.IterationFailed, v1alpha1.IterationRunning}, true},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			c := nightly("pol", tc.policy)
			f := newFakeCampaign(t, c, interceptor.Funcs{})
			f.clock.SetTime(tokyo2am)
			f.settle()
			first := f.created
			f.clock.SetTime(tokyo2am.Add(24 * time.Hour))
			f.settle()
			var got []v1alpha1.IterationOutcome
			for _, it := range f.campaign().Status.Iterations {
				got = append(got, it.Outcome)
			}
			if strings.Join(outcomes(got), ",") != strings.Join(outcomes(tc.want), ",") {
				t.Errorf("outcomes %v, want %v", got, tc.want)
			}
			gone := true
			for _, run := range f.runs() {
				gone = gone && run.Name != first[0]
			}
			if gone != tc.firstRunGone {
				t.Errorf("the first iteration's running run deleted: %v, want %v", gone, tc.firstRunGone)
			}
		})
	}
}

func outcomes(os []v1alpha1.IterationOutcome) []string {
	var out []string
	for _, o := range os {
		out = append(out, string(o))
	}
	return out
}

func TestCampaignSuspendHoldsTheSchedule(t *testing.T) {
	c := nightly("held", "")
	yes := true
	c.Spec.Suspend = &yes
	f := newFakeCampaign(t, c, interceptor.Funcs{})
	f.clock.SetTime(tokyo2am.Add(time.Minute))
	res := f.reconcile()
	st := f.campaign().Status
	if len(st.Iterations) != 0 || st.NextScheduleTime != nil || res.RequeueAfter != 0 {
		t.Errorf("suspended: iterations %+v, nextScheduleTime %v, requeue %v; want none", st.Iterations, st.NextScheduleTime, res.RequeueAfter)
	}
}

func TestCampaignSuspendHoldsRequestedIterations(t *testing.T) {
	c := testCampaign("held-now", 1, 1)
	yes := true
	c.Spec.Suspend, c.Spec.RunNow = &yes, "now"
	f := newFakeCampaign(t, c, interceptor.Funcs{})
	f.settle()
	st := f.campaign().Status
	if len(st.Iterations) != 0 || len(f.created) != 0 || st.ObservedGeneration != 1 {
		t.Errorf("suspended without a schedule: iterations %+v, runs %v, observedGeneration %d; want none, none, 1",
			st.Iterations, f.created, st.ObservedGeneration)
	}
}
