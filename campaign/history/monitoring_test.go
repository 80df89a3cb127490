package history

import (
	"strings"
	"testing"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/comparison"
	"github.com/spanbench/spanbench/result"
)

// withMonitoring gives d Cloud Monitoring figures: the leader region's
// high-priority CPU and Commit's server p99.
func withMonitoring(d *result.Document, cpuRatio, commitSeconds float64) *result.Document {
	d.Monitoring = &result.Monitoring{Version: result.MonitoringSchemaVersion, AlignmentSeconds: 60,
		CPU: []result.MonitoringCPU{{Priority: "high", Location: "asia-northeast1", MeanRatio: cpuRatio, MaxRatio: cpuRatio},
			{Priority: "low", Location: "asia-northeast1", MeanRatio: 0.5, MaxRatio: 0.5}},
		Latency: []result.MonitoringLatency{{Method: "Commit", Count: 100, P99Seconds: commitSeconds}}}
	return d
}

// TestSummaryKeepsTheCloudMonitoringFiguresEveryRunHas: the entry holds
// per region and method the mean of the runs' figures, in the
// comparison's units (percent, µs), and survives encoding; a cell with a
// run lacking them has none (not collected), rather than the mean of the
// others; a tampered entry is refused.
func TestSummaryKeepsTheCloudMonitoringFiguresEveryRunHas(t *testing.T) {
	cells := []comparison.Cell{
		{Name: "base", Runs: []*result.Document{withMonitoring(runDoc(t, "b1", 1, 1), 0.20, 0.010), withMonitoring(runDoc(t, "b2", 2, 1), 0.22, 0.012)}},
		{Name: "half", Runs: []*result.Document{withMonitoring(runDoc(t, "h1", 3, 1), 0.20, 0.010), runDoc(t, "h2", 4, 1)}},
	}
	e := summarized(t, cells)
	base, _ := e.FindCell("base")
	cpu, ok := base.Monitoring.Figure(v1alpha1.StatisticServerHighPriorityCPU, "asia-northeast1")
	p99, ok2 := base.Monitoring.Figure(v1alpha1.StatisticServerLatencyP99, "Commit")
	if !ok || !ok2 || cpu < 20.99 || cpu > 21.01 || p99 < 10999 || p99 > 11001 {
		t.Errorf("base cell's figures %+v; want the leader's high-priority CPU 21 %% and Commit p99 11000 µs", base.Monitoring)
	}
	if half, _ := e.FindCell("half"); half.Monitoring != nil {
		t.Errorf("a cell with a run lacking the figures has %+v; want none", half.Monitoring)
	}
	bad := e
	bad.Cells = append([]Cell(nil), e.Cells...)
	bad.Cells[0].Monitoring = &MonitoringFigures{HighPriorityCPU: []KeyedFigure{{Key: "asia-northeast1", Value: -1}}}
	b, err := encode(&bad)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(b); err == nil || !strings.Contains(err.Error(), "monitoring figure") {
		t.Errorf("an entry with a negative CPU figure decodes (%v); want it refused", err)
	}
}
