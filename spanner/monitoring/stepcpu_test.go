package monitoring_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/monitoring/apiv3/v2/monitoringpb"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/spanbench/spanbench/internal/fakemonitoring"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/capacity"
	"github.com/spanbench/spanbench/spanner/monitoring"
)

// A step measured from 12:00:30 to 12:03:30: its whole minutes end 12:02
// and 12:03; the minute ending 12:01 began before it (the previous step's
// rate or the warm-up) and must not count.
var stepFrom, stepEnd = at(12, 0, 30), at(12, 3, 30)

// highCPU is a high-priority CPU series of location with a point for each
// minute end and value.
func highCPU(location string, points map[time.Time]float64) *monitoringpb.TimeSeries {
	var ps []*monitoringpb.Point
	for end, v := range points {
		ps = append(ps, fakemonitoring.Gauge(end, v))
	}
	return fakemonitoring.Series(map[string]string{"priority": "high"}, map[string]string{"location": location}, "10^2.%", ps...)
}

// startStepCPU starts the stand-in and a reader of it whose clock starts
// at now.
func startStepCPU(t *testing.T, now time.Time) (*fakemonitoring.Server, monitoring.StepCPU, *clocktesting.FakeClock) {
	t.Helper()
	fake, client := fakeAndClient(t)
	clk := clocktesting.NewFakeClock(now)
	return fake, monitoring.StepCPU{Client: client, Instance: inst, Clock: clk}, clk
}

// judge evaluates a step with only cpu <= Recommended on instanceConfig,
// its CPU read by r over the step's window; it returns the cpu figure.
func judge(r monitoring.StepCPU, instanceConfig string) (result.SearchFigure, error) {
	cpu, note, err := r.Read(context.Background(), stepFrom, stepEnd)
	if err != nil {
		return result.SearchFigure{}, fmt.Errorf("reading the step's CPU: %w", err)
	}
	c, err := capacity.ParseCondition("cpu <= Recommended")
	if err != nil {
		return result.SearchFigure{}, err
	}
	step, err := capacity.Evaluate(capacity.SLO{c}.Resolve(instanceConfig), capacity.Measurement{Offered: 100, Seconds: 180, CPU: cpu, CPUNote: note})
	if err != nil {
		return result.SearchFigure{}, err
	}
	return step.Figures[0], nil
}

// judged is a judge's figure, or the test's end on its error.
func judged(t *testing.T, f result.SearchFigure, err error) result.SearchFigure {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// judgeNow judges on the test's goroutine.
func judgeNow(t *testing.T, r monitoring.StepCPU, instanceConfig string) result.SearchFigure {
	t.Helper()
	f, err := judge(r, instanceConfig)
	return judged(t, f, err)
}

// judgeLater judges in the background, for a reader that waits on a fake
// clock the test steps; the result is read with awaitJudged.
func judgeLater(r monitoring.StepCPU, instanceConfig string) <-chan func(*testing.T) result.SearchFigure {
	out := make(chan func(*testing.T) result.SearchFigure, 1)
	go func() {
		f, err := judge(r, instanceConfig)
		out <- func(t *testing.T) result.SearchFigure { t.Helper(); return judged(t, f, err) }
	}()
	return out
}

func TestStepCPUJudgesTheBusiestRegionAgainstTheRecommendedBound(t *testing.T) {
	fake, r, _ := startStepCPU(t, at(12, 10, 0))
	fake.Serve(monitoring.MetricCPUByPriority,
		// The leader region: a mean of 0.50 over the step's minutes; the
		// minute before the step (0.99) is another step's.
		highCPU("asia-northeast1", map[time.Time]float64{at(12, 1, 0): 0.99, at(12, 2, 0): 0.48, at(12, 3, 0): 0.52, at(12, 4, 0): 0.99}),
		highCPU("asia-northeast2", map[time.Time]float64{at(12, 1, 0): 0.99, at(12, 2, 0): 0.30, at(12, 3, 0): 0.30}),
	)
	// Multi-region: 45 %; the busiest region's 50 % fails, though the
	// regions' mean (40 %) would pass.
	f := judgeNow(t, r, "asia1")
	if !f.Measured || f.Pass || f.Value < 0.4999 || f.Value > 0.5001 {
		t.Errorf("asia1, cpu <= Recommended: figure %+v; want measured, failing, value 0.50 (the busiest region's mean over the step's own minutes)", f)
	}
	if f.Condition != "cpu <= Recommended" {
		t.Errorf("condition %q, want cpu <= Recommended", f.Condition)
	}
	// Regional: 65 %; the same 50 % passes.
	f = judgeNow(t, r, "regional-asia-northeast1")
	if !f.Measured || !f.Pass {
		t.Errorf("regional-asia-northeast1, cpu <= Recommended: figure %+v; want measured and passing at 0.50 <= 0.65", f)
	}
	for _, req := range fake.Requests() {
		if got, want := req.GetInterval().GetStartTime().AsTime(), at(12, 1, 0); !got.Equal(want) {
			t.Errorf("asked from %s, want %s: the step's first whole minute", got, want)
		}
		if got, want := req.GetInterval().GetEndTime().AsTime(), at(12, 3, 0); !got.Equal(want) {
			t.Errorf("asked to %s, want %s: the step's last whole minute", got, want)
		}
	}
}

func TestStepCPUWaitsForEveryMinuteOfEveryRegion(t *testing.T) {
	// At the step's end the last minute is published in one region only.
	fake, r, clk := startStepCPU(t, stepEnd)
	fake.Serve(monitoring.MetricCPUByPriority,
		highCPU("asia-northeast1", map[time.Time]float64{at(12, 2, 0): 0.3, at(12, 3, 0): 0.3}),
		highCPU("asia-northeast2", map[time.Time]float64{at(12, 2, 0): 0.3}),
	)
	got := judgeLater(r, "asia1")
	waitForWaiter(t, clk)
	fake.Serve(monitoring.MetricCPUByPriority,
		highCPU("asia-northeast1", map[time.Time]float64{at(12, 2, 0): 0.3, at(12, 3, 0): 0.3}),
		highCPU("asia-northeast2", map[time.Time]float64{at(12, 2, 0): 0.3, at(12, 3, 0): 0.7}),
	)
	clk.Step(monitoring.DefaultStepCPUPoll)
	select {
	case res := <-got:
		f := res(t)
		if !f.Measured || f.Pass || f.Value < 0.4999 || f.Value > 0.5001 {
			t.Errorf("figure %+v; want measured and failing at asia-northeast2's 0.50 once its last minute is in", f)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reader did not return within 10 s of the last minute being published")
	}
}

func TestStepCPUWithoutPointsIsNotMeasured(t *testing.T) {
	fake, r, clk := startStepCPU(t, stepEnd)
	// No high-priority series at all; the low priority's minutes are all
	// in, which is not enough.
	fake.Serve(monitoring.MetricCPUByPriority, fakemonitoring.Series(map[string]string{"priority": "low"},
		map[string]string{"location": "asia-northeast1"}, "10^2.%",
		fakemonitoring.Gauge(at(12, 2, 0), 0.1), fakemonitoring.Gauge(at(12, 3, 0), 0.1)))
	got := judgeLater(r, "asia1")
	// The wait ends DefaultDelay after the last whole minute (12:03): at
	// most 180 s after the step.
	deadline := at(12, 3, 0).Add(monitoring.DefaultDelay)
	for clk.Now().Before(deadline) {
		waitForWaiter(t, clk)
		clk.Step(monitoring.DefaultStepCPUPoll)
	}
	select {
	case res := <-got:
		f := res(t)
		if f.Measured || f.Pass || !strings.Contains(f.Note, "not measured") {
			t.Errorf("figure %+v; want not measured (neither a pass nor 0), with a note saying so", f)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reader did not give up within 10 s after its wait's end")
	}
}

func TestStepCPUIgnoresMinutesBeforeTheStep(t *testing.T) {
	// The high-priority series has only the minute before the step: the
	// step has no figure of its own, not the previous step's.
	fake, r, clk := startStepCPU(t, at(12, 3, 0).Add(monitoring.DefaultDelay))
	fake.Serve(monitoring.MetricCPUByPriority, highCPU("asia-northeast1", map[time.Time]float64{at(12, 1, 0): 0.99}))
	f := judgeNow(t, r, "asia1")
	if f.Measured || f.Pass || !strings.Contains(f.Note, "not measured") {
		t.Errorf("figure %+v; want not measured, with a note saying so", f)
	}
	if clk.Now() != at(12, 3, 0).Add(monitoring.DefaultDelay) {
		t.Errorf("the reader waited past its wait's end")
	}
}

func TestStepCPUOfAWindowWithoutAWholeMinuteIsNotMeasured(t *testing.T) {
	fake, r, _ := startStepCPU(t, at(12, 10, 0))
	fake.Serve(monitoring.MetricCPUByPriority,
		highCPU("asia-northeast1", map[time.Time]float64{at(12, 1, 0): 0.99, at(12, 2, 0): 0.99}))
	cpu, note, err := r.Read(context.Background(), at(12, 0, 30), at(12, 1, 50))
	if err != nil || cpu != nil || !strings.Contains(note, "no whole minute") {
		t.Errorf("a 80 s window from 12:00:30: cpu %v, note %q, error %v; want no figure, a note that it holds no whole minute", cpu, note, err)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("%d requests for a window without a whole minute, want none", n)
	}
}

// waitForWaiter waits, bounded, until the reader waits on clk.
func waitForWaiter(t *testing.T, clk *clocktesting.FakeClock) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !clk.HasWaiters(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the reader did not wait within 10 s")
		}
	}
}
