package benchmarkrun_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/monitoring/apiv3/v2/monitoringpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun/serverfigures"
	"github.com/spanbench/spanbench/internal/fakemonitoring"
	"github.com/spanbench/spanbench/internal/runtest"
	"github.com/spanbench/spanbench/spanner/monitoring"
)

// cpuSearchRun is a started two-runner search on a Cloud Spanner
// multi-region instance (asia1: Recommended is 45 %) whose SLO bounds the
// high-priority CPU, its steps 5 s of warm-up and 3 min measured, the
// manager reading Cloud Monitoring from the stand-in.
func cpuSearchRun(t *testing.T) (*fakeReconcile, *v1alpha1.BenchmarkRun, time.Time, *fakemonitoring.Server) {
	t.Helper()
	f, run, start := searchRunOf(t, runtest.Run("s").CloudSpanner(), 50*time.Minute, func(run *v1alpha1.BenchmarkRun) {
		run.Spec.Target.Instance.Config = "asia1"
		run.Spec.Workload.Load.Search.StepDuration = metav1.Duration{Duration: 3 * time.Minute}
		run.Spec.Workload.Load.Search.SLO = []string{"p99(read) <= 20ms", "cpu <= Recommended"}
	})
	fake, err := fakemonitoring.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Stop)
	mc, err := monitoring.NewClient(context.Background(), monitoring.Endpoint{Address: fake.Addr, Options: fake.ClientOptions()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mc.Close() })
	f.r.ServerMetrics = serverfigures.ServerMetricsConfig{Client: mc}
	return f, run, start, fake
}

// stepMinutes are the ends of the whole minutes of step 0's measured
// window (from 5 s after start to 3 min 5 s after it).
func stepMinutes(start time.Time) []time.Time {
	from, end := start.Add(5*time.Second), start.Add(3*time.Minute+5*time.Second)
	var out []time.Time
	for m := from.Truncate(time.Minute).Add(time.Minute); !m.After(end); m = m.Add(time.Minute) {
		if !m.Add(-time.Minute).Before(from) {
			out = append(out, m)
		}
	}
	return out
}

// serveHighCPU serves high-priority CPU of location at v for each minute.
func serveHighCPU(location string, v float64, minutes []time.Time) *monitoringpb.TimeSeries {
	var ps []*monitoringpb.Point
	for _, m := range minutes {
		ps = append(ps, fakemonitoring.Gauge(m, v))
	}
	return fakemonitoring.Series(map[string]string{"priority": "high"}, map[string]string{"location": location}, "10^2.%", ps...)
}

// TestSearchStepWaitsForItsCPUAndFailsOnTheBusiestRegion: with every
// runner's report in, a step whose SLO bounds the CPU is judged only once
// Cloud Monitoring has every minute of it (the controller comes back
// rather than judge on part of them); then the busiest region's 50 %
// fails cpu <= Recommended (45 % on a multi-region instance), though the
// regions' mean (40 %) would pass, and the status shows the figure.
func TestSearchStepWaitsForItsCPUAndFailsOnTheBusiestRegion(t *testing.T) {
	f, run, start, fake := cpuSearchRun(t)
	minutes := stepMinutes(start)
	f.clock.SetTime(start.Add(3*time.Minute + 5*time.Second + 500*time.Millisecond))
	reportStep(t, f, run, start, 0, 0, 10, 2*time.Millisecond)
	reportStep(t, f, run, start, 1, 0, 10, 2*time.Millisecond)
	fake.Serve(monitoring.MetricCPUByPriority, serveHighCPU("asia-northeast1", 0.5, minutes),
		serveHighCPU("asia-northeast2", 0.3, minutes[:len(minutes)-1]))
	res, err := f.reconcile(run)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := publishedStep(t, f, run); ok {
		t.Fatalf("step %d was published with asia-northeast2's last CPU minute not yet in Cloud Monitoring", s.Step)
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > monitoring.DefaultStepCPUPoll {
		t.Fatalf("requeue after %s; want to look again within %s for the CPU minutes", res.RequeueAfter, monitoring.DefaultStepCPUPoll)
	}
	fake.Serve(monitoring.MetricCPUByPriority, serveHighCPU("asia-northeast1", 0.5, minutes),
		serveHighCPU("asia-northeast2", 0.3, minutes))
	f.clock.Step(res.RequeueAfter)
	if _, err := f.reconcile(run); err != nil {
		t.Fatal(err)
	}
	if next, ok := publishedStep(t, f, run); !ok || next.Step != 1 || next.Rate != 10 {
		t.Fatalf("published %+v (%v); want step 1 at 10 ops/s again: step 0 failed on cpu and a failure is confirmed", next, ok)
	}
	st := f.run(run).Status.Search.Steps
	if len(st) != 1 || st[0].Pass || st[0].CPU != "50.0%" {
		t.Fatalf("status steps %+v; want step 0 failed with CPU 50.0%%, the busiest region's", st)
	}
	cpu := st[0].Figures[1]
	if cpu.Condition != "cpu <= Recommended" || !cpu.Measured || cpu.Pass || !strings.HasPrefix(cpu.Value, "50") || cpu.BaseValue != "0.5" {
		t.Errorf("cpu figure %+v; want cpu <= Recommended measured at 50 %% and failing (45 %% on asia1)", cpu)
	}
}

// TestSearchStepWhoseCPUNeverArrivesIsNotMeasured: Cloud Monitoring has
// none of the step's minutes: the step waits for them until the wait's
// end (DefaultDelay after its last whole minute), not a second less, then
// is judged without the cpu figure, which is not measured (neither 0 nor
// a pass), and the search goes on.
func TestSearchStepWhoseCPUNeverArrivesIsNotMeasured(t *testing.T) {
	f, run, start, _ := cpuSearchRun(t)
	minutes := stepMinutes(start)
	waitEnd := minutes[len(minutes)-1].Add(monitoring.DefaultDelay)
	f.clock.SetTime(waitEnd.Add(-time.Second))
	reportStep(t, f, run, start, 0, 0, 10, 2*time.Millisecond)
	reportStep(t, f, run, start, 1, 0, 10, 2*time.Millisecond)
	res, err := f.reconcile(run)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := publishedStep(t, f, run); ok || res.RequeueAfter != time.Second {
		t.Fatalf("a second before the wait's end: published %+v (%v), requeue after %s; want no step yet, a look again at the wait's end", s, ok, res.RequeueAfter)
	}
	f.clock.Step(res.RequeueAfter)
	if _, err := f.reconcile(run); err != nil {
		t.Fatal(err)
	}
	if next, ok := publishedStep(t, f, run); !ok || next.Step != 1 || next.Rate != 20 {
		t.Fatalf("published %+v (%v); want step 1 at 20 ops/s: step 0 passed p99 and its cpu is not measured", next, ok)
	}
	st := f.run(run).Status.Search.Steps
	if len(st) != 1 || st[0].CPU != "" {
		t.Fatalf("status steps %+v; want step 0 without a CPU", st)
	}
	if cpu := st[0].Figures[1]; cpu.Measured || cpu.Pass || cpu.Value != "" || cpu.BaseValue != "" || !strings.Contains(cpu.Note, "not measured") {
		t.Errorf("cpu figure %+v; want not measured, not a pass, no value, a note saying why", cpu)
	}
}
