package benchmarkcampaign_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/history"
	"github.com/spanbench/spanbench/controllers/benchmarkcampaign"
	"github.com/spanbench/spanbench/result"
)

// finishRunsWithServer ends the iteration's runs with reports that hold
// a server section: cpuMicros of Spanner CPU per read, over 4 splits.
func (f *fakeCampaign) finishRunsWithServer(cpuMicros float64) {
	f.t.Helper()
	for _, run := range f.runs() {
		if run.IsFinished() {
			continue
		}
		d := campaignResultDoc(f.t, &run, 1)
		cpu, execs := cpuMicros/1e6, 4.0
		d.Server = &result.Server{Version: result.ServerSchemaVersion, Source: "SPANNER_SYS.", CollectedAt: t0,
			Operations: []result.ServerOperation{{Name: "read", ClientOps: 4000, Statements: &result.ServerStatements{Minutes: 1,
				Coverage: 1, ClientOps: 4000, Executions: 16000, ExecutionsPerOp: &execs, CPUSecondsPerOp: &cpu}}}}
		finishCampaignRunWith(f.t, f.stored, &run, d)
	}
}

// TestCampaignTrendFindsAServerCPURegressionAcrossNights: a campaign
// watching ServerCPUPerOp keeps each night's server CPU per operation in
// its history ConfigMap, and a step of 40 % from the 8th of 12 nights,
// with client latency unchanged, is a Regressed change point there.
func TestCampaignTrendFindsAServerCPURegressionAcrossNights(t *testing.T) {
	c := testCampaign("servercpu", 1, 1)
	c.Spec.Comparison.Metrics = []v1alpha1.MetricSpec{{Statistic: v1alpha1.StatisticServerCPUPerOp}}
	f := newFakeCampaign(t, c, interceptor.Funcs{})
	for i := 1; i <= 12; i++ {
		cpu := 564.0 * (1 + 0.01*float64(i%3))
		if i >= 8 {
			cpu *= 1.4
		}
		if i > 1 {
			got := f.campaign()
			got.Spec.RunNow = fmt.Sprint(i)
			if err := f.stored.Update(context.Background(), got); err != nil {
				t.Fatal(err)
			}
			f.clock.Step(24 * time.Hour)
		}
		f.settle()
		f.finishRunsWithServer(cpu)
		f.settle()
	}
	st := f.campaign().Status
	if len(st.Iterations) < 12 {
		t.Fatalf("%d iterations, want 12: %+v", len(st.Iterations), st.Iterations)
	}
	first := f.historyEntry(st.Iterations[0].Name)
	op, ok := first.Find(first.Cells[0].Name, "read")
	if !ok {
		t.Fatalf("the first night's history entry has no read: %+v", first.Cells)
	}
	if op.Server == nil || op.Server.CPUMicrosPerOp < 569 || op.Server.CPUMicrosPerOp > 570 || op.Server.ExecutionsPerOp == nil || *op.Server.ExecutionsPerOp != 4 {
		t.Fatalf("the first night's history entry has read with server figures %+v; want server CPU 569.64 µs/op over 4 executions/op", op.Server)
	}
	step := st.Iterations[7].Name
	var found bool
	for _, cp := range st.ChangePoints {
		found = found || cp.Iteration == step && cp.Metric == "read server CPU µs/op" && cp.Verdict == v1alpha1.VerdictRegressed
	}
	if !found || st.Verdict != v1alpha1.VerdictRegressed {
		t.Errorf("change points %+v, verdict %s; want a Regressed read server CPU µs/op at %s", st.ChangePoints, st.Verdict, step)
	}
}

// historyEntry decodes the history ConfigMap of iteration it.
func (f *fakeCampaign) historyEntry(it string) history.Entry {
	f.t.Helper()
	for _, cm := range f.configMaps(client.MatchingLabels{benchmarkcampaign.LabelHistory: it}) {
		for _, data := range cm.BinaryData {
			e, err := history.Decode(data)
			if err != nil {
				f.t.Fatalf("history ConfigMap %s: %v", cm.Name, err)
			}
			return e
		}
	}
	f.t.Fatalf("no history ConfigMap of iteration %s", it)
	return history.Entry{}
}
