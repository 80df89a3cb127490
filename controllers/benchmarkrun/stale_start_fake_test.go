package benchmarkrun_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/runtest"
)

// TestReconcileStartWaitsForStaleReadsToSeeTheLoadedDataset: a run whose
// reads are 15 s stale, and which loaded its dataset at t0, starts no sooner
// than 15 s after the load (with the margins), and its RunnersReady
// message says why; a run whose reads are strong, or which found its
// dataset already loaded, starts after the startup grace as before.
func TestReconcileStartWaitsForStaleReadsToSeeTheLoadedDataset(t *testing.T) {
	const staleness = 15 * time.Second
	for _, tc := range []struct {
		name   string
		stale  bool
		source v1alpha1.DatasetSource
		wait   bool
	}{
		{"stale reads after a load", true, v1alpha1.DatasetLoaded, true},
		{"stale reads after a reload", true, v1alpha1.DatasetReloaded, true},
		{"stale reads of a dataset found loaded", true, v1alpha1.DatasetExisting, false},
		{"strong reads after a load", false, v1alpha1.DatasetLoaded, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := runtest.Run("r").Created(t0).DatasetLoaded(t0).Obj()
			run.Status.Dataset = &v1alpha1.DatasetStatus{Table: "usertable", Rows: 300, Source: tc.source}
			if tc.stale {
				run.Spec.Workload.Operations[0].Staleness = &v1alpha1.StalenessSpec{Exact: &metav1.Duration{Duration: staleness}}
			}
			f := newFakeReconcile(t, interceptor.Funcs{}, run)
			f.clock.SetTime(t0.Add(2 * time.Second)) // runners ready 2 s after the load
			runnersReady(t, f, run)
			if _, err := f.reconcile(run); err != nil {
				t.Fatal(err)
			}
			got := f.run(run)
			if got.Status.StartTime == nil {
				t.Fatal("no start was published")
			}
			start := got.Status.StartTime.Time
			earliest := t0.Add(staleness)
			if tc.wait && start.Before(earliest) {
				t.Errorf("the load starts at %s, %s after the dataset was loaded: its %s-stale reads read the empty pre-load table",
					start.Format(time.RFC3339Nano), start.Sub(t0), staleness)
			}
			if !tc.wait && !start.Before(earliest) {
				t.Errorf("the load starts at %s, %s after the dataset was loaded, but nothing needed to wait", start.Format(time.RFC3339Nano), start.Sub(t0))
			}
			c := condition(got, v1alpha1.ConditionRunnersReady)
			if says := c != nil && strings.Contains(c.Message, "staleness"); says != tc.wait {
				t.Errorf("RunnersReady %+v: says it waited for stale reads: %v, want %v", c, says, tc.wait)
			}
		})
	}
}
