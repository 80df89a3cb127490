package benchmarkcampaign_test

import (
	"fmt"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// TestCampaignShowsWhichRunItIsOn: a campaign of 8 runs on one database
// (2 cells, 4 repetitions: one run at a time) shows its iteration and
// 1/8, 2/8 ... 8/8 as its runs start, and keeps 8/8 once the iteration
// ended.
func TestCampaignShowsWhichRunItIsOn(t *testing.T) {
	c := testCampaign("onrun", 4, 4, axis("rate", "workload.load.rate", "slow=50", "fast=100"))
	f := newFakeCampaign(t, c, interceptor.Funcs{})
	for i := 1; i <= 8; i++ {
		f.settle()
		got := f.campaign().Status
		want := fmt.Sprintf("%d/8", i)
		if got.Progress == nil || got.Progress.Summary != want || got.Progress.Run != int32(i) || got.Progress.Runs != 8 {
			t.Fatalf("with run %d of 8 running, status.progress = %+v; want %s", i, got.Progress, want)
		}
		if len(got.Iterations) != 1 || got.Progress.Iteration != got.Iterations[0].Name {
			t.Errorf("status.progress names iteration %q; want the running one of %+v", got.Progress.Iteration, got.Iterations)
		}
		f.finishRuns(func(*v1alpha1.BenchmarkRun) float64 { return 1 })
	}
	f.settle()
	got := f.campaign().Status
	if got.Progress == nil || got.Progress.Summary != "8/8" || got.Iterations[0].Outcome == v1alpha1.IterationRunning {
		t.Errorf("after the iteration ended: progress %+v, outcome %s; want 8/8 kept, the iteration ended", got.Progress, got.Iterations[0].Outcome)
	}
}
