package scale_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/await"
)

// scaleRun is a YCSB run of strong point reads against the emulator at
// host, database db. Not stale reads: a run's start would then wait for
// the staleness bound to pass after its load, and that wait would read as
// the start barrier's delay. (Strong reads slow down as an emulator ages;
// each benchmark starts a fresh one, and a few thousand reads age it by
// milliseconds.)
func scaleRun(ns, name, host, db string, replicas, rate int32, duration time.Duration) *v1alpha1.BenchmarkRun {
	rows, nodes := int64(300), int32(1)
	return &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.BenchmarkRunSpec{
			Target: v1alpha1.TargetSpec{Project: "spanbench-test", Database: db, EmulatorHost: host,
				Instance: v1alpha1.InstanceSpec{Name: "bench", Config: "regional-asia-northeast1", Nodes: &nodes}},
			Workload: v1alpha1.WorkloadSpec{Type: v1alpha1.WorkloadYCSB, Dataset: v1alpha1.DatasetSpec{Rows: &rows},
				Operations: []v1alpha1.OperationSpec{
					{Type: v1alpha1.OpRead, Weight: 1}},
				Load: v1alpha1.LoadSpec{Rate: &rate}, Duration: &metav1.Duration{Duration: duration},
				Interval: &metav1.Duration{Duration: time.Second}},
			Runners: v1alpha1.RunnersSpec{Replicas: &replicas},
			Deadlines: v1alpha1.DeadlinesSpec{RunnersReady: &metav1.Duration{Duration: 10 * time.Minute},
				Overrun: &metav1.Duration{Duration: 5 * time.Minute}},
		},
	}
}

// phaseTimes records when a watcher first saw each phase of a run, as
// the time since the run was applied.
type phaseTimes map[v1alpha1.BenchmarkRunPhase]time.Duration

// awaitFinished polls the run every 100 ms until it ends (within limit),
// recording when each phase was first seen; it fails the benchmark with
// the farm's log unless the run succeeded.
func awaitFinished(b *testing.B, c client.Client, run *v1alpha1.BenchmarkRun, applied time.Time, limit time.Duration, f *farm) (*v1alpha1.BenchmarkRun, phaseTimes) {
	b.Helper()
	seen := phaseTimes{}
	got := &v1alpha1.BenchmarkRun{}
	ok, state := await.Until(context.Background(), await.Poll{Within: limit, Every: 100 * time.Millisecond}, func() (bool, string) {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(run), got); err != nil {
			return false, err.Error()
		}
		if _, ok := seen[got.Status.Phase]; !ok {
			seen[got.Status.Phase] = time.Since(applied)
		}
		return got.IsFinished(), fmt.Sprintf("phase %s", got.Status.Phase)
	})
	if !ok {
		b.Fatalf("run %s did not end within %s (last: %s); farm log:\n%s", run.Name, limit, state, f.log())
	}
	if got.Status.Phase != v1alpha1.PhaseSucceeded || got.Status.Partial {
		b.Fatalf("run %s ended %s (partial %v): %+v; farm log:\n%s", run.Name, got.Status.Phase, got.Status.Partial, got.Status.Conditions, f.log())
	}
	return got, seen
}
