package benchmarkrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/spanner"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/statuswrite"
	"github.com/spanbench/spanbench/spanner/dataset"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/target"
)

// Bounds of the admin calls of one prepare step.
const (
	// prepareCallMax bounds one step's admin calls: longer waits (a large
	// instance being created, a database's schema change) are polls
	// across reconciles.
	prepareCallMax = 2 * time.Minute
	// prepareCallMin is the least a step gets, even right at its deadline,
	// so that the last attempt can succeed.
	prepareCallMin = 15 * time.Second
	// retryEvery spaces retries of an error that may pass.
	retryEvery = 10 * time.Second
	// instancePollEvery spaces reads of an instance being created.
	instancePollEvery = 5 * time.Second
)

// stageDeadline is the current stage's deadline as a reconcile sees it.
type stageDeadline struct {
	// requeue is the time left (at least a second).
	requeue time.Duration
	// field is the spec.deadlines entry that sets the deadline.
	field string
	// late is true once the deadline has passed.
	late bool
	// call bounds one of the stage's Spanner calls.
	call time.Duration
}

func (r *BenchmarkRunReconciler) stageDeadline(run *v1alpha1.BenchmarkRun) stageDeadline {
	requeue, field, late := r.untilDeadline(run)
	return stageDeadline{requeue: requeue, field: field, late: late, call: max(min(requeue, prepareCallMax), prepareCallMin)}
}

// prepareTarget checks the guardrails and the preflight, makes the instance, database and
// schema ready, pre-splits the table if asked, and decides whether the
// dataset must be loaded (by the loader Job). Nothing is created for a run the
// guardrails or the preflight refuse.
func (r *BenchmarkRunReconciler) prepareTarget(ctx context.Context, run *v1alpha1.BenchmarkRun, w *v1alpha1.WorkloadSpec, outbox *statuswrite.Outbox) (ctrl.Result, error) {
	if msg := r.Limits.Check(run); msg != "" {
		r.fail(run, outbox, v1alpha1.ReasonLimitExceeded, msg)
		return ctrl.Result{}, nil
	}
	// The estimate first: a run its money cap refuses asks nothing of
	// Google either.
	if ok, err := r.estimateCost(ctx, run, outbox); !ok {
		return ctrl.Result{}, err
	}
	if res, done := r.checkPreflight(ctx, run, outbox); !done {
		return res, nil
	}
	// Nothing is created for a run before it holds its database
	// (database_claim.go).
	if res, held, err := r.claimDatabase(ctx, run, outbox); !held {
		return res, err
	}
	// A step that polls (the instance or the database being created) keeps
	// its progress message: it changes, and the run's status is written,
	// only when the progress does, and the event is emitted once.
	if c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionTargetReady); c == nil || c.Reason != v1alpha1.ReasonProvisioning {
		run.SetCondition(v1alpha1.ConditionTargetReady, metav1.ConditionFalse, v1alpha1.ReasonProvisioning, "preparing the instance, database and schema", r.now())
		outbox.Normal(v1alpha1.ReasonProvisioning, "preparing the instance, database and schema")
	}
	// Every Spanner call of these steps runs in the background
	// (spanner_calls.go): a step whose call has not ended returns, and
	// the call's end queues the run again.
	deadline := r.stageDeadline(run)
	if res, done, err := r.ensureInstance(ctx, run, outbox, deadline); !done {
		return res, err
	}
	if res, done := r.ensureDatabase(ctx, run, w, outbox, deadline); !done {
		return res, nil
	}
	cp, wc := run.DeepCopy(), w.DeepCopy()
	plan, err, ok := spannerCall(ctx, r, run, "dataset-plan", "", deadline.call, func(ctx context.Context) (DatasetPlan, error) {
		return r.Preparer.Prepare(ctx, cp, wc)
	})
	if !ok {
		return stillCalling(deadline), nil
	}
	if err != nil {
		return r.targetError(run, outbox, err, deadline), nil
	}
	recordDataset(run, plan)
	if res, done := r.applySplitPoints(ctx, run, w, outbox, deadline); !done {
		return res, nil
	}
	msg := "database and schema are ready"
	if t := run.Status.Target; t != nil {
		msg = fmt.Sprintf("instance %s (%s, %s) and database %s are ready", t.Instance, t.InstanceConfig, capacity(t), t.Database)
	}
	run.SetCondition(v1alpha1.ConditionTargetReady, metav1.ConditionTrue, v1alpha1.ReasonTargetAvailable, msg, r.now())
	outbox.Normal(v1alpha1.ReasonTargetAvailable, msg)
	if plan.Source == v1alpha1.DatasetExisting {
		run.SetCondition(v1alpha1.ConditionDatasetLoaded, metav1.ConditionTrue, v1alpha1.ReasonDatasetReady, "the database already holds the dataset; not loading", r.now())
	} else {
		msg := "the loader pods load the dataset before the runners start"
		if keep, load := tableScope(run.Status.Dataset); len(load) > 0 {
			msg += ": " + dataset.Summary(keep, load)
		}
		run.SetCondition(v1alpha1.ConditionDatasetLoaded, metav1.ConditionFalse, v1alpha1.ReasonLoading, msg, r.now())
	}
	return statuswrite.RequeueSoon, nil
}

// capacity renders an instance's size for messages.
func capacity(t *v1alpha1.TargetStatus) string {
	switch {
	case t.Nodes != nil:
		return fmt.Sprintf("%d nodes", *t.Nodes)
	case t.ProcessingUnits != nil:
		return fmt.Sprintf("%d processing units", *t.ProcessingUnits)
	}
	return "size unknown"
}

// recordDataset writes the plan into status.dataset.
func recordDataset(run *v1alpha1.BenchmarkRun, plan DatasetPlan) {
	ds := &v1alpha1.DatasetStatus{Table: plan.Marker.Table, SchemaHash: plan.Marker.SchemaHash, DDL: plan.DDL, Rows: plan.Marker.Rows, Source: plan.Source,
		Tables: plan.Tables}
	if plan.Source == v1alpha1.DatasetExisting {
		ds.Loaded = plan.Marker.Rows
	}
	run.Status.Dataset = ds
}

// targetError records a target error: one that may pass is retried until
// the stage's deadline, any other fails the run with a reason a user can
// act on. A run that fails here with an Ephemeral instance has it deleted
// when it ends (wrapUp), so nothing paid for is left behind.
func (r *BenchmarkRunReconciler) targetError(run *v1alpha1.BenchmarkRun, outbox *statuswrite.Outbox, err error, deadline stageDeadline) ctrl.Result {
	reason, retry := classify(err)
	if retry && !deadline.late {
		run.SetCondition(v1alpha1.ConditionTargetReady, metav1.ConditionFalse, reason, err.Error(), r.now())
		return ctrl.Result{RequeueAfter: min(deadline.requeue, retryEvery)}
	}
	if retry {
		err = fmt.Errorf("%w (spec.deadlines.%s passed)", err, deadline.field)
	}
	r.fail(run, outbox, reason, err.Error())
	return ctrl.Result{}
}

// classify turns a target error into a condition reason, and says whether
// trying again may help (until the stage's deadline).
func classify(err error) (reason string, retry bool) {
	switch {
	case errors.Is(err, endpoint.ErrNotAllowed):
		return v1alpha1.ReasonEndpointNotAllowed, false
	case errors.Is(err, dataset.ErrMismatch):
		return v1alpha1.ReasonDatasetMismatch, false
	case errors.Is(err, target.ErrNotOwned):
		return v1alpha1.ReasonInstanceNotOwned, false
	case errors.Is(err, target.ErrConfigNotFound):
		return v1alpha1.ReasonInstanceConfigNotFound, false
	case errors.Is(err, target.ErrInstanceNotFound):
		return v1alpha1.ReasonTargetUnreachable, false
	case errors.Is(err, target.ErrDialectMismatch):
		return v1alpha1.ReasonDialectMismatch, false
	case errors.Is(err, target.ErrDatabaseBusy):
		return v1alpha1.ReasonDatabaseBusy, true
	}
	code := status.Code(err)
	if code == codes.Unknown {
		code = spanner.ErrCode(err)
	}
	switch code {
	case codes.PermissionDenied, codes.Unauthenticated:
		return v1alpha1.ReasonPermissionDenied, false
	case codes.ResourceExhausted:
		return v1alpha1.ReasonQuotaExceeded, false
	case codes.NotFound, codes.InvalidArgument, codes.FailedPrecondition:
		return v1alpha1.ReasonTargetUnreachable, false
	}
	return v1alpha1.ReasonTargetUnreachable, true
}
