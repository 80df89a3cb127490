// Package webhook is the manager's validating admission webhook, for
// BenchmarkCampaigns (its certificate in cert/):
// the API server's schema and CEL rules check a campaign's fields, but
// cannot apply the matrix's kustomize paths and patches (nor see fields of
// any JSON type), so this webhook runs the CLI's own checks —
// BenchmarkCampaign.Validate, then plan.Expand, which the controller plans
// with too — and denies a campaign with a cell that would be an invalid
// run, naming the axis, the value and the run field. It also serves the
// BenchmarkRun check of Custom workloads (run.go), whose DDL and SQL the
// schema cannot parse either.
package webhook

import (
	"context"
	"errors"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/plan"
)

// Path is where the webhook server serves the check; the
// ValidatingWebhookConfiguration (config/webhook, the Helm chart) names it.
const Path = "/validate-bench-spanbench-io-v1alpha1-benchmarkcampaign"

// Register serves the campaign check at Path and the run check at
// RunPath on srv.
func Register(srv webhook.Server, scheme *runtime.Scheme) {
	srv.Register(Path, admission.WithCustomValidator(scheme, &v1alpha1.BenchmarkCampaign{}, CampaignValidator{}))
	srv.Register(RunPath, admission.WithCustomValidator(scheme, &v1alpha1.BenchmarkRun{}, RunValidator{}))
}

// CampaignValidator denies a BenchmarkCampaign whose cells cannot be
// planned.
type CampaignValidator struct{}

var _ admission.CustomValidator = CampaignValidator{}

// ValidateCreate plans the new campaign.
func (CampaignValidator) ValidateCreate(_ context.Context, obj runtime.Object) (admission.Warnings, error) {
	c, err := campaignOf(obj)
	if err != nil {
		return nil, err
	}
	return nil, Check(c)
}

// ValidateUpdate plans the campaign when its spec changed. An update that
// leaves the spec alone (labels, finalizers) is admitted even if the spec
// could not be planned, so that a campaign stored before the webhook
// existed can still be relabelled and deleted; the controller holds such
// a campaign Stalled.
func (CampaignValidator) ValidateUpdate(_ context.Context, oldObj, newObj runtime.Object) (admission.Warnings, error) {
	c, err := campaignOf(newObj)
	if err != nil {
		return nil, err
	}
	if old, err := campaignOf(oldObj); err == nil && apiequality.Semantic.DeepEqual(old.Spec, c.Spec) {
		return nil, nil
	}
	return nil, Check(c)
}

// ValidateDelete admits every deletion.
func (CampaignValidator) ValidateDelete(context.Context, runtime.Object) (admission.Warnings, error) {
	return nil, nil
}

// Check validates c as the CLI does — BenchmarkCampaign.Validate (which
// the schema and CEL already enforced, except the rules CEL cannot see),
// then plan.Expand — and returns the refusal the API server reports, an
// Invalid status naming the campaign fields at fault, or nil.
func Check(c *v1alpha1.BenchmarkCampaign) error {
	errs := c.Validate()
	if len(errs) == 0 {
		if _, _, err := plan.Expand(&c.Spec); err != nil {
			fe := field.Invalid(field.NewPath("spec"), nil, err.Error())
			if pe := (*plan.Error)(nil); errors.As(err, &pe) {
				fe = pe.FieldError()
			}
			errs = field.ErrorList{fe}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(v1alpha1.GroupVersion.WithKind("BenchmarkCampaign").GroupKind(), c.Name, errs)
}

func campaignOf(obj runtime.Object) (*v1alpha1.BenchmarkCampaign, error) {
	c, ok := obj.(*v1alpha1.BenchmarkCampaign)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("expected a BenchmarkCampaign, got %T", obj))
	}
	return c, nil
}
