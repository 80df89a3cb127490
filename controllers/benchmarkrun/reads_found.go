package benchmarkrun

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
)

// warnIfReadsFoundNothing sets ReadsFoundNothing when more than
// MostReadsNotFoundPercent of the reads of keys expected to exist found no
// row: such a run measured empty reads, and its figures must not pass for a
// read benchmark. Below the threshold the condition stays absent.
func warnIfReadsFoundNothing(run *v1alpha1.BenchmarkRun, doc *result.Document, now time.Time) {
	var found, notFound uint64
	for _, op := range doc.Totals {
		if v1alpha1.OperationType(op.Type).ExpectsRows() {
			found += op.OK
			notFound += op.NotFound
		}
	}
	reads := found + notFound
	if reads == 0 {
		return
	}
	// In floating point: counts from many shards may be too large to
	// multiply by 100 in uint64.
	percent := 100 * float64(notFound) / float64(reads)
	if percent <= v1alpha1.MostReadsNotFoundPercent {
		return
	}
	msg := fmt.Sprintf("%d of %d reads of keys the dataset holds found no row (%.1f%%); "+
		"stale reads whose bound reaches back before the dataset was loaded read an empty table", notFound, reads, percent)
	run.SetCondition(v1alpha1.ConditionReadsFoundNothing, metav1.ConditionTrue, v1alpha1.ReasonMostReadsNotFound, msg, now)
}
