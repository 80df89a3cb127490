// Package webhook is the manager's validating admission webhook, for
// BenchmarkCampaigns (its certificate in cert/):
// the API server's schema and CEL rules check a campaign's fields, but
// cannot apply the matrix's kustomize paths and patches (nor see fields of
// any JSON type), so this webhook runs the CLI's own checks —
// customcheck.Campaign (BenchmarkCampaign.Validate and the SQL checks),
// then plan.Admit (plan.Expand, which the controller plans with too, and
// the statistics a search campaign may compare) — and denies a campaign with a cell that would be an invalid
// run, naming the axis, the value and the run field. It also serves the
// BenchmarkRun check of Custom workloads (run.go), whose DDL and SQL the
// schema cannot parse either.
package webhook

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/plan"
	"github.com/spanbench/spanbench/campaign/tenancy"
	"github.com/spanbench/spanbench/spanner/customcheck"
)

// Path is where the webhook server serves the check; the
// ValidatingWebhookConfiguration (config/webhook, the Helm chart) names it.
const Path = "/validate-bench-spanbench-io-v1alpha1-benchmarkcampaign"

// Register serves the campaign check at Path, the writer's stamp at
// MutatePath and the run check at RunPath on srv. c asks the API server
// what a campaign's writer may do (SubjectAccessReviews); costs bounds a
// campaign's projected month.
func Register(srv webhook.Server, scheme *runtime.Scheme, c client.Client, costs Costs) {
	srv.Register(Path, admission.WithCustomValidator(scheme, &v1alpha1.BenchmarkCampaign{}, CampaignValidator{Reviewer: tenancy.Reviewer{Client: c}, Costs: costs}))
	srv.Register(MutatePath, &webhook.Admission{Handler: WriterStamp{}})
	srv.Register(RunPath, admission.WithCustomValidator(scheme, &v1alpha1.BenchmarkRun{}, RunValidator{}))
}

// CampaignValidator denies a BenchmarkCampaign whose cells cannot be
// planned, one whose cells would set a guarded run field its writer may
// not set (tenancy.go), and a forged writer record.
type CampaignValidator struct {
	// Reviewer asks the API server what the request's user may do.
	Reviewer tenancy.Reviewer
	// Costs is the bound on a campaign's projected month (cost.go).
	Costs Costs
}

var _ admission.CustomValidator = CampaignValidator{}

// ValidateCreate plans the new campaign and checks its writer's powers.
func (v CampaignValidator) ValidateCreate(ctx context.Context, obj runtime.Object) (admission.Warnings, error) {
	c, err := campaignOf(obj)
	if err != nil {
		return nil, err
	}
	return nil, v.check(ctx, nil, c)
}

// check is the whole check of a campaign written by the request; old is
// nil on a create.
func (v CampaignValidator) check(ctx context.Context, old, c *v1alpha1.BenchmarkCampaign) error {
	if err := checkWriter(ctx, old, c); err != nil {
		return err
	}
	if old != nil && !specChanged(old, c) {
		return nil
	}
	if err := Check(c); err != nil {
		return err
	}
	if err := v.Costs.check(ctx, c); err != nil {
		return err
	}
	return v.checkPowers(ctx, c)
}

// ValidateUpdate plans the campaign when its spec changed. An update that
// leaves the spec alone (labels, finalizers) is admitted even if the spec
// could not be planned, so that a campaign stored before the webhook
// existed can still be relabelled and deleted; the controller holds such
// a campaign Stalled. The writer record is checked on every update
// (checkWriter).
func (v CampaignValidator) ValidateUpdate(ctx context.Context, oldObj, newObj runtime.Object) (admission.Warnings, error) {
	c, err := campaignOf(newObj)
	if err != nil {
		return nil, err
	}
	old, err := campaignOf(oldObj)
	if err != nil {
		return nil, err
	}
	return nil, v.check(ctx, old, c)
}

// ValidateDelete admits every deletion.
func (CampaignValidator) ValidateDelete(context.Context, runtime.Object) (admission.Warnings, error) {
	return nil, nil
}

// Check validates c as the CLI does — customcheck.Campaign (which
// the schema and CEL already enforced, except the rules CEL cannot see),
// then plan.Admit — and returns the refusal the API server reports, an
// Invalid status naming the campaign fields at fault, or nil.
func Check(c *v1alpha1.BenchmarkCampaign) error {
	errs := customcheck.Campaign(c)
	if len(errs) == 0 {
		if _, _, err := plan.Admit(&c.Spec); err != nil {
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
