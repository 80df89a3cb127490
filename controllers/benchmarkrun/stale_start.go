package benchmarkrun

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// staleReadsReady is the earliest time the run's stale reads see the dataset
// it loaded: a read at exact (or max) staleness S started less than S after
// the load reads the snapshot before it, an empty table (EMULATOR.md). It is
// zero when no read is stale or the run found the dataset already loaded.
// The load's end is DatasetLoaded's transition, stored in whole seconds,
// so a second is added for the truncation besides StalenessMargin.
func staleReadsReady(run *v1alpha1.BenchmarkRun) time.Time {
	bound := run.Spec.Workload.StaleReadsSeeDataAfter()
	ds := run.Status.Dataset
	if bound == 0 || ds == nil || ds.Source == v1alpha1.DatasetExisting {
		return time.Time{}
	}
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionDatasetLoaded)
	if c == nil || c.Status != metav1.ConditionTrue {
		return time.Time{}
	}
	return c.LastTransitionTime.Add(time.Second + bound + v1alpha1.StalenessMargin)
}

// staleWaitNote tells, for the RunnersReady message, when stale reads can
// see the dataset the run loaded; the start is never before.
func staleWaitNote(run *v1alpha1.BenchmarkRun) string {
	ready := staleReadsReady(run)
	if ready.IsZero() {
		return ""
	}
	return fmt.Sprintf("; not before %s, when reads at up to %s staleness see the dataset loaded at %s",
		ready.UTC().Format(time.RFC3339), run.Spec.Workload.StaleReadsSeeDataAfter(),
		meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionDatasetLoaded).LastTransitionTime.UTC().Format(time.RFC3339))
}
