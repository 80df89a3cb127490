package benchmarkrun_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/runtest"
	"github.com/spanbench/spanbench/result"
)

// TestStatusRecordsEachOperationsRequestTag: a finished run's status names,
// per operation, the tag its runners sent, so that its figures can be
// joined to Spanner's statistics — for a campaign child whose long name
// Spanner's 50-character cut would otherwise merge with its siblings', the
// shortened, hashed tag the runners actually used.
func TestStatusRecordsEachOperationsRequestTag(t *testing.T) {
	long := "read-vs-sql-tokyo-nightly-1795924800-3f9a2c-r1"
	for _, name := range []string{"r", long} {
		t.Run(name, func(t *testing.T) {
			run := runtest.Run(name).Created(t0).RunnersReady(t0).
				Condition(v1alpha1.ConditionLoadCompleted, metav1.ConditionTrue, v1alpha1.ReasonShardsReported, t0).Obj()
			f := newFakeReconcile(t, interceptor.Funcs{}, run)
			storeShardResult(t, f, run, result.Counts{OK: 100, Rows: 100})
			res, err := f.reconcile(run)
			wantResult(t, res, err, true, false)
			got := f.run(run)
			if len(got.Status.Operations) == 0 {
				t.Fatalf("the finished run's status has no operations: %+v", got.Status)
			}
			for _, op := range got.Status.Operations {
				want := v1alpha1.RequestTag(name, op.Name)
				if op.RequestTag != want || len(op.RequestTag) > v1alpha1.MaxTagLength || !strings.HasPrefix(op.RequestTag, "spanbench/") {
					t.Errorf("operation %s records request tag %q; want %q (the runners' tag, at most %d characters)",
						op.Name, op.RequestTag, want, v1alpha1.MaxTagLength)
				}
			}
		})
	}
}
