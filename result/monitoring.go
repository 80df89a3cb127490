package result

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// MonitoringSchemaVersion versions the document's optional monitoring
// section on its own, as ServerSchemaVersion does the server section: it
// is added to a run's report after the run, and a reader that does not
// know it ignores it (docs/result-format.md).
const MonitoringSchemaVersion = "spanbench.io/server-metrics/v1"

// Bounds of a monitoring section: the run's status keeps at most 32
// entries a list and 8 notes (api/v1alpha1 ServerMetricsStatus).
const (
	maxMonitoringItems = 32
	maxMonitoringNotes = 8
	maxMonitoringLabel = 64
)

// Monitoring is what Cloud Monitoring says about the run's instance and
// database over its measured minutes (docs/server-stats.md): CPU by
// priority and region, server latency per API method, requests per
// status, and the server's warm-up signal. The manager writes it once the
// window's minutes are published; documents without it read as before.
type Monitoring struct {
	// Version is MonitoringSchemaVersion.
	Version string `json:"version"`
	// WindowStart and WindowEnd are the interval asked of Cloud Monitoring.
	WindowStart time.Time `json:"windowStart"`
	WindowEnd   time.Time `json:"windowEnd"`
	// MeasuredFrom is the first whole minute after the warm-up: the
	// figures are of the minutes from it to WindowEnd.
	MeasuredFrom time.Time `json:"measuredFrom,omitzero"`
	// AlignmentSeconds is the alignment period asked, 60.
	AlignmentSeconds float64 `json:"alignmentSeconds"`
	// CPU is the instance's CPU utilization per priority and region.
	CPU []MonitoringCPU `json:"cpu,omitempty"`
	// Latency is the database's server latency per API method.
	Latency []MonitoringLatency `json:"latency,omitempty"`
	// Requests counts the database's API requests per status.
	Requests []MonitoringRequests `json:"requests,omitempty"`
	// WarmUp is the server's warm-up signal; nil when no minute was read.
	WarmUp *MonitoringWarmUp `json:"warmUp,omitempty"`
	// Notes say what limits the figures.
	Notes []string `json:"notes,omitempty"`
}

// MonitoringCPU is the CPU utilization of one priority in one region, as
// fractions of the region's compute capacity.
type MonitoringCPU struct {
	Priority  string  `json:"priority"`
	Location  string  `json:"location,omitempty"`
	MeanRatio float64 `json:"meanRatio"`
	MaxRatio  float64 `json:"maxRatio"`
}

// MonitoringLatency is the server latency of one API method.
type MonitoringLatency struct {
	Method     string  `json:"method"`
	Count      int64   `json:"count"`
	P50Seconds float64 `json:"p50Seconds"`
	P99Seconds float64 `json:"p99Seconds"`
}

// MonitoringRequests is the number of API requests that ended with one
// gRPC status.
type MonitoringRequests struct {
	Status string `json:"status"`
	Count  int64  `json:"count"`
}

// The signals that can end a warm-up (api/v1alpha1 WarmUpSignal).
const (
	WarmUpEndedByClient = "Client"
	WarmUpEndedByServer = "Server"
)

// MonitoringWarmUp is when the server's request rate and p99 settled, and
// which signal, the client's or the server's, settled last.
type MonitoringWarmUp struct {
	Settled   bool      `json:"settled"`
	SettledAt time.Time `json:"settledAt,omitzero"`
	// EndedBy is WarmUpEndedByClient or WarmUpEndedByServer; empty when
	// the client's warm-up end was not known.
	EndedBy string `json:"endedBy,omitempty"`
}

// Check refuses a monitoring section a reader cannot trust: an unknown
// version, more entries than a status keeps, an overlong label, a
// negative or non-finite figure, an unknown warm-up signal. Like the
// server section it may come from a ConfigMap anyone in the namespace can
// edit.
func (m *Monitoring) Check() error {
	if m == nil {
		return nil
	}
	if m.Version != MonitoringSchemaVersion {
		return fmt.Errorf("monitoring section version %q is not %q", m.Version, MonitoringSchemaVersion)
	}
	if len(m.CPU) > maxMonitoringItems || len(m.Latency) > maxMonitoringItems || len(m.Requests) > maxMonitoringItems ||
		len(m.Notes) > maxMonitoringNotes {
		return errors.New("monitoring section: more entries or notes than a run's status keeps")
	}
	var labels []string
	var figs []float64
	var counts []int64
	for _, c := range m.CPU {
		labels, figs = append(labels, c.Priority, c.Location), append(figs, c.MeanRatio, c.MaxRatio)
	}
	for _, l := range m.Latency {
		labels, figs, counts = append(labels, l.Method), append(figs, l.P50Seconds, l.P99Seconds), append(counts, l.Count)
	}
	for _, q := range m.Requests {
		labels, counts = append(labels, q.Status), append(counts, q.Count)
	}
	return checkMonitoringValues(m, labels, append(figs, m.AlignmentSeconds), counts)
}

func checkMonitoringValues(m *Monitoring, labels []string, figs []float64, counts []int64) error {
	for _, l := range labels {
		if len(l) > maxMonitoringLabel {
			return errors.New("monitoring section: an overlong priority, location, method or status")
		}
	}
	for _, n := range m.Notes {
		if len(n) > maxServerText {
			return errors.New("monitoring section: a note is too long")
		}
	}
	for _, f := range figs {
		if f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			return errors.New("monitoring section: a negative or non-finite figure")
		}
	}
	for _, n := range counts {
		if n < 0 {
			return errors.New("monitoring section: a negative count")
		}
	}
	if w := m.WarmUp; w != nil && w.EndedBy != "" && w.EndedBy != WarmUpEndedByClient && w.EndedBy != WarmUpEndedByServer {
		return fmt.Errorf("monitoring section: warm-up ended by %q, neither %s nor %s", w.EndedBy, WarmUpEndedByClient, WarmUpEndedByServer)
	}
	return nil
}
