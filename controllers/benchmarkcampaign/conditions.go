package benchmarkcampaign

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// Reasons of a campaign's conditions and events.
const (
	reasonInvalidCampaign  = "InvalidCampaign"
	reasonIterationStarted = "IterationStarted"
	reasonIterationRunning = "IterationRunning"
	reasonIterationDone    = "IterationCompleted"
	reasonIterationFailed  = "IterationFailed"
	reasonIdle             = "Idle"
	reasonRunCreated       = "RunCreated"
)

// stall is why a campaign cannot proceed without a change to its spec or
// to the objects in its way.
type stall struct{ reason, message string }

func stalledBy(reason, message string) *stall { return &stall{reason, message} }

// setCampaignConditions derives the kstatus conditions from the status:
// Stalled when s says so; Reconciling while an iteration runs or one is
// due; Ready when neither and the last iteration did not fail; Regressed
// when the verdict is Regressed.
func setCampaignConditions(c *v1alpha1.BenchmarkCampaign, s *stall, now time.Time) {
	set := func(t string, ok bool, reason, msg string) {
		st := metav1.ConditionFalse
		if ok {
			st = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: t, Status: st, Reason: reason, Message: msg,
			ObservedGeneration: c.Generation, LastTransitionTime: metav1.NewTime(now)})
	}
	running := runningIterations(c)
	last := lastIteration(c)
	switch {
	case s != nil:
		set(v1alpha1.CampaignStalled, true, s.reason, s.message)
		set(v1alpha1.CampaignReconciling, false, s.reason, "")
		set(v1alpha1.CampaignReady, false, s.reason, s.message)
	case running > 0:
		set(v1alpha1.CampaignStalled, false, reasonIterationRunning, "")
		set(v1alpha1.CampaignReconciling, true, reasonIterationRunning, fmt.Sprintf("%d iteration(s) running", running))
		set(v1alpha1.CampaignReady, false, reasonIterationRunning, "an iteration is running")
	case last != nil && last.Outcome == v1alpha1.IterationFailed:
		set(v1alpha1.CampaignStalled, false, reasonIterationFailed, "")
		set(v1alpha1.CampaignReconciling, false, reasonIterationFailed, "")
		set(v1alpha1.CampaignReady, false, reasonIterationFailed, failureMessage(c, last))
	default:
		set(v1alpha1.CampaignStalled, false, reasonIdle, "")
		set(v1alpha1.CampaignReconciling, false, reasonIdle, "")
		set(v1alpha1.CampaignReady, true, reasonIdle, "no iteration running")
	}
	regressed, reason, msg := regression(c) // trend.go
	set(v1alpha1.CampaignRegressed, regressed, reason, msg)
}

// failureMessage says why the last iteration failed: the message the
// comparison left, else the run counts.
func failureMessage(c *v1alpha1.BenchmarkCampaign, it *v1alpha1.IterationStatus) string {
	if cond := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.CampaignReady); cond != nil &&
		cond.Reason == reasonIterationFailed && cond.Message != "" {
		return cond.Message
	}
	return fmt.Sprintf("iteration %s: %d of %d runs failed", it.Name, it.Failed, it.Runs)
}

func orNone(v v1alpha1.CampaignVerdict) v1alpha1.CampaignVerdict {
	if v == "" {
		return "none"
	}
	return v
}

func runningIterations(c *v1alpha1.BenchmarkCampaign) int {
	n := 0
	for _, it := range c.Status.Iterations {
		if it.Outcome == v1alpha1.IterationRunning {
			n++
		}
	}
	return n
}

func lastIteration(c *v1alpha1.BenchmarkCampaign) *v1alpha1.IterationStatus {
	for i := len(c.Status.Iterations) - 1; i >= 0; i-- {
		if c.Status.Iterations[i].Outcome != v1alpha1.IterationMissed {
			return &c.Status.Iterations[i]
		}
	}
	return nil
}
