package benchmarkcampaign

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/comparison"
	"github.com/spanbench/spanbench/controllers/runreport"
	"github.com/spanbench/spanbench/result"
)

// When every run of an iteration has ended, the campaign reads each
// succeeded run's merged result from its report ConfigMap (written by the
// run controller, result_aggregation.go) and compares the cells with the
// baseline. A run that failed, or whose report cannot be read, contributes
// nothing and is named in the Ready condition; the iteration fails when
// the comparison cannot be made or a run failed.

// complete compares the iteration's runs, by the comparison settings of
// the spec it ran, and ends it.
func (r *BenchmarkCampaignReconciler) complete(ctx context.Context, p *pass, ip *iterationPlan, it *v1alpha1.IterationStatus, slots []runSlot) error {
	cells := make([]comparison.Cell, len(ip.cells))
	for i := range ip.cells {
		cells[i].Name = ip.cells[i].Name
	}
	var problems []string
	for _, s := range slots {
		run := p.runs[s.name]
		if run.Status.Phase != v1alpha1.PhaseSucceeded {
			problems = append(problems, fmt.Sprintf("run %s %s", run.Name, strings.ToLower(string(run.Status.Phase))))
			continue
		}
		doc, err := r.runResult(ctx, run)
		if err != nil {
			problems = append(problems, fmt.Sprintf("run %s: unreadable result: %v", run.Name, err))
			continue
		}
		cells[s.cell].Runs = append(cells[s.cell].Runs, doc)
	}
	end := iterationEnd{outcome: v1alpha1.IterationSucceeded, results: cells}
	table, err := comparison.Assemble(&ip.spec.Comparison, cells, ip.baseline, ip.spec.OrderSeed())
	if err != nil {
		problems = append(problems, "no comparison: "+err.Error())
	} else {
		end.table = &table
	}
	if len(problems) > 0 {
		end.outcome, end.why = v1alpha1.IterationFailed, strings.Join(problems, "; ")
	}
	return r.endIteration(ctx, p, it, end)
}

// readyFailed records why the last iteration failed in the Ready
// condition, where setCampaignConditions keeps it.
func readyFailed(c *v1alpha1.BenchmarkCampaign, msg string, now time.Time) {
	meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: v1alpha1.CampaignReady, Status: metav1.ConditionFalse,
		Reason: reasonIterationFailed, Message: msg, ObservedGeneration: c.Generation, LastTransitionTime: metav1.NewTime(now)})
}

// runResult reads a succeeded run's merged result from its report, and
// its chunks when it has any (through APIReader: they are not cached).
func (r *BenchmarkCampaignReconciler) runResult(ctx context.Context, run *v1alpha1.BenchmarkRun) (*result.Document, error) {
	if run.Status.Report == nil {
		return nil, fmt.Errorf("no report")
	}
	doc, err := runreport.LoadReport(ctx, r.APIReader, r.Results, run)
	if err != nil {
		return nil, err
	}
	return runreport.WithStatusMonitoring(doc, run), nil
}
