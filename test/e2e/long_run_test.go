//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// Issue 11's everyday long run: 10 operations at 100 ops/s in all, one
// runner, 1 s intervals for 3 minutes, 1,800 interval-operations, as a
// 30-minute run at the default 10 s interval produces. Before compact
// histograms and the streaming merge it ran fine, then the manager was
// OOM-killed while aggregating it, four times.
const (
	longRunOps      = 10
	longRunDuration = 3 * time.Minute
	longRunRate     = 100
)

// TestLongRunAggregatesWithinTheManagersLimits runs issue 11's long run
// on the installed manager, with its default memory limit and runner
// limits as the demo sample sets them, and requires that the run succeed
// with every interval of every operation merged exactly, and that the
// manager container never restart on the way.
func TestLongRunAggregatesWithinTheManagersLimits(t *testing.T) {
	kustomizePassOnly(t)
	t.Parallel()
	ns := newNamespace(t, "e2e-long")
	run := demoRun(t, ns, "long", withLoad(longRunDuration, longRunRate), withReplicas(1), func(r *v1alpha1.BenchmarkRun) {
		r.Spec.Workload.Interval = &metav1.Duration{Duration: time.Second}
		r.Spec.Workload.WarmUp = nil
		r.Spec.Workload.Operations = longRunOperations()
	})
	before := managerPod(t)
	restarts := before.Status.ContainerStatuses[0].RestartCount
	create(t, run)

	run = waitFinished(t, ns, run.Name, longRunDuration+runTimeout)
	requireSucceeded(t, run, v1alpha1.ReasonCompleted)
	merged := requireExactMerge(t, run, 0)
	cells := 0
	for _, iv := range merged.Intervals {
		cells += len(iv.Operations)
	}
	// The first and last seconds may hold no operation of a kind at 10/s.
	if want := longRunOps * int(longRunDuration/time.Second) * 95 / 100; cells < want {
		t.Errorf("the merged result holds %d interval-operations in %d intervals; want at least %d", cells, len(merged.Intervals), want)
	}
	after := managerPod(t)
	if after.UID != before.UID || after.Status.ContainerStatuses[0].RestartCount != restarts {
		t.Fatalf("the manager was replaced or restarted during the long run: pod %s restarts %d before, pod %s restarts %d after",
			before.Name, restarts, after.Name, after.Status.ContainerStatuses[0].RestartCount)
	}
	t.Logf("%d interval-operations merged in %d intervals; manager %s (limit %s) never restarted",
		cells, len(merged.Intervals), after.Name, after.Spec.Containers[0].Resources.Limits.Memory())
}

// longRunOperations are ten reads and updates of the demo's YCSB table,
// weighted equally; the stale reads keep the emulator's strong reads,
// which slow down as it ages, to a few.
func longRunOperations() []v1alpha1.OperationSpec {
	ops := make([]v1alpha1.OperationSpec, longRunOps)
	for i := range ops {
		op := v1alpha1.OperationSpec{Name: fmt.Sprintf("op-%d", i), Type: v1alpha1.OpRead, Weight: 1,
			Staleness: &v1alpha1.StalenessSpec{Exact: &metav1.Duration{Duration: 15 * time.Second}}}
		switch {
		case i == 0:
			op.Type, op.Staleness = v1alpha1.OpUpdate, nil
		case i%2 == 1:
			op.API = v1alpha1.APISQL
		}
		ops[i] = op
	}
	return ops
}
