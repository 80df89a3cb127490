package benchmarkrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
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
// alone and say so in the condition.

// consistencyTimeout bounds the checks: one strong read-only transaction
// of five aggregate queries, each a scan of one table (docs/workloads.md
// gives their cost per warehouse). It is spent inside one reconcile.
const consistencyTimeout = 2 * time.Minute

// checkConsistency runs the checks a TPCC run asks for into doc and the
// run's status. It reports the failed checks' names, empty when none
// failed or none ran.
func (r *BenchmarkRunReconciler) checkConsistency(ctx context.Context, run *v1alpha1.BenchmarkRun, doc *result.Document, outbox *statuswrite.Outbox) (failed []string) {
	w := run.Spec.Workload
	if w.Type != v1alpha1.WorkloadTPCC || w.TPCC == nil || !w.TPCC.ConsistencyChecks {
		return nil
	}
	start := r.now()
	if err := r.readConsistency(ctx, run, doc); err != nil {
		msg := "not checked: " + consistencyError(err)
		run.SetCondition(v1alpha1.ConditionConsistencyChecked, metav1.ConditionFalse, v1alpha1.ReasonConsistencySkipped, msg, r.now())
		outbox.Warning(EventConsistencyNotChecked, msg)
		return nil
	}
	took := r.now().Sub(start).Round(time.Millisecond)
	var details []string
	for _, c := range doc.TPCC.Checks {
		if !c.Passed {
			failed = append(failed, c.Name)
			details = append(details, c.Name+": "+c.Detail)
		}
	}
	if len(failed) == 0 {
		msg := fmt.Sprintf("all %d TPC-C consistency conditions held (checked in %s)", len(doc.TPCC.Checks), took)
		run.SetCondition(v1alpha1.ConditionConsistencyChecked, metav1.ConditionTrue, v1alpha1.ReasonConsistencyPassed, msg, r.now())
		outbox.Normal(EventConsistencyPassed, msg)
		return nil
	}
	msg := shorten(fmt.Sprintf("%d of %d TPC-C consistency conditions failed (checked in %s): %s", len(failed), len(doc.TPCC.Checks), took, strings.Join(details, "; ")), maxProblemsBytes)
	run.SetCondition(v1alpha1.ConditionConsistencyChecked, metav1.ConditionFalse, v1alpha1.ReasonConsistencyFailed, msg, r.now())
	return failed
}

// Events of the checks (a failure's event is the run's failure event).
const (
	EventConsistencyPassed     = "ConsistencyPassed"
	EventConsistencyNotChecked = "ConsistencyNotChecked"
)

// readConsistency dials the run's database with the manager's identity
// and records the conditions in doc.
func (r *BenchmarkRunReconciler) readConsistency(ctx context.Context, run *v1alpha1.BenchmarkRun, doc *result.Document) error {
	opener, ok := r.Preparer.(DatabaseOpener)
	if !ok {
		return errors.New("this manager's Spanner access cannot open databases")
	}
	ctx, cancel := context.WithTimeout(ctx, consistencyTimeout)
	defer cancel()
	s, err := opener.OpenDatabase(ctx, run)
	if err != nil {
		return err
	}
	defer s.Close()
	return workload.CheckTPCCInto(ctx, s.Client, run.Spec.Target.Dialect, doc)
}

// consistencyError names why the checks did not run without quoting dial
// errors or addresses, as the server statistics' messages do.
func consistencyError(err error) string {
	if errors.Is(err, endpoint.ErrNotAllowed) {
		return "the run's endpoint is not among the addresses the manager may dial; nothing was dialed"
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("the checks took longer than %s", consistencyTimeout)
	}
	_, msg, _ := ClassifyServerStatsError(err)
	return msg
}

// failConsistency is the run's failure message when conditions failed.
func failConsistency(failed []string) string {
	return shorten("the database is inconsistent after the run, so its figures are not a result: TPC-C consistency condition(s) failed: "+
		strings.Join(failed, "; ")+" (condition ConsistencyChecked says where)", maxProblemsBytes)
}

// applyTPCC writes doc's tpmC, executed mix and checks into the status.
func applyTPCC(status *v1alpha1.BenchmarkRunStatus, doc *result.Document) {
	if doc.TPCC == nil {
		status.TPCC = nil
		return
	}
	t := &v1alpha1.TPCCStatus{TpmC: v1alpha1.FormatThroughput(doc.TPCC.TpmC)}
	for _, s := range doc.TPCC.Mix {
		t.Mix = append(t.Mix, v1alpha1.TPCCShareStatus{Type: v1alpha1.OperationType(s.Type),
			Completed: int64(min(s.Completed, result.MaxCount)), Percent: v1alpha1.FormatThroughput(min(s.Percent, 100))})
	}
	for _, c := range doc.TPCC.Checks {
		t.Checks = append(t.Checks, v1alpha1.TPCCCheckStatus{Name: shorten(c.Name, 80), Passed: c.Passed, Detail: shorten(c.Detail, 1024)})
	}
	status.TPCC = t
}
