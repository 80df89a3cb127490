package benchmarkrun

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
)

// warnIfBatchCutShort sets BatchCutShort when a batch stream's window
// ended before its iterations did (result.CutBatches): its figures are of
// fewer operations than asked and it has no wall time, which an absent
// status.streams[].wallTime alone does not say. Otherwise the condition
// stays absent.
func warnIfBatchCutShort(run *v1alpha1.BenchmarkRun, doc *result.Document, now time.Time) {
	cut := doc.CutBatches()
	if len(cut) == 0 {
		return
	}
	parts := make([]string, len(cut))
	for i, c := range cut {
		parts[i] = fmt.Sprintf("stream %s: %s", c.Stream, c)
	}
	msg := strings.Join(parts, "; ") + ". Give it a longer window (its duration, or the run's) or fewer iterations."
	run.SetCondition(v1alpha1.ConditionBatchCutShort, metav1.ConditionTrue, v1alpha1.ReasonWindowEnded, msg, now)
}
