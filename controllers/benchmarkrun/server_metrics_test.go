package benchmarkrun_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/monitoring/apiv3/v2/monitoringpb"
	"google.golang.org/grpc/codes"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/controllers/benchmarkrun/serverfigures"
	"github.com/spanbench/spanbench/internal/fakemonitoring"
	"github.com/spanbench/spanbench/internal/runtest"
	"github.com/spanbench/spanbench/runner/pod"
	"github.com/spanbench/spanbench/spanner/monitoring"
)

// The run of these scenarios: started 12:00:20, warm-up until 12:02:10,
// 6 minutes 20 s of load, finished at 12:06:40. Its whole minutes end
// 12:02 to 12:06; the last is published by 12:09.
var (
	smStart   = time.Date(2026, 11, 24, 12, 0, 20, 0, time.UTC)
	smWarmUp  = time.Date(2026, 11, 24, 12, 2, 10, 0, time.UTC)
	smEnd     = time.Date(2026, 11, 24, 12, 6, 40, 0, time.UTC)
	smReady   = time.Date(2026, 11, 24, 12, 9, 0, 0, time.UTC)
	smMinutes = []time.Time{ // newest first, as the service answers
		time.Date(2026, 11, 24, 12, 6, 0, 0, time.UTC), time.Date(2026, 11, 24, 12, 5, 0, 0, time.UTC),
		time.Date(2026, 11, 24, 12, 4, 0, 0, time.UTC), time.Date(2026, 11, 24, 12, 3, 0, 0, time.UTC),
		time.Date(2026, 11, 24, 12, 2, 0, 0, time.UTC),
	}
)

// serverMetricsScenario is a finished run in envtest's API server, the
// real reconciler with a fake clock, and a fake MetricService.
type serverMetricsScenario struct {
	t     *testing.T
	c     client.Client
	r     *benchmarkrun.BenchmarkRunReconciler
	clock *clocktesting.FakeClock
	fake  *fakemonitoring.Server
	key   client.ObjectKey
}

func newServerMetricsScenario(t *testing.T, name string, edit func(*v1alpha1.BenchmarkRun)) *serverMetricsScenario {
	t.Helper()
	ctx := context.Background()
	c, err := client.New(restConfig, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := fmt.Sprintf("sm-%d", time.Now().UnixNano()%1_000_000_000)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	run := runtest.Run(name).InNamespace(ns).CloudSpanner().Obj()
	if edit != nil {
		edit(run)
	}
	run.UID, run.Generation, run.ResourceVersion = "", 0, ""
	run.Spec.Workload.Duration = &metav1.Duration{Duration: 10 * time.Minute}
	status := run.Status
	if err := c.Create(ctx, run); err != nil {
		t.Fatalf("creating the run: %v", err)
	}
	run.Status = status
	run.Status.StartTime, run.Status.WarmUpEnd = &metav1.Time{Time: smStart}, &metav1.Time{Time: smWarmUp}
	run.MarkSucceeded(false, "set by the test", smEnd)
	if err := c.Status().Update(ctx, run); err != nil {
		t.Fatalf("finishing the run: %v", err)
	}
	fake, err := fakemonitoring.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Stop)
	mc, err := monitoring.NewClient(ctx, monitoring.Endpoint{Address: fake.Addr, Options: fake.ClientOptions()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mc.Close() })
	clock := clocktesting.NewFakeClock(smReady.Add(-time.Second))
	r := &benchmarkrun.BenchmarkRunReconciler{Client: c, Scheme: scheme, Recorder: record.NewFakeRecorder(100), Clock: clock,
		ServerMetrics: serverfigures.ServerMetricsConfig{Client: mc}, Arrivals: pod.RunArrivals}
	return &serverMetricsScenario{t: t, c: c, r: r, clock: clock, fake: fake, key: client.ObjectKeyFromObject(run)}
}

func (s *serverMetricsScenario) reconcile() ctrl.Result {
	s.t.Helper()
	res, err := s.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: s.key})
	if err != nil {
		s.t.Fatalf("Reconcile of the finished run: %v", err)
	}
	return res
}

func (s *serverMetricsScenario) run() *v1alpha1.BenchmarkRun {
	s.t.Helper()
	run := &v1alpha1.BenchmarkRun{}
	if err := s.c.Get(context.Background(), s.key, run); err != nil {
		s.t.Fatal(err)
	}
	return run
}

func (s *serverMetricsScenario) condition() *metav1.Condition {
	s.t.Helper()
	c := meta.FindStatusCondition(s.run().Status.Conditions, v1alpha1.ConditionServerMetricsCollected)
	if c == nil {
		s.t.Fatalf("the run has no %s condition", v1alpha1.ConditionServerMetricsCollected)
	}
	return c
}

// serveRampedRun: the server's rate is half for the minutes ending 12:02
// and 12:03, then steady: it settled at 12:03, after the client's 12:02:10.
func (s *serverMetricsScenario) serveRampedRun() {
	var ok, lat []*monitoringpb.Point
	for i, end := range smMinutes {
		n := int64(1000)
		if i >= 3 {
			n = 500
		}
		ok = append(ok, fakemonitoring.Delta(end, fakemonitoring.Count(n)))
		lat = append(lat, fakemonitoring.Delta(end, fakemonitoring.Latency(0, 50, 30, 15, 5)))
	}
	var cpu []*monitoringpb.Point
	for _, end := range smMinutes {
		cpu = append(cpu, fakemonitoring.Gauge(end, 0.423))
	}
	s.fake.Serve(monitoring.MetricCPUByPriority,
		fakemonitoring.Series(map[string]string{"priority": "high"}, map[string]string{"location": "asia-northeast1"}, "10^2.%", cpu...))
	s.fake.Serve(monitoring.MetricAPIRequestCount, fakemonitoring.Series(map[string]string{"status": "OK"}, nil, "1", ok...))
	s.fake.Serve(monitoring.MetricRequestLatency, fakemonitoring.Series(map[string]string{"method": "ExecuteSql"}, nil, "s", lat...))
}

func TestServerMetricsAreReadOnceTheLastMinuteIsPublished(t *testing.T) {
	s := newServerMetricsScenario(t, "sm-cloud", nil)
	s.serveRampedRun()

	// Step 1: one second before the last minute is published, nothing is
	// asked, the condition says when, and the run comes back then.
	res := s.reconcile()
	if c := s.condition(); c.Status != metav1.ConditionUnknown || c.Reason != v1alpha1.ReasonMetricsPending {
		t.Fatalf("before 12:09 the condition is %s/%s (%s), want Unknown/Pending", c.Status, c.Reason, c.Message)
	}
	if res.RequeueAfter != time.Second {
		t.Errorf("before 12:09 the run comes back after %s, want 1s (at 12:09)", res.RequeueAfter)
	}
	if n := len(s.fake.Requests()); n != 0 {
		t.Fatalf("%d requests were sent before the window settled", n)
	}

	// Step 2: at 12:09 the figures are read into the status.
	s.clock.SetTime(smReady)
	s.reconcile()
	if c := s.condition(); c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonMetricsCollected {
		t.Fatalf("at 12:09 the condition is %s/%s (%s), want True/Collected", c.Status, c.Reason, c.Message)
	}
	sm := s.run().Status.ServerMetrics
	if sm == nil {
		t.Fatal("status.serverMetrics is empty after the collection")
	}
	if !sm.WindowStart.Time.Equal(smMinutes[4].Add(-time.Minute)) || !sm.WindowEnd.Time.Equal(smMinutes[0]) ||
		sm.Alignment.Duration != time.Minute || !sm.MeasuredFrom.Time.Equal(smMinutes[3]) {
		t.Errorf("window asked [%s, %s] aligned %s measured from %s, want [12:01, 12:06] aligned 1m from 12:03",
			sm.WindowStart, sm.WindowEnd, sm.Alignment, sm.MeasuredFrom)
	}
	if len(sm.CPU) != 1 || sm.CPU[0] != (v1alpha1.ServerCPU{Priority: "high", Location: "asia-northeast1", MeanPercent: "42.3", MaxPercent: "42.3"}) {
		t.Errorf("cpu = %+v, want high in asia-northeast1 at 42.3 %%", sm.CPU)
	}
	if len(sm.Latency) != 1 || sm.Latency[0].P99.Duration != 7200*time.Microsecond || sm.Latency[0].Count != 300 {
		t.Errorf("latency = %+v, want ExecuteSql p99 7.2ms over 300 requests", sm.Latency)
	}
	if len(sm.Requests) != 1 || sm.Requests[0] != (v1alpha1.ServerRequestCount{Status: "OK", Count: 3000}) {
		t.Errorf("requests = %+v, want OK 3000 (the minutes after the warm-up)", sm.Requests)
	}
	if w := sm.WarmUp; w == nil || w.Settled == nil || !*w.Settled || !w.SettledAt.Time.Equal(smMinutes[3]) ||
		w.EndedBy != v1alpha1.WarmUpSignalServer {
		t.Errorf("warmUp = %+v, want settled at 12:03, ended by the Server (after the client's 12:02:10)", w)
	}

	// Step 3: a collected run is not asked again.
	before := len(s.fake.Requests())
	s.reconcile()
	if n := len(s.fake.Requests()); n != before {
		t.Errorf("a collected run sent %d more requests", n-before)
	}
}

func TestServerMetricsOutcomesThatAreNotFigures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(*v1alpha1.BenchmarkRun)
		setup  func(*serverMetricsScenario)
		at     time.Duration // after smReady
		status metav1.ConditionStatus
		reason string
	}{
		{name: "emulator", edit: func(run *v1alpha1.BenchmarkRun) {
			run.Spec.Target.EmulatorHost = "localhost:9010"
		}, setup: func(*serverMetricsScenario) {}, status: metav1.ConditionFalse, reason: v1alpha1.ReasonMetricsNotAvailableOnEmulator},
		{name: "disabled", setup: func(s *serverMetricsScenario) {
			s.r.ServerMetrics = serverfigures.ServerMetricsConfig{Off: "--server-metrics=false"}
		}, status: metav1.ConditionFalse, reason: v1alpha1.ReasonMetricsDisabled},
		{name: "permission denied", setup: func(s *serverMetricsScenario) {
			s.fake.Fail(codes.PermissionDenied, "monitoring.timeSeries.list denied")
		}, status: metav1.ConditionFalse, reason: v1alpha1.ReasonPermissionDenied},
		{name: "failing, within the retry time", setup: func(s *serverMetricsScenario) {
			s.fake.Fail(codes.Internal, "boom")
		}, status: metav1.ConditionUnknown, reason: v1alpha1.ReasonMetricsPending},
		{name: "failing, past the retry time", setup: func(s *serverMetricsScenario) {
			s.fake.Fail(codes.Internal, "boom")
		}, at: 10 * time.Minute, status: metav1.ConditionFalse, reason: v1alpha1.ReasonMetricsFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServerMetricsScenario(t, "sm-outcome", tc.edit)
			tc.setup(s)
			s.clock.SetTime(smReady.Add(tc.at))
			s.reconcile()
			if c := s.condition(); c.Status != tc.status || c.Reason != tc.reason {
				t.Errorf("the condition is %s/%s (%s), want %s/%s", c.Status, c.Reason, c.Message, tc.status, tc.reason)
			}
			if run := s.run(); run.Status.Phase != v1alpha1.PhaseSucceeded {
				t.Errorf("the run's phase became %s: the collection must never change the run's outcome", run.Status.Phase)
			}
		})
	}
}
