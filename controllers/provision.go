package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/spanner"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/runner/dataset"
	"github.com/spanbench/spanbench/runner/session"
	"github.com/spanbench/spanbench/runner/workload"
)

// TargetPreparer performs the Spanner admin and dataset-marker calls of a
// run. They run in the manager; the data calls of the load run in the
// runner pods. The real implementation talks to Spanner or the emulator;
// tests of error paths the emulator cannot produce inject a fake.
type TargetPreparer interface {
	// Prepare makes the database and the workload's schema exist, and says
	// whether the database already holds the dataset the spec asks for. A
	// different dataset is ErrMismatch unless the spec allows a reload, in
	// which case it is cleared.
	Prepare(ctx context.Context, run *v1alpha1.BenchmarkRun) (datasetReady bool, err error)
	// CompleteDataset records that the runners loaded the dataset.
	CompleteDataset(ctx context.Context, run *v1alpha1.BenchmarkRun) error
}

// SpannerPreparer is the TargetPreparer that talks to Spanner.
type SpannerPreparer struct{}

// Prepare implements TargetPreparer.
func (SpannerPreparer) Prepare(ctx context.Context, run *v1alpha1.BenchmarkRun) (bool, error) {
	t, spec := run.Spec.Target, run.Spec.Workload
	spec.Default()
	schema, err := workload.SchemaFor(&spec)
	if err != nil {
		return false, err
	}
	if err := session.Probe(ctx, t); err != nil {
		return false, err
	}
	// Only the emulator's instance is created here; creating paid
	// instances is the Ephemeral lifecycle's job, with its guardrails.
	if err := session.EnsureDatabase(ctx, t, schema, t.EmulatorHost != ""); err != nil {
		return false, err
	}
	s, err := session.Open(ctx, t)
	if err != nil {
		return false, err
	}
	defer s.Close()
	want := dataset.Want(schema, *spec.Dataset.Rows)
	have, ok, err := dataset.ReadMarker(ctx, s.Client, schema.Table())
	switch {
	case err != nil:
		return false, err
	case ok && have == want:
		return true, nil
	case ok && !spec.Dataset.Reload:
		return false, fmt.Errorf("%w: table %s holds %d rows of schema %s, the spec asks for %d rows of schema %s; "+
			"set spec.workload.dataset.reload: true to replace it, or use another database",
			dataset.ErrMismatch, schema.Table(), have.Rows, have.SchemaHash, want.Rows, want.SchemaHash)
	case ok:
		return false, dataset.Clear(ctx, s.Client, schema.Table())
	}
	return false, nil
}

// CompleteDataset implements TargetPreparer.
func (SpannerPreparer) CompleteDataset(ctx context.Context, run *v1alpha1.BenchmarkRun) error {
	spec := run.Spec.Workload
	spec.Default()
	schema, err := workload.SchemaFor(&spec)
	if err != nil {
		return err
	}
	s, err := session.Open(ctx, run.Spec.Target)
	if err != nil {
		return err
	}
	defer s.Close()
	return dataset.WriteMarker(ctx, s.Client, dataset.Want(schema, *spec.Dataset.Rows))
}

// classify turns a target error into a condition reason, and says whether
// trying again may help (until the stage's deadline).
func classify(err error) (reason string, retry bool) {
	if errors.Is(err, dataset.ErrMismatch) {
		return v1alpha1.ReasonDatasetMismatch, false
	}
	code := status.Code(err)
	if code == codes.Unknown {
		code = spanner.ErrCode(err)
	}
	switch code {
	case codes.PermissionDenied, codes.Unauthenticated:
		return v1alpha1.ReasonPermissionDenied, false
	case codes.ResourceExhausted:
		return v1alpha1.ReasonLimitExceeded, false
	case codes.NotFound, codes.InvalidArgument, codes.FailedPrecondition:
		return v1alpha1.ReasonTargetUnreachable, false
	}
	return v1alpha1.ReasonTargetUnreachable, true
}

// prepareTarget checks the guardrails, prepares the database, and decides
// whether the runners must load the dataset.
func (r *BenchmarkRunReconciler) prepareTarget(ctx context.Context, run *v1alpha1.BenchmarkRun, st *step) (ctrl.Result, error) {
	if msg := r.Limits.check(run); msg != "" {
		r.fail(run, st, v1alpha1.ReasonLimitExceeded, msg)
		return ctrl.Result{}, nil
	}
	if run.Spec.Target.Instance.Mode == v1alpha1.InstanceEphemeral {
		r.fail(run, st, v1alpha1.ReasonTargetUnreachable, "Ephemeral instances are not supported by this version of spanbench; create the instance and use mode Existing")
		return ctrl.Result{}, nil
	}
	if run.SetCondition(v1alpha1.ConditionTargetReady, metav1.ConditionFalse, v1alpha1.ReasonProvisioning, "preparing the database and schema", r.now()) {
		st.normal(v1alpha1.ReasonProvisioning, "preparing the database and schema")
	}
	requeue, field, late := r.untilDeadline(run)
	pctx, cancel := context.WithTimeout(ctx, min(requeue, 2*time.Minute))
	defer cancel()
	ready, err := r.Preparer.Prepare(pctx, run)
	if err != nil {
		reason, retry := classify(err)
		if retry && !late {
			run.SetCondition(v1alpha1.ConditionTargetReady, metav1.ConditionFalse, reason, err.Error(), r.now())
			return ctrl.Result{RequeueAfter: min(requeue, 10*time.Second)}, nil
		}
		if retry {
			err = fmt.Errorf("%w (spec.deadlines.%s passed)", err, field)
		}
		r.fail(run, st, reason, err.Error())
		return ctrl.Result{}, nil
	}
	run.SetCondition(v1alpha1.ConditionTargetReady, metav1.ConditionTrue, v1alpha1.ReasonTargetAvailable, "database and schema are ready", r.now())
	st.normal(v1alpha1.ReasonTargetAvailable, "database and schema are ready")
	if ready {
		run.SetCondition(v1alpha1.ConditionDatasetLoaded, metav1.ConditionTrue, v1alpha1.ReasonDatasetReady, "the database already holds the dataset; not loading", r.now())
	} else {
		run.SetCondition(v1alpha1.ConditionDatasetLoaded, metav1.ConditionFalse, v1alpha1.ReasonLoading, "the runners load the dataset before they report ready", r.now())
	}
	return ctrl.Result{Requeue: true}, nil
}

// check returns why a run exceeds the guardrails, or "".
func (l Limits) check(run *v1alpha1.BenchmarkRun) string {
	in := run.Spec.Target.Instance
	switch {
	case l.MaxRunners > 0 && run.Replicas() > l.MaxRunners:
		return fmt.Sprintf("spec.runners.replicas %d exceeds the operator's limit of %d (--max-runners)", run.Replicas(), l.MaxRunners)
	case l.MaxDuration > 0 && run.Spec.Workload.TotalDuration() > l.MaxDuration:
		return fmt.Sprintf("the workload runs %s, more than the operator's limit of %s (--max-duration)", run.Spec.Workload.TotalDuration(), l.MaxDuration)
	case l.MaxProcessingUnits > 0 && in.Capacity() > l.MaxProcessingUnits:
		return fmt.Sprintf("the instance's %d processing units exceed the operator's limit of %d (--max-processing-units)", in.Capacity(), l.MaxProcessingUnits)
	}
	return ""
}
