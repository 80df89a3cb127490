package serverfigures

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	monitoringapi "cloud.google.com/go/monitoring/apiv3/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/runreport"
	"github.com/spanbench/spanbench/controllers/statuswrite"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/monitoring"
)

// ServerMetricsConfig is how the manager reads Cloud Monitoring after a
// Cloud Spanner run.
type ServerMetricsConfig struct {
	// Client reads Cloud Monitoring; nil leaves the collection off, Off
	// saying why (in the condition's message).
	Client *monitoringapi.MetricClient
	// Off says why Client is nil: the flag, or the client's error.
	Off string
	// Delay is the wait past the window's last minute; 0 is
	// monitoring.DefaultDelay.
	Delay time.Duration
}

// serverMetricsRetry is how long past the window's ready time a failed
// read is tried again before the condition says Failed: long enough for a
// service hiccup, short enough that a broken setup is told.
const serverMetricsRetry = 10 * time.Minute

// CollectServerMetrics reads Cloud Monitoring's figures of a finished run
// once its last minute is published, into status.serverMetrics, the run's
// stored report and the ServerMetricsCollected condition; when the
// server's warm-up ended after the client's, the run's figures are derived
// again without the intervals before it (metrics_cut.go). It never
// fails the run: every outcome is a condition, and the result asks to
// come back while the figures are pending. An error is the API server's
// (writing the report): the collection is tried again.
func (c Collection) CollectServerMetrics(ctx context.Context, run *v1alpha1.BenchmarkRun) (ctrl.Result, error) {
	if c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionServerMetricsCollected); c != nil &&
		c.Status != metav1.ConditionUnknown {
		return ctrl.Result{}, nil
	}
	w, ok := runreport.ServerMetricsWindow(run)
	if !ok {
		return ctrl.Result{}, nil // the load never ran: there is nothing to read
	}
	set := func(s metav1.ConditionStatus, reason, msg string) {
		run.SetCondition(v1alpha1.ConditionServerMetricsCollected, s, reason, msg, c.now())
	}
	switch {
	case endpoint.For(run.Spec.Target, endpoint.Endpoint{}).IsEmulator():
		set(metav1.ConditionFalse, v1alpha1.ReasonMetricsNotAvailableOnEmulator, "not available on the emulator: it has no Cloud Monitoring metrics")
		return ctrl.Result{}, nil
	case c.Metrics.Client == nil:
		set(metav1.ConditionFalse, v1alpha1.ReasonMetricsDisabled, "Cloud Monitoring is not read: "+c.Metrics.Off)
		return ctrl.Result{}, nil
	}
	collector := monitoring.Collector{Clock: c.Clock, Delay: c.Metrics.Delay}
	res, warm, err := c.readServerMetrics(ctx, collector, run, w)
	var notSettled *monitoring.NotSettledError
	var denied *monitoring.PermissionDeniedError
	switch {
	case errors.As(err, &notSettled):
		set(metav1.ConditionUnknown, v1alpha1.ReasonMetricsPending, notSettled.Error())
		return ctrl.Result{RequeueAfter: max(notSettled.ReadyAt.Sub(c.now()), time.Second)}, nil
	case errors.As(err, &denied):
		set(metav1.ConditionFalse, v1alpha1.ReasonPermissionDenied, "not collected: "+statuswrite.Truncate(denied.Error(), 512))
		return ctrl.Result{}, nil
	case err != nil && c.now().Before(collector.ReadyAt(w).Add(serverMetricsRetry)):
		set(metav1.ConditionUnknown, v1alpha1.ReasonMetricsPending, "retrying: "+statuswrite.Truncate(err.Error(), 512))
		return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
	case err != nil:
		set(metav1.ConditionFalse, v1alpha1.ReasonMetricsFailed, "not collected: "+statuswrite.Truncate(err.Error(), 512))
		return ctrl.Result{}, nil
	}
	sm := serverMetricsStatus(res, warm)
	msg, err := c.recordServerMetrics(ctx, run, sm)
	if err != nil {
		return ctrl.Result{}, err
	}
	run.Status.ServerMetrics = sm
	set(metav1.ConditionTrue, v1alpha1.ReasonMetricsCollected, msg)
	return ctrl.Result{}, nil
}

// readServerMetrics reads the figures of window w and the server's
// warm-up. When the server settled after the client's warm-up ended, the
// figures are read again from the server's end, so that Cloud
// Monitoring's figures leave out the same minutes as the client's.
func (c Collection) readServerMetrics(ctx context.Context, collector monitoring.Collector, run *v1alpha1.BenchmarkRun,
	w monitoring.Window) (*monitoring.Result, *v1alpha1.ServerWarmUp, error) {
	inst := monitoring.Instance{Project: run.Spec.Target.Project, Instance: run.Spec.Target.Instance.Name, Database: run.Spec.Target.Database}
	res, err := collector.Collect(ctx, c.Metrics.Client, inst, w)
	if err != nil {
		return nil, nil, err
	}
	warm := serverWarmUp(res.Minutes, run.Status.WarmUpEnd)
	if warm == nil || warm.EndedBy != v1alpha1.WarmUpSignalServer || warm.SettledAt == nil {
		return res, warm, nil
	}
	cut := w
	cut.WarmUpEnd = warm.SettledAt.Time
	if !cut.WarmUpEnd.Before(w.End) {
		return res, warm, nil // no minute of the run after it: keep the figures
	}
	res, err = collector.Collect(ctx, c.Metrics.Client, inst, cut)
	return res, warm, err
}

// The status's list bounds (the CRD's MaxItems and MaxLength).
const (
	maxServerMetricsNotes = 8
	maxNoteLength         = 256
)

// serverMetricsStatus is res as status.serverMetrics, with the server's
// warm-up warm.
func serverMetricsStatus(res *monitoring.Result, warm *v1alpha1.ServerWarmUp) *v1alpha1.ServerMetricsStatus {
	s := &v1alpha1.ServerMetricsStatus{
		WindowStart:  statuswrite.Time(res.Asked.Start),
		WindowEnd:    statuswrite.Time(res.Asked.End),
		MeasuredFrom: statuswrite.Time(res.MeasuredFrom),
		Alignment:    &metav1.Duration{Duration: res.Alignment},
	}
	var notes []string // what was cut first: it says the status is not all
	for _, c := range res.CPU {
		s.CPU = append(s.CPU, v1alpha1.ServerCPU{Priority: statuswrite.Truncate(c.Priority, 16), Location: statuswrite.Truncate(c.Location, 64),
			MeanPercent: formatPercent(c.Mean), MaxPercent: formatPercent(c.Max)})
	}
	for _, l := range res.Latency {
		s.Latency = append(s.Latency, v1alpha1.ServerMethodLatency{Method: statuswrite.Truncate(l.Method, 64), Count: l.Count,
			P50: &metav1.Duration{Duration: l.P50}, P99: &metav1.Duration{Duration: l.P99}})
	}
	for _, q := range res.Requests {
		s.Requests = append(s.Requests, v1alpha1.ServerRequestCount{Status: statuswrite.Truncate(q.Status, 32), Count: q.Count})
	}
	s.CPU, notes = bounded(s.CPU, "cpu", notes)
	s.Latency, notes = bounded(s.Latency, "latency", notes)
	s.Requests, notes = bounded(s.Requests, "requests", notes)
	s.WarmUp = warm
	for i, n := range append(notes, res.Notes...) {
		if i == maxServerMetricsNotes {
			break
		}
		s.Notes = append(s.Notes, statuswrite.Truncate(n, maxNoteLength))
	}
	return s
}

// serverWarmUp reads the server's minutes by the warm-up rule and names
// the signal that ended the warm-up.
func serverWarmUp(minutes []monitoring.MinutePoint, clientEnd *metav1.Time) *v1alpha1.ServerWarmUp {
	if len(minutes) == 0 {
		return nil
	}
	server := monitoring.DetectServerWarmUp(minutes, monitoring.WarmUpRule{})
	w := &v1alpha1.ServerWarmUp{Settled: &server.Settled}
	if server.Settled {
		w.SettledAt = statuswrite.Time(server.SettledAt)
	}
	if clientEnd != nil {
		w.EndedBy = v1alpha1.WarmUpSignal(monitoring.EndedBy(clientEnd.Time, server))
	}
	return w
}

// bounded keeps the first v1alpha1.MaxServerMetricsItems of xs, with a note of
// what was left out.
func bounded[T any](xs []T, field string, notes []string) ([]T, []string) {
	if len(xs) <= v1alpha1.MaxServerMetricsItems {
		return xs, notes
	}
	return xs[:v1alpha1.MaxServerMetricsItems], append(notes,
		fmt.Sprintf("%s: %d of %d entries kept", field, v1alpha1.MaxServerMetricsItems, len(xs)))
}

// formatPercent renders a fraction as a percent with one decimal, such as
// "52.3"; a value that is not a finite non-negative number is "0.0".
func formatPercent(fraction float64) string {
	p := fraction * 100
	if math.IsNaN(p) || math.IsInf(p, 0) || p < 0 {
		p = 0
	}
	return strconv.FormatFloat(min(p, 1e9), 'f', 1, 64)
}
