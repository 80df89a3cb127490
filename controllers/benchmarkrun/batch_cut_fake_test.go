package benchmarkrun_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/runtest"
	"github.com/spanbench/spanbench/internal/shardtest"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/protocol"
)

// TestReconcileWarnsWhenABatchWasCutShort aggregates one runner's streams
// result, an open-loop stream beside a batch of 50 iterations: when the
// batch's window ended first (no wall time) the run succeeds with
// BatchCutShort naming the stream and its iterations; when the batch
// finished, and for the open-loop stream, which has no wall time either,
// the condition stays absent.
func TestReconcileWarnsWhenABatchWasCutShort(t *testing.T) {
	for _, tc := range []struct {
		name string
		wall time.Duration
		warn bool
	}{
		{"cut short", 0, true},
		{"finished", 400 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := runtest.Run("r").Created(t0).RunnersReady(t0).
				Condition(v1alpha1.ConditionLoadCompleted, metav1.ConditionTrue, v1alpha1.ReasonShardsReported, t0).Obj()
			w := &run.Spec.Workload
			w.Load = v1alpha1.LoadSpec{}
			w.Duration = &metav1.Duration{Duration: time.Second}
			w.Interval = &metav1.Duration{Duration: time.Second}
			w.Operations = []v1alpha1.OperationSpec{{Name: "read", Type: v1alpha1.OpRead, Weight: 1}, {Name: "update", Type: v1alpha1.OpUpdate, Weight: 1}}
			w.Streams = []v1alpha1.StreamSpec{
				{Name: "online", Operations: []v1alpha1.StreamOperation{{Name: "read", Weight: 1}}, Load: v1alpha1.LoadSpec{Rate: ptr.To[int32](10)}},
				{Name: "batch", Operations: []v1alpha1.StreamOperation{{Name: "update", Weight: 1}}, Load: v1alpha1.LoadSpec{Concurrency: ptr.To[int32](1)}, Iterations: ptr.To[int64](50)},
			}
			f := newFakeReconcile(t, interceptor.Funcs{}, run)
			storeStreamsShardResult(t, f, run, tc.wall)
			res, err := f.reconcile(run)
			wantResult(t, res, err, true, false)
			got := f.run(run)
			wantCondition(t, got, v1alpha1.ConditionSucceeded, metav1.ConditionTrue, v1alpha1.ReasonCompleted)
			c := condition(got, v1alpha1.ConditionBatchCutShort)
			switch {
			case tc.warn && c == nil:
				t.Fatalf("the batch's window ended before its 50 iterations did, but the run has no %s condition", v1alpha1.ConditionBatchCutShort)
			case tc.warn:
				if c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonWindowEnded || !strings.Contains(c.Message, "stream batch") ||
					!strings.Contains(c.Message, "50 iterations") || strings.Contains(c.Message, "online") {
					t.Errorf("%s = %s/%s %q; want True/%s naming stream batch and its 50 iterations, not online", c.Type, c.Status, c.Reason, c.Message, v1alpha1.ReasonWindowEnded)
				}
			case c != nil:
				t.Errorf("the batch finished (wall time %v), yet the run has %s: %q", tc.wall, c.Type, c.Message)
			}
		})
	}
}

// storeStreamsShardResult stores shard 0's final report of run's two
// streams, online and batch, each one interval of 5 operations; the
// batch's wall time is wall (0: its window ended first).
func storeStreamsShardResult(t *testing.T, f *fakeReconcile, run *v1alpha1.BenchmarkRun, wall time.Duration) {
	t.Helper()
	w := run.Spec.Workload.Resolved()
	spec, err := protocol.RecordedSpec(&w)
	if err != nil {
		t.Fatal(err)
	}
	end := t0.Add(w.Interval.Duration)
	var streams []*result.Document
	for _, s := range w.Streams {
		sd := &result.Document{SchemaVersion: result.SchemaVersion, Run: run.Name, Stream: s.Name, Spec: spec, Start: t0, End: end,
			IntervalSeconds: w.Interval.Seconds(), Shards: []result.Shard{{Index: 0, Count: 1, Started: t0, Ended: end}},
			Intervals: []result.Interval{{Index: 0, Operations: []result.IntervalOperation{shardtest.Operation(s.Operations[0].Name, result.Counts{OK: 5})}}}}
		if s.Iterations != nil {
			sd.Shards[0].WallTimeSeconds = wall.Seconds()
		}
		if err := result.Finalize(sd); err != nil {
			t.Fatal(err)
		}
		streams = append(streams, sd)
	}
	base := &result.Document{SchemaVersion: result.SchemaVersion, Run: run.Name, Spec: spec, Start: t0,
		IntervalSeconds: w.Interval.Seconds(), Shards: []result.Shard{{Index: 0, Count: 1}}}
	doc, err := result.StreamsDocument(base, streams)
	if err != nil {
		t.Fatal(err)
	}
	storeShardDocument(t, f, run, doc)
}
