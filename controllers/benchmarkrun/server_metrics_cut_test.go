package benchmarkrun_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/monitoring/apiv3/v2/monitoringpb"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/collectors"
	"github.com/spanbench/spanbench/controllers/runreport"
	"github.com/spanbench/spanbench/internal/fakemonitoring"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
	"github.com/spanbench/spanbench/runner/pod"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/spanner/monitoring"
)

// The run of the cut scenario: 10 s intervals from 12:00:20 to 12:06:40
// (38), a Fixed client warm-up of whole intervals. Spanner
// was still splitting until 12:03: intervals 0-15 ran 50 reads at 20 ms,
// the 22 from 12:03:00 on 100 reads at 2 ms.
const (
	cutIntervals = 38
	cutSettled   = 16 // the first interval at or after the server's 12:03
)

// reportWithSlowStart stores the run's merged report (as aggregation
// would) and points the run's status at it, with the client's figures.
func (s *serverMetricsScenario) reportWithSlowStart(clientIntervals int) {
	s.t.Helper()
	ctx := context.Background()
	run := s.run()
	w := run.Spec.Workload.Resolved()
	spec, err := protocol.RecordedSpec(&w)
	if err != nil {
		s.t.Fatal(err)
	}
	op := spec.Settings().Operations[0].Name
	d := &result.Document{SchemaVersion: result.SchemaVersion, Run: run.Name, Spec: spec, Start: smStart, End: smEnd, IntervalSeconds: 10,
		Shards: []result.Shard{{Index: 0, Count: 1, Started: smStart, Ended: smEnd}}}
	for i := range cutIntervals {
		n, lat := 100, int64(2000)
		if i < cutSettled {
			n, lat = 50, 20000
		}
		h := histogram.New()
		for range n {
			_ = h.RecordValue(lat)
		}
		enc, err := histogram.Encode(h)
		if err != nil {
			s.t.Fatal(err)
		}
		d.Intervals = append(d.Intervals, result.Interval{Index: i, TargetRate: 100, Operations: []result.IntervalOperation{{
			Name: op, Counts: result.Counts{OK: uint64(n)}, Histograms: result.Histograms{LatencyHistogram: enc, ServiceHistogram: enc}}}})
	}
	if err := result.Finalize(d); err != nil {
		s.t.Fatal(err)
	}
	if want := uint64((cutSettled-clientIntervals)*50 + 22*100); d.WarmUp.Intervals != clientIntervals || d.Overall.OK != want {
		s.t.Fatalf("the client's report: warm-up %d intervals, %d reads; want %d, %d", d.WarmUp.Intervals, d.Overall.OK, clientIntervals, want)
	}
	data, err := protocol.EncodeReport(d)
	if err != nil {
		s.t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ResultConfigMapName(run), Namespace: run.Namespace,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(run, v1alpha1.GroupVersion.WithKind("BenchmarkRun"))}},
		BinaryData: map[string][]byte{runreport.ReportKey: data}}
	if err := s.c.Create(ctx, cm); err != nil {
		s.t.Fatal(err)
	}
	run.Status.Report = &v1alpha1.ReportReference{ConfigMapName: cm.Name, Key: runreport.ReportKey}
	run.Status.WarmUpEnd = &metav1.Time{Time: d.WarmUp.End}
	run.Status.Operations = []v1alpha1.OperationResult{{Name: op, ResultFigures: v1alpha1.ResultFigures{Count: int64(d.Overall.OK)}}}
	if err := s.c.Status().Update(ctx, run); err != nil {
		s.t.Fatal(err)
	}
}

// storedReport reads the run's report ConfigMap as stored, without any
// join from the status.
func (s *serverMetricsScenario) storedReport() *result.Document {
	s.t.Helper()
	run := s.run()
	cm := &corev1.ConfigMap{}
	if err := s.c.Get(context.Background(), objectKey(run.Namespace, run.Status.Report.ConfigMapName), cm); err != nil {
		s.t.Fatal(err)
	}
	d, err := protocol.LoadResult(context.Background(), s.c, nil, cm, run.Status.Report.Key, protocol.ReportLimits())
	if err != nil {
		s.t.Fatalf("the stored report does not read: %v", err)
	}
	return d
}

// TestTheServersLaterWarmUpEndCutsTheRunsFigures: Cloud Monitoring says
// the server settled at 12:03, after the client's 12:00:50. Once the
// figures are collected (12:09), they are in the stored report itself,
// and the run's figures are derived again from its stored intervals
// without those before 12:03: the report, the status (and so
// Prometheus) count the 2200 fast reads only, say the Server ended the
// warm-up and which intervals it cut, and Cloud Monitoring's own figures
// are of the minutes from 12:03.
func TestTheServersLaterWarmUpEndCutsTheRunsFigures(t *testing.T) {
	s := newServerMetricsScenario(t, "sm-cut", func(run *v1alpha1.BenchmarkRun) {
		run.Spec.Workload.Interval = &metav1.Duration{Duration: 10 * time.Second}
		run.Spec.Workload.WarmUp = &v1alpha1.WarmUpSpec{Mode: v1alpha1.WarmUpFixed, Duration: &metav1.Duration{Duration: 30 * time.Second}}
	})
	s.reportWithSlowStart(3)
	s.serveRampedRun()
	s.clock.SetTime(smReady)
	s.reconcile()

	c := s.condition()
	if c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "intervals 3 to 15 are cut") {
		t.Fatalf("the condition is %s/%s (%s), want True naming the intervals 3 to 15 the server's warm-up cut", c.Status, c.Reason, c.Message)
	}
	d := s.storedReport()
	if m := d.Monitoring; m == nil || m.WarmUp == nil || m.WarmUp.EndedBy != result.WarmUpEndedByServer {
		t.Fatalf("the stored report's monitoring section is %+v, want Cloud Monitoring's figures with the Server's warm-up end", m)
	}
	if w := d.WarmUp; w.Intervals != cutSettled || w.EndedBy != result.WarmUpEndedByServer || w.ServerIntervals != 13 ||
		!w.End.Equal(smMinutes[3]) {
		t.Errorf("the stored report's warm-up is %+v, want 16 intervals to 12:03:00, ended by the Server, 13 cut by it", w)
	}
	if d.Overall.OK != 2200 || d.Overall.Latency.P99 > 2100 {
		t.Errorf("the stored report's totals: %d reads, p99 %dµs; want the 2200 reads at 2 ms after 12:03", d.Overall.OK, d.Overall.Latency.P99)
	}
	st := s.run().Status
	if st.WarmUpEnd == nil || !st.WarmUpEnd.Time.Equal(smMinutes[3]) {
		t.Errorf("status.warmUpEnd = %v, want the server's 12:03:00", st.WarmUpEnd)
	}
	if len(st.Operations) != 1 || st.Operations[0].Count != 2200 || st.Operations[0].Latency == nil ||
		st.Operations[0].Latency.P99.Duration > 2100*time.Microsecond {
		t.Errorf("status.operations = %+v, want 2200 reads at p99 2 ms (the slow start cut)", st.Operations)
	}
	sm := st.ServerMetrics
	if sm == nil || !sm.MeasuredFrom.Time.Equal(smMinutes[3]) || len(sm.Requests) != 1 || sm.Requests[0].Count != 3000 {
		t.Errorf("status.serverMetrics = %+v, want Cloud Monitoring's figures of the 3 minutes from 12:03 (3000 requests)", sm)
	}
	if sm != nil && (sm.WarmUp == nil || sm.WarmUp.EndedBy != v1alpha1.WarmUpSignalServer || sm.WarmUp.CutIntervals == nil || *sm.WarmUp.CutIntervals != 13) {
		t.Errorf("status.serverMetrics.warmUp = %+v, want ended by the Server, 13 intervals cut", sm.WarmUp)
	}
	if n, ok := s.scraped("spanbench_run_operations"); !ok || n != 2200 {
		t.Errorf("Prometheus serves spanbench_run_operations %g (found %v), want the 2200 after the server's warm-up", n, ok)
	}
	if w, ok := s.scraped("spanbench_run_warmup_seconds"); !ok || w != 160 {
		t.Errorf("Prometheus serves spanbench_run_warmup_seconds %g (found %v), want 160 (12:00:20 to 12:03:00)", w, ok)
	}
	// Read back as spanbench report --run does, the report keeps the cut.
	doc, err := runreport.ReadReport(context.Background(), s.c, s.key, pod.RunArrivals)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Overall.OK != 2200 || doc.WarmUp.EndedBy != result.WarmUpEndedByServer {
		t.Errorf("read back: %d reads, warm-up ended by %q; want 2200, Server", doc.Overall.OK, doc.WarmUp.EndedBy)
	}
}

// TestCloudMonitoringFiguresAreWrittenIntoTheStoredReport: a server that
// settled (12:01) before the client (12:01:30) cuts nothing, but the figures are in the
// stored report (not only the status), and the client's figures stand.
func TestCloudMonitoringFiguresAreWrittenIntoTheStoredReport(t *testing.T) {
	s := newServerMetricsScenario(t, "sm-stored", func(run *v1alpha1.BenchmarkRun) {
		run.Spec.Workload.Interval = &metav1.Duration{Duration: 10 * time.Second}
		run.Spec.Workload.WarmUp = &v1alpha1.WarmUpSpec{Mode: v1alpha1.WarmUpFixed, Duration: &metav1.Duration{Duration: 70 * time.Second}}
	})
	s.reportWithSlowStart(7)
	s.serveSteadyRun()
	s.clock.SetTime(smReady)
	s.reconcile()
	d := s.storedReport()
	m := d.Monitoring
	if m == nil || m.Version != result.MonitoringSchemaVersion || len(m.CPU) != 1 || m.CPU[0].MeanRatio != 0.423 {
		t.Fatalf("the stored report's monitoring section is %+v, want the high-priority CPU 0.423 Cloud Monitoring gave", m)
	}
	if m.WarmUp == nil || m.WarmUp.EndedBy != result.WarmUpEndedByClient || d.WarmUp.EndedBy != "" || d.Overall.OK != 2650 {
		t.Errorf("warm-up %+v, report's %+v, %d reads; want the Client's end (12:01:30) standing and the 2650 reads after it", m.WarmUp, d.WarmUp, d.Overall.OK)
	}
}

// serveSteadyRun: every minute alike, so the server settled at the
// window's first minute, 12:01, before the client's warm-up ended.
func (s *serverMetricsScenario) serveSteadyRun() {
	var ok, lat, cpu []*monitoringpb.Point
	for _, end := range smMinutes {
		ok = append(ok, fakemonitoring.Delta(end, fakemonitoring.Count(1000)))
		lat = append(lat, fakemonitoring.Delta(end, fakemonitoring.Latency(0, 50, 30, 15, 5)))
		cpu = append(cpu, fakemonitoring.Gauge(end, 0.423))
	}
	s.fake.Serve(monitoring.MetricCPUByPriority,
		fakemonitoring.Series(map[string]string{"priority": "high"}, map[string]string{"location": "asia-northeast1"}, "10^2.%", cpu...))
	s.fake.Serve(monitoring.MetricAPIRequestCount, fakemonitoring.Series(map[string]string{"status": "OK"}, nil, "1", ok...))
	s.fake.Serve(monitoring.MetricRequestLatency, fakemonitoring.Series(map[string]string{"method": "ExecuteSql"}, nil, "s", lat...))
}

func objectKey(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }

// scraped is the results collector's value of the run's series name (of
// its overall figures, for a series per operation).
func (s *serverMetricsScenario) scraped(name string) (float64, bool) {
	s.t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(&collectors.ResultsCollector{Reader: s.c})
	families, err := reg.Gather()
	if err != nil {
		s.t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] == s.key.Namespace && labels["run"] == s.key.Name && labels["operation"] != "overall" {
				return m.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}

// TestTheReportIsWrittenThoughTheCacheLagsBehindIt: the manager's cache
// may hold the report ConfigMap as it was before a write of the same pass
// (the SPANNER_SYS collection rewrites it too). The collection reads the
// report past the cache, so it writes its figures in one pass instead of
// failing on the stale version.
func TestTheReportIsWrittenThoughTheCacheLagsBehindIt(t *testing.T) {
	s := newServerMetricsScenario(t, "sm-stale", func(run *v1alpha1.BenchmarkRun) {
		run.Spec.Workload.Interval = &metav1.Duration{Duration: 10 * time.Second}
		run.Spec.Workload.WarmUp = &v1alpha1.WarmUpSpec{Mode: v1alpha1.WarmUpFixed, Duration: &metav1.Duration{Duration: 70 * time.Second}}
	})
	s.reportWithSlowStart(7)
	s.serveSteadyRun()
	ctx := context.Background()
	run := s.run()
	key := objectKey(run.Namespace, run.Status.Report.ConfigMapName)
	stale := &corev1.ConfigMap{}
	if err := s.c.Get(ctx, key, stale); err != nil {
		t.Fatal(err)
	}
	fresh := stale.DeepCopy()
	fresh.Labels = map[string]string{"rewritten": "by-another-collection"}
	if err := s.c.Update(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	wc, err := client.NewWithWatch(restConfig, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	s.r.APIReader = s.c
	s.r.Client = interceptor.NewClient(wc, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, k client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if cm, ok := obj.(*corev1.ConfigMap); ok && k == key {
				stale.DeepCopyInto(cm) // the cache's older copy
				return nil
			}
			return c.Get(ctx, k, obj, opts...)
		}})
	s.clock.SetTime(smReady)
	s.reconcile()
	if c := s.condition(); c.Status != metav1.ConditionTrue {
		t.Fatalf("the condition is %s/%s (%s), want True in one pass", c.Status, c.Reason, c.Message)
	}
	if d := s.storedReport(); d.Monitoring == nil {
		t.Error("the stored report has no monitoring section")
	}
}
