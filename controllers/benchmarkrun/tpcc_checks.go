package benchmarkrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun/serverfigures"
	"github.com/spanbench/spanbench/controllers/statuswrite"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/workload"
)

// After a TPCC run's shards are merged, and before its report is written,
// the manager checks the TPC-C consistency conditions against the run's
// database (spec.workload.tpcc.consistencyChecks) with its own identity,
// through the same endpoint allowlist as every other call. Only the
// manager sees the whole run finished: a runner is one shard of several.
// The checks go into the report's tpcc.checks, status.tpcc.checks and
// condition ConsistencyChecked. A failed condition fails the run: its
// figures counted work the database lost or duplicated, so they are not a
// result (a campaign never compares them). Checks that cannot run (the
// database unreadable within consistencyTimeout) leave the run's outcome
// alone and say so in the condition, the report (where a campaign reads
// it and compares none of the run's figures) and a warning event.

// The checks' time limit is consistencyBase plus a budget per warehouse
// of the population (workload.CheckTPCC reads each warehouse's rows,
// several at once; docs/workloads.md gives the measured cost), at most
// consistencyMax: the snapshot they read must stay readable, within
// Spanner's default version retention of one hour. They run in the
// background (spanner_calls.go): no reconcile waits for them.
const (
	consistencyBase    = 2 * time.Minute
	consistencyPerFull = 30 * time.Second
	consistencyPerTest = time.Second
	consistencyMax     = 50 * time.Minute
)

// consistencyTimeout is the checks' time limit for a TPCC workload.
func consistencyTimeout(w *v1alpha1.WorkloadSpec) time.Duration {
	s := w.TPCC.Scale()
	per := consistencyPerFull
	if s.Test {
		per = consistencyPerTest
	}
	return min(consistencyBase+time.Duration(s.Warehouses)*per, consistencyMax)
}

// consistencyStep names the check among a run's Spanner calls.
const consistencyStep = "tpcc-consistency"

// consistencyOutcome is what one check found, or why it could not run.
type consistencyOutcome struct {
	checks     []result.Check
	warehouses int
	rows       int64
	took       time.Duration
}

// awaitConsistency checks the consistency conditions a TPCC run asks for,
// in the background, before its aggregation. done is false while the
// check runs (the run stays Aggregating, ConsistencyChecked Unknown with
// ReasonConsistencyChecking; res is the fallback poll). Once it ended, its
// outcome is in the condition and status.tpcc.checks, where a later pass
// (after a failed aggregation, or a restart) reads it instead of checking
// again; checks are the conditions found, nil when none were checked.
func (r *BenchmarkRunReconciler) awaitConsistency(ctx context.Context, run *v1alpha1.BenchmarkRun, outbox *statuswrite.Outbox) (checks []result.Check, res ctrl.Result, done bool) {
	w := run.Spec.Workload
	if w.Type != v1alpha1.WorkloadTPCC || w.TPCC == nil || !w.TPCC.ConsistencyChecks {
		return nil, ctrl.Result{}, true
	}
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionConsistencyChecked)
	if c != nil && c.Reason != v1alpha1.ReasonConsistencyChecking {
		return recordedChecks(run.Status.TPCC), ctrl.Result{}, true
	}
	restarted := c != nil && (r.SpannerCalls == nil || !r.SpannerCalls.Holds(run, consistencyStep))
	target, clk := run.DeepCopy(), r.Clock
	timeout := consistencyTimeout(&w)
	out, err, ok := spannerCall(ctx, r, run, consistencyStep, "", timeout, func(ctx context.Context) (consistencyOutcome, error) {
		start := clk.Now()
		var doc result.Document
		check, err := r.readConsistency(ctx, target, &doc)
		if err != nil {
			return consistencyOutcome{}, err
		}
		return consistencyOutcome{checks: doc.TPCC.Checks, warehouses: check.Warehouses, rows: check.Rows, took: clk.Since(start)}, nil
	})
	if !ok {
		msg := "checking the TPC-C consistency conditions against the database"
		if restarted {
			msg += " again: the manager restarted during the check"
		}
		if c == nil || restarted {
			run.SetCondition(v1alpha1.ConditionConsistencyChecked, metav1.ConditionUnknown, v1alpha1.ReasonConsistencyChecking, msg, r.now())
		}
		return nil, ctrl.Result{RequeueAfter: spannerCallPoll}, false
	}
	if err != nil {
		msg := "not checked: " + consistencyError(err, timeout)
		run.SetCondition(v1alpha1.ConditionConsistencyChecked, metav1.ConditionFalse, v1alpha1.ReasonConsistencySkipped, msg, r.now())
		outbox.Warning(EventConsistencyNotChecked, msg)
		return nil, ctrl.Result{}, true
	}
	r.recordConsistency(run, out, outbox)
	return out.checks, ctrl.Result{}, true
}

// recordConsistency sets the condition of an ended check and records its
// conditions in status.tpcc.checks.
func (r *BenchmarkRunReconciler) recordConsistency(run *v1alpha1.BenchmarkRun, out consistencyOutcome, outbox *statuswrite.Outbox) {
	if run.Status.TPCC == nil {
		run.Status.TPCC = &v1alpha1.TPCCStatus{}
	}
	run.Status.TPCC.Checks = checkStatuses(out.checks)
	checked := fmt.Sprintf("%d warehouses, %d rows, checked in %s", out.warehouses, out.rows, out.took.Round(time.Millisecond))
	failed := failedChecks(out.checks)
	if len(failed) == 0 {
		msg := fmt.Sprintf("all %d TPC-C consistency conditions held (%s)", len(out.checks), checked)
		run.SetCondition(v1alpha1.ConditionConsistencyChecked, metav1.ConditionTrue, v1alpha1.ReasonConsistencyPassed, msg, r.now())
		outbox.Normal(EventConsistencyPassed, msg)
		return
	}
	var details []string
	for _, c := range out.checks {
		if !c.Passed {
			details = append(details, c.Name+": "+c.Detail)
		}
	}
	msg := statuswrite.Shorten(fmt.Sprintf("%d of %d TPC-C consistency conditions failed (%s): %s", len(failed), len(out.checks), checked, strings.Join(details, "; ")), maxProblemsBytes)
	run.SetCondition(v1alpha1.ConditionConsistencyChecked, metav1.ConditionFalse, v1alpha1.ReasonConsistencyFailed, msg, r.now())
}

// notChecked is why the run's consistency conditions were not checked,
// as its condition says, or "" when they were (or were not asked for).
func notChecked(run *v1alpha1.BenchmarkRun) string {
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionConsistencyChecked)
	if c == nil || c.Reason != v1alpha1.ReasonConsistencySkipped {
		return ""
	}
	return statuswrite.Shorten(c.Message, 1024)
}

// recordChecks writes the checks, or why there are none, into the
// run's merged report: an unchecked run says so in its report, where a
// campaign reads it, not only in an event.
func recordChecks(merged *result.Document, checks []result.Check, why string) {
	if checks == nil && why == "" {
		return
	}
	if merged.TPCC == nil {
		merged.TPCC = &result.TPCC{}
	}
	merged.TPCC.Checks, merged.TPCC.NotChecked = checks, why
}

// failedChecks names the checks that did not hold.
func failedChecks(checks []result.Check) (failed []string) {
	for _, c := range checks {
		if !c.Passed {
			failed = append(failed, c.Name)
		}
	}
	return failed
}

// recordedChecks are the checks an earlier pass recorded in the status.
func recordedChecks(t *v1alpha1.TPCCStatus) []result.Check {
	if t == nil {
		return nil
	}
	var out []result.Check
	for _, c := range t.Checks {
		out = append(out, result.Check{Name: c.Name, Passed: c.Passed, Detail: c.Detail})
	}
	return out
}

// Events of the checks (a failure's event is the run's failure event).
const (
	EventConsistencyPassed     = "ConsistencyPassed"
	EventConsistencyNotChecked = "ConsistencyNotChecked"
)

// readConsistency dials the run's database with the manager's identity
// and records the conditions in doc.
func (r *BenchmarkRunReconciler) readConsistency(ctx context.Context, run *v1alpha1.BenchmarkRun, doc *result.Document) (workload.TPCCCheck, error) {
	opener, ok := r.Preparer.(serverfigures.DatabaseOpener)
	if !ok {
		return workload.TPCCCheck{}, errors.New("this manager's Spanner access cannot open databases")
	}
	s, err := opener.OpenDatabase(ctx, run)
	if err != nil {
		return workload.TPCCCheck{}, err
	}
	defer s.Close()
	return workload.CheckTPCCInto(ctx, s.Client, doc)
}

// consistencyError names why the checks did not run without quoting dial
// errors or addresses, as the server statistics' messages do.
func consistencyError(err error, timeout time.Duration) string {
	if errors.Is(err, endpoint.ErrNotAllowed) {
		return "the run's endpoint is not among the addresses the manager may dial; nothing was dialed"
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("the checks took longer than %s", timeout)
	}
	_, msg, _ := serverfigures.ClassifyServerStatsError(err)
	return msg
}

// failConsistency is the run's failure message when conditions failed.
func failConsistency(failed []string) string {
	return statuswrite.Shorten("the database is inconsistent after the run, so its figures are not a result: TPC-C consistency condition(s) failed: "+
		strings.Join(failed, "; ")+" (condition ConsistencyChecked says where)", maxProblemsBytes)
}

// applyTPCC writes doc's tpmC (and committed tpmC), executed mix and checks
// into the status.
func applyTPCC(status *v1alpha1.BenchmarkRunStatus, doc *result.Document) {
	if doc.TPCC == nil {
		status.TPCC = nil
		return
	}
	t := &v1alpha1.TPCCStatus{TpmC: v1alpha1.FormatThroughput(doc.TPCC.TpmC), CommittedTpmC: v1alpha1.FormatThroughput(doc.TPCC.CommittedTpmC)}
	for _, s := range doc.TPCC.Mix {
		t.Mix = append(t.Mix, v1alpha1.TPCCShareStatus{Type: v1alpha1.OperationType(s.Type),
			Completed: int64(min(s.Completed, result.MaxCount)), Percent: v1alpha1.FormatThroughput(min(s.Percent, 100))})
	}
	t.Checks = checkStatuses(doc.TPCC.Checks)
	status.TPCC = t
}

// checkStatuses are checks as status.tpcc.checks holds them.
func checkStatuses(checks []result.Check) []v1alpha1.TPCCCheckStatus {
	var out []v1alpha1.TPCCCheckStatus
	for _, c := range checks {
		out = append(out, v1alpha1.TPCCCheckStatus{Name: statuswrite.Shorten(c.Name, 80), Passed: c.Passed, Detail: statuswrite.Shorten(c.Detail, 1024)})
	}
	return out
}
