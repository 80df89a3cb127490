package benchmarkcampaign

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// showQueuedRuns says, in the Reconciling condition's message, which of
// the campaign's runs wait for a database another run holds (the run
// reconciler's claim, controllers/benchmarkrun/database_claim.go): the
// campaign's own runs never share one, but a run of another campaign or
// a standalone run may hold it, and then the campaign's run is queued,
// Pending, until that run ends.
func showQueuedRuns(c *v1alpha1.BenchmarkCampaign, runs map[string]*v1alpha1.BenchmarkRun) {
	cond := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.CampaignReconciling)
	if cond == nil || cond.Status != metav1.ConditionTrue {
		return
	}
	var queued []string
	for name, run := range runs {
		if w := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionDatabaseClaimed); !run.IsFinished() && w != nil && w.Reason == v1alpha1.ReasonDatabaseInUse {
			queued = append(queued, "run "+name+" is queued: "+w.Message)
		}
	}
	if len(queued) == 0 {
		return
	}
	sort.Strings(queued)
	if n := len(queued) - maxQueuedShown; n > 0 {
		queued = append(queued[:maxQueuedShown], fmt.Sprintf("%d more runs are queued", n))
	}
	cond.Message += "; " + strings.Join(queued, "; ")
}

// maxQueuedShown bounds the queued runs a condition message names.
const maxQueuedShown = 3
