package runreport

import (
	"strconv"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
)

// MonitoringSection is status.serverMetrics as the result document's
// monitoring section, or nil when there is none: the collection writes it
// into the run's stored report (benchmarkrun/serverfigures/metrics_cut.go), and ReadReport
// joins it to a report stored before that. The status is its one owner;
// the section is a view of it.
func MonitoringSection(s *v1alpha1.ServerMetricsStatus) *result.Monitoring {
	if s == nil {
		return nil
	}
	m := &result.Monitoring{Version: result.MonitoringSchemaVersion, Notes: s.Notes}
	if s.WindowStart != nil {
		m.WindowStart = s.WindowStart.Time
	}
	if s.WindowEnd != nil {
		m.WindowEnd = s.WindowEnd.Time
	}
	if s.MeasuredFrom != nil {
		m.MeasuredFrom = s.MeasuredFrom.Time
	}
	if s.Alignment != nil {
		m.AlignmentSeconds = s.Alignment.Seconds()
	}
	for _, c := range s.CPU {
		m.CPU = append(m.CPU, result.MonitoringCPU{Priority: c.Priority, Location: c.Location,
			MeanRatio: PercentRatio(c.MeanPercent), MaxRatio: PercentRatio(c.MaxPercent)})
	}
	for _, l := range s.Latency {
		ml := result.MonitoringLatency{Method: l.Method, Count: l.Count}
		if l.P50 != nil {
			ml.P50Seconds = l.P50.Seconds()
		}
		if l.P99 != nil {
			ml.P99Seconds = l.P99.Seconds()
		}
		m.Latency = append(m.Latency, ml)
	}
	for _, q := range s.Requests {
		m.Requests = append(m.Requests, result.MonitoringRequests{Status: q.Status, Count: q.Count})
	}
	m.WarmUp = monitoringWarmUp(s.WarmUp)
	return m
}

// WithStatusMonitoring gives doc, a report stored before the figures were
// written into it (or whose write failed), the run's figures from its
// status; a report that has them keeps its own.
func WithStatusMonitoring(doc *result.Document, run *v1alpha1.BenchmarkRun) *result.Document {
	if doc.Monitoring == nil {
		doc.Monitoring = MonitoringSection(run.Status.ServerMetrics)
	}
	return doc
}

func monitoringWarmUp(w *v1alpha1.ServerWarmUp) *result.MonitoringWarmUp {
	if w == nil {
		return nil
	}
	out := &result.MonitoringWarmUp{Settled: w.Settled != nil && *w.Settled, EndedBy: string(w.EndedBy)}
	if w.SettledAt != nil {
		out.SettledAt = w.SettledAt.Time
	}
	return out
}

// PercentRatio reads a status percent such as "52.3" as the fraction
// 0.523; what is not a number (the CRD's pattern refuses it) is 0.
func PercentRatio(p string) float64 {
	f, err := strconv.ParseFloat(p, 64)
	if err != nil {
		return 0
	}
	return f / 100
}
