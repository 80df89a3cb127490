package benchmarkrun_test

import (
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/runtest"
	"github.com/spanbench/spanbench/internal/shardtest"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/protocol"
)

// TestReconcileWarnsWhenMostReadsFoundNothing aggregates one shard whose
// reads found rows ok times and nothing notFound times: above half
// not-found the run carries ReadsFoundNothing with the counts in its
// message; at or below it, it does not. Either way the status counts
// not-found apart from the successful reads.
func TestReconcileWarnsWhenMostReadsFoundNothing(t *testing.T) {
	for _, tc := range []struct {
		name         string
		ok, notFound uint64
		warn         bool
	}{
		{"most reads empty", 9_392, 20_608, true},
		{"half empty", 500, 500, false},
		{"few empty", 29_000, 1_000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// 30,000/s in 1 s intervals: room in one interval for the
			// 30,000 reads the shard counts there.
			run := runtest.Run("r").Rate(30_000).Created(t0).RunnersReady(t0).
				Condition(v1alpha1.ConditionLoadCompleted, metav1.ConditionTrue, v1alpha1.ReasonShardsReported, t0).Obj()
			f := newFakeReconcile(t, interceptor.Funcs{}, run)
			storeShardResult(t, f, run, result.Counts{OK: tc.ok, Rows: tc.ok, NotFound: tc.notFound})
			res, err := f.reconcile(run)
			wantResult(t, res, err, true, false)
			got := f.run(run)
			wantCondition(t, got, v1alpha1.ConditionSucceeded, metav1.ConditionTrue, v1alpha1.ReasonCompleted)
			if o := got.Status.Overall; o == nil || o.Count != int64(tc.ok) || o.NotFound != int64(tc.notFound) || o.Errors != 0 {
				t.Fatalf("status.overall %+v; want count %d, notFound %d, no errors", o, tc.ok, tc.notFound)
			}
			c := condition(got, v1alpha1.ConditionReadsFoundNothing)
			switch {
			case tc.warn && c == nil:
				t.Fatalf("%d of %d reads found nothing, but the run has no %s condition", tc.notFound, tc.ok+tc.notFound, v1alpha1.ConditionReadsFoundNothing)
			case tc.warn:
				want := []string{itoa(tc.notFound), itoa(tc.ok + tc.notFound)}
				if c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonMostReadsNotFound || !containsAll(c.Message, want) {
					t.Errorf("%s = %s/%s %q; want True/%s naming %v", c.Type, c.Status, c.Reason, c.Message, v1alpha1.ReasonMostReadsNotFound, want)
				}
			case c != nil:
				t.Errorf("%d of %d reads found nothing (not most), yet the run has %s: %q", tc.notFound, tc.ok+tc.notFound, c.Type, c.Message)
			}
		})
	}
}

// storeShardResult stores shard 0's final report: one interval in which
// the run's only operation (a Read) counted c.
func storeShardResult(t *testing.T, f *fakeReconcile, run *v1alpha1.BenchmarkRun, c result.Counts) {
	t.Helper()
	w := run.Spec.Workload.Resolved()
	spec, err := protocol.RecordedSpec(&w)
	if err != nil {
		t.Fatal(err)
	}
	end := t0.Add(w.Interval.Duration)
	doc := &result.Document{SchemaVersion: result.SchemaVersion, Run: run.Name, Spec: spec, Start: t0, End: end,
		IntervalSeconds: w.Interval.Seconds(), Shards: []result.Shard{{Index: 0, Count: 1, Started: t0, Ended: end}},
		Intervals: []result.Interval{{Index: 0, Operations: []result.IntervalOperation{shardtest.Operation(w.Operations[0].Name, c)}}}}
	if err := result.Finalize(doc); err != nil {
		t.Fatal(err)
	}
	storeShardDocument(t, f, run, doc)
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
