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
	"github.com/spanbench/spanbench/controllers/statuswrite"
	"github.com/spanbench/spanbench/result"
)

// When every run of an iteration has ended, the campaign reads each
// succeeded run's merged result from its report ConfigMap (written by the
// run controller, result_aggregation.go) and compares the cells with the
// baseline. A run that failed, or whose report cannot be read, contributes
// nothing and is named in the Ready condition; the iteration fails when
// the comparison cannot be made or a run failed.

// complete compares the iteration's runs, by the comparison settings of
// the spec it ran, and ends it. Each report is read through the checks a
// run's own aggregation applies (runStatistics); one that fails them makes
// its cell's rows Invalid, naming the run and the check, and fails the
// iteration: an edited or malformed report never yields a verdict.
func (r *BenchmarkCampaignReconciler) complete(ctx context.Context, p *pass, ip *iterationPlan, it *v1alpha1.IterationStatus, slots []runSlot) error {
	cells := make([]comparison.Cell, len(ip.cells))
	for i := range ip.cells {
		cells[i].Name = ip.cells[i].Name
	}
	intervals := cellsNeedingIntervals(p, slots, len(cells), ip.baseline)
	var problems []string
	for _, s := range slots {
		run := p.runs[s.name]
		if run.Status.Phase != v1alpha1.PhaseSucceeded {
			problems = append(problems, fmt.Sprintf("run %s %s", run.Name, strings.ToLower(string(run.Status.Phase))))
			continue
		}
		doc, err := r.runStatistics(ctx, run, intervals[s.cell])
		if runreport.APITrouble(err) {
			return err // the API server's, not the report's: the next pass reads again
		}
		if err != nil {
			msg := fmt.Sprintf("run %s: unreadable result: %s", run.Name, statuswrite.Shorten(err.Error(), statuswrite.MaxProblemBytes))
			problems = append(problems, msg)
			cells[s.cell].Invalid = append(cells[s.cell].Invalid, msg)
			continue
		}
		cells[s.cell].Runs = append(cells[s.cell].Runs, doc)
	}
	end := iterationEnd{outcome: v1alpha1.IterationSucceeded, results: cells}
	table, err := comparison.Assemble(&ip.spec.Comparison, cells, ip.baseline)
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

// cellsNeedingIntervals says which cells' runs the comparison reads
// interval by interval: a cell with fewer than two succeeded runs is
// compared with the baseline by sectioning the intervals of one run
// of each (comparison.Assemble), so it and the baseline keep them; every
// other comparison reads the runs' totals only.
func cellsNeedingIntervals(p *pass, slots []runSlot, cells, baseline int) []bool {
	succeeded := make([]int, cells)
	for _, s := range slots {
		if p.runs[s.name].Status.Phase == v1alpha1.PhaseSucceeded {
			succeeded[s.cell]++
		}
	}
	need := make([]bool, cells)
	for i, n := range succeeded {
		if n < 2 {
			need[i], need[baseline] = true, true
		}
	}
	return need
}

// readyFailed records why the last iteration failed in the Ready
// condition, where setCampaignConditions keeps it.
func readyFailed(c *v1alpha1.BenchmarkCampaign, msg string, now time.Time) {
	meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: v1alpha1.CampaignReady, Status: metav1.ConditionFalse,
		Reason: reasonIterationFailed, Message: msg, ObservedGeneration: c.Generation, LastTransitionTime: metav1.NewTime(now)})
}

// runStatistics reads a succeeded run's merged result as the campaign
// compares it, one run at a time: the report is read within its decode
// budget and checked against the run exactly as `spanbench report --run`
// reads it (ReadReportFrom: the run's spec hash, its intervals, counts and
// histograms, figures derived again; a search section agreeing with the
// run's status.search, checkSearch), and then holds only what a
// comparison reads: its totals, sections and, when intervals says the
// comparison sections them, its intervals. A dense 30-minute report
// decodes into about 175 MiB; what is kept of it is its totals, so a
// campaign of many runs holds one report's decode at a time
// (docs/performance.md, "Campaign comparisons").
func (r *BenchmarkCampaignReconciler) runStatistics(ctx context.Context, run *v1alpha1.BenchmarkRun, intervals bool) (*result.Document, error) {
	if run.Status.Report == nil {
		return nil, fmt.Errorf("no report")
	}
	doc, err := runreport.LoadReport(ctx, r.APIReader, r.Results, run)
	if err != nil {
		return nil, err
	}
	if doc, err = runreport.CheckReport(run, doc, r.Arrivals); err != nil {
		return nil, fmt.Errorf("ConfigMap %s/%s: %w", run.Namespace, run.Status.Report.ConfigMapName, err)
	}
	if err := checkSearch(run, doc); err != nil {
		return nil, fmt.Errorf("ConfigMap %s/%s: %w", run.Namespace, run.Status.Report.ConfigMapName, err)
	}
	if !intervals {
		doc.Intervals = nil
	}
	return runreport.WithStatusMonitoring(doc, run), nil
}
