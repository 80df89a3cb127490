package benchmarkcampaign

import (
	"context"
	"fmt"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/tenancy"
)

// The manager creates a campaign's runs as itself, and the tenancy policy
// skips its permission checks (docs/security.md): what a run sets was
// checked when the campaign's writer wrote it. Defence in depth for the
// fields a matrix changes, which only the campaign webhook can check at
// admission: before creating a run whose guarded fields differ from the
// campaign's template (tenancy.Changes), the controller asks the API
// server, with SubjectAccessReviews, whether the writer recorded at
// admission (tenancy.WriterAnnotation) holds the power each gives, and
// creates nothing otherwise: the campaign is Stalled with reason
// RunForbidden, naming the run, the field and the permission. The
// template's own fields are compared with the campaign's current template,
// which the policy checked against that same writer, so an iteration
// snapshot (a ConfigMap) that differs from it is checked too.

// reasonRunForbidden stalls a campaign whose next run sets a guarded
// field its writer may not set.
const reasonRunForbidden = "RunForbidden"

// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// mayCreate says whether run may be created for the campaign's recorded
// writer; when it may not, p.stall says why.
func (r *BenchmarkCampaignReconciler) mayCreate(ctx context.Context, p *pass, run *v1alpha1.BenchmarkRun) (bool, error) {
	changes := tenancy.Changes(&p.c.Spec.Template.Spec, &run.Spec)
	if len(changes) == 0 {
		return true, nil
	}
	writer, err := tenancy.Writer(p.c.Annotations)
	if err != nil {
		p.stall = stalledBy(reasonRunForbidden, fmt.Sprintf("spanbench will not create run %s: it sets %s %q, different from the template, and only a recorded writer's permissions may allow that: %v",
			run.Name, changes[0].Field, changes[0].Value, err))
		return false, nil
	}
	refusal, err := tenancy.Reviewer{Client: r.Client}.Check(ctx, writer, p.c.Namespace, changes, nil)
	if err != nil || refusal == nil {
		return err == nil, err
	}
	p.stall = stalledBy(reasonRunForbidden, fmt.Sprintf("spanbench will not create run %s: it sets %s (the campaign's spec was last written by that user); "+
		"write the spec as a user with the permission, or take the value out of the matrix", run.Name, refusal.Error()))
	return false, nil
}
