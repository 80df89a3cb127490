package webhook

import (
	"context"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/customcheck"
)

// RunPath is where the webhook server serves the BenchmarkRun check; the
// ValidatingWebhookConfiguration names it, for Custom workloads only (a
// matchCondition): the API server's schema and CEL rules cannot parse a
// Custom workload's DDL and SQL, so this check runs the CLI's
// check (spanner/customcheck.Run: BenchmarkRun.Validate and the SQL checks),
// which does.
const RunPath = "/validate-bench-spanbench-io-v1alpha1-benchmarkrun"

// RunValidator denies a BenchmarkRun that `spanbench run` would refuse.
type RunValidator struct{}

var _ admission.CustomValidator = RunValidator{}

// ValidateCreate validates the new run.
func (RunValidator) ValidateCreate(_ context.Context, obj runtime.Object) (admission.Warnings, error) {
	r, err := runOf(obj)
	if err != nil {
		return nil, err
	}
	return nil, CheckRun(r)
}

// ValidateUpdate validates the run when its spec changed, so that status,
// label and finalizer writes never depend on it.
func (RunValidator) ValidateUpdate(_ context.Context, oldObj, newObj runtime.Object) (admission.Warnings, error) {
	r, err := runOf(newObj)
	if err != nil {
		return nil, err
	}
	if old, err := runOf(oldObj); err == nil && apiequality.Semantic.DeepEqual(old.Spec, r.Spec) {
		return nil, nil
	}
	return nil, CheckRun(r)
}

// ValidateDelete admits every deletion.
func (RunValidator) ValidateDelete(context.Context, runtime.Object) (admission.Warnings, error) {
	return nil, nil
}

// CheckRun returns the refusal the API server reports for a run
// customcheck.Run refuses, naming the fields at fault; or nil. A valid
// capacity search is admitted: the manager runs it (docs/capacity.md).
func CheckRun(r *v1alpha1.BenchmarkRun) error {
	errs := customcheck.Run(r)
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(v1alpha1.GroupVersion.WithKind("BenchmarkRun").GroupKind(), r.Name, errs)
}

func runOf(obj runtime.Object) (*v1alpha1.BenchmarkRun, error) {
	r, ok := obj.(*v1alpha1.BenchmarkRun)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("expected a BenchmarkRun, got %T", obj))
	}
	return r, nil
}
