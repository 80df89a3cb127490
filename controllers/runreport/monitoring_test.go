package runreport

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
)

// TestMonitoringSectionIsTheStatusInTheDocumentsUnits: the status's
// percents become fractions, its durations seconds, its warm-up signal
// is kept, and the section passes the document's own check.
func TestMonitoringSectionIsTheStatusInTheDocumentsUnits(t *testing.T) {
	if MonitoringSection(nil) != nil {
		t.Error("a run without Cloud Monitoring figures gets a monitoring section")
	}
	at := time.Date(2026, 11, 24, 12, 3, 0, 0, time.UTC)
	settled := true
	s := &v1alpha1.ServerMetricsStatus{WindowStart: &metav1.Time{Time: at.Add(-2 * time.Minute)}, WindowEnd: &metav1.Time{Time: at.Add(3 * time.Minute)},
		MeasuredFrom: &metav1.Time{Time: at}, Alignment: &metav1.Duration{Duration: time.Minute},
		CPU:      []v1alpha1.ServerCPU{{Priority: "high", Location: "asia-northeast1", MeanPercent: "42.3", MaxPercent: "50.0"}},
		Latency:  []v1alpha1.ServerMethodLatency{{Method: "ExecuteSql", Count: 300, P50: &metav1.Duration{Duration: 3 * time.Millisecond}, P99: &metav1.Duration{Duration: 7200 * time.Microsecond}}},
		Requests: []v1alpha1.ServerRequestCount{{Status: "OK", Count: 3000}},
		WarmUp:   &v1alpha1.ServerWarmUp{Settled: &settled, SettledAt: &metav1.Time{Time: at}, EndedBy: v1alpha1.WarmUpSignalServer},
		Notes:    []string{"a note"}}
	m := MonitoringSection(s)
	if err := m.Check(); err != nil {
		t.Fatalf("the section of a valid status fails the document's check: %v", err)
	}
	if m.CPU[0].MeanRatio != 0.423 || m.CPU[0].MaxRatio != 0.5 || m.AlignmentSeconds != 60 || !m.MeasuredFrom.Equal(at) {
		t.Errorf("cpu %+v alignment %gs measured from %s; want 0.423/0.5 of capacity, 60s, from 12:03", m.CPU, m.AlignmentSeconds, m.MeasuredFrom)
	}
	if m.Latency[0] != (result.MonitoringLatency{Method: "ExecuteSql", Count: 300, P50Seconds: 0.003, P99Seconds: 0.0072}) {
		t.Errorf("latency %+v; want ExecuteSql p50 3ms p99 7.2ms over 300", m.Latency[0])
	}
	if m.WarmUp == nil || m.WarmUp.EndedBy != result.WarmUpEndedByServer || !m.WarmUp.Settled || len(m.Requests) != 1 || len(m.Notes) != 1 {
		t.Errorf("warm-up %+v requests %+v notes %q; want the Server's end, OK 3000 and the note", m.WarmUp, m.Requests, m.Notes)
	}
}
