//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// TestRunProgressIsLive watches a 40 s run from real runner pods: while
// it runs, its status.progress (what `kubectl get benchmarkruns` shows as
// Progress, Achieved, P99 and Errors) changes at least twice, each time
// marked live; once it ends, the final figures stand in their place,
// never blank.
func TestRunProgressIsLive(t *testing.T) {
	kustomizePassOnly(t)
	t.Parallel()
	ns := newNamespace(t, "e2e-progress")
	run := demoRun(t, ns, "progress", withLoad(40*time.Second, 100))
	create(t, run)
	waitRun(t, ns, run.Name, runTimeout, "to release its runners", isRunning)

	var live []string // each distinct live summary seen before the end
	eventually(t, runTimeout, "the run to finish, watching its live progress", func(ctx context.Context) (bool, string) {
		r, err := getRun(ctx, ns, run.Name)
		if err != nil {
			return false, err.Error()
		}
		if r.IsFinished() {
			run = r
			return true, ""
		}
		p := r.Status.Progress
		if p != nil && p.Live {
			seen := fmt.Sprintf("%s %s %s errors %d", p.Summary, p.Achieved, p.Latency, p.Errors)
			if len(live) == 0 || live[len(live)-1] != seen {
				live = append(live, seen)
				t.Logf("live: %s", seen)
			}
		}
		return false, fmt.Sprintf("%s; live figures so far %q", describeRun(r), live)
	})
	if len(live) < 2 {
		t.Errorf("status.progress changed %d times while the run was running (%q); want at least 2", len(live), live)
	}
	requireSucceeded(t, run, v1alpha1.ReasonCompleted)
	p := run.Status.Progress
	switch {
	case p == nil:
		t.Fatal("the finished run has no status.progress")
	case p.Live || p.Summary != "40s/40s" || p.Achieved != run.Status.Overall.Throughput+"/s" || p.Latency == "":
		t.Errorf("final status.progress %+v; want the final figures (40s/40s, %s/s, a p99), not live", p, run.Status.Overall.Throughput)
	}
}
