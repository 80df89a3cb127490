package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/plan"
	"github.com/spanbench/spanbench/campaign/tenancy"
)

// MutatePath is where the webhook server stamps a campaign's writer
// (WriterStamp); the MutatingWebhookConfiguration names it.
const MutatePath = "/mutate-bench-spanbench-io-v1alpha1-benchmarkcampaign"

// specChanged says whether an update changes the campaign's spec: what
// makes its writer the request's user. The webhooks' matchConditions say
// the same in CEL (oldObject.spec != object.spec).
func specChanged(old, c *v1alpha1.BenchmarkCampaign) bool {
	return !apiequality.Semantic.DeepEqual(old.Spec, c.Spec)
}

// checkWriter refuses a tenancy.WriterAnnotation that is not the one the
// request should carry: on a create or a change of spec, the request's
// user's stamp; otherwise the stored one. (WriterStamp sets exactly that
// before validation; only a request that forges it, or an install without
// the mutating webhook, meets this refusal.) A campaign without the
// annotation is admitted: a missing writer gives no power, since the
// controller then creates no run that changes a guarded field.
func checkWriter(ctx context.Context, old, c *v1alpha1.BenchmarkCampaign) error {
	got, present := c.Annotations[tenancy.WriterAnnotation]
	if !present {
		return nil
	}
	var want string
	var ok bool
	if old == nil || specChanged(old, c) {
		req, err := admission.RequestFromContext(ctx)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		want, ok = tenancy.Stamp(req.UserInfo), true
	} else {
		want, ok = old.Annotations[tenancy.WriterAnnotation]
	}
	if ok && got == want {
		return nil
	}
	return apierrors.NewForbidden(v1alpha1.GroupVersion.WithResource("benchmarkcampaigns").GroupResource(), c.Name,
		field.Forbidden(field.NewPath("metadata", "annotations").Key(tenancy.WriterAnnotation),
			"spanbench's admission webhook sets it to the user who last wrote the spec; it may not be set or changed otherwise"))
}

// checkPowers refuses a campaign one of whose cells would run with a
// guarded field (tenancy.Changes) that differs from the template and
// whose power the request's user lacks, naming the axis value, the field
// and the permissions. The template's own fields are the tenancy policy's
// (config/admission-policy).
func (v CampaignValidator) checkPowers(ctx context.Context, c *v1alpha1.BenchmarkCampaign) error {
	if c.Spec.Matrix == nil {
		return nil
	}
	cells, _, err := plan.Expand(&c.Spec)
	if err != nil {
		// Check plans first and refuses such a campaign; should that ever
		// change, a campaign whose cells cannot be planned is refused here
		// rather than admitted unchecked.
		return apierrors.NewInvalid(v1alpha1.GroupVersion.WithKind("BenchmarkCampaign").GroupKind(), c.Name,
			field.ErrorList{field.Invalid(field.NewPath("spec", "matrix"), "", err.Error())})
	}
	tmpl := &c.Spec.Template.Spec
	answers := map[tenancy.Power]bool{}
	var user *tenancy.User
	for i := range cells {
		changes := tenancy.Changes(tmpl, &cells[i].Spec)
		if len(changes) == 0 {
			continue
		}
		if user == nil {
			req, err := admission.RequestFromContext(ctx)
			if err != nil {
				return apierrors.NewInternalError(err)
			}
			u := req.UserInfo
			user = &tenancy.User{Username: u.Username, UID: u.UID, Groups: u.Groups, Extra: extraOf(u.Extra)}
		}
		if v.Reviewer.Client == nil {
			return apierrors.NewInternalError(fmt.Errorf("the campaign webhook has no client to review %s's permissions", user.Username))
		}
		refusal, err := v.Reviewer.Check(ctx, *user, c.Namespace, changes, answers)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		if refusal != nil {
			path, what := blamePower(tmpl, c.Spec.Matrix, &cells[i], refusal.Change.Field)
			return apierrors.NewForbidden(v1alpha1.GroupVersion.WithResource("benchmarkcampaigns").GroupResource(), c.Name,
				field.Forbidden(path, what+" sets "+refusal.Error()))
		}
	}
	return nil
}

// blamePower names the axis value of cell that sets the guarded field:
// the first whose value alone does, or else the cell's combination.
func blamePower(tmpl *v1alpha1.BenchmarkRunSpec, m *v1alpha1.MatrixSpec, cell *plan.Cell, fieldName string) (*field.Path, string) {
	for _, ch := range cell.Choices {
		s, err := plan.ChoiceSpec(tmpl, m, ch)
		if err != nil {
			continue
		}
		for _, c := range tenancy.Changes(tmpl, &s) {
			if c.Field == fieldName {
				return plan.ChoiceField(m, ch), fmt.Sprintf("matrix axis %q value %q", ch.Axis, ch.Label)
			}
		}
	}
	parts := make([]string, len(cell.Choices))
	for i, ch := range cell.Choices {
		parts[i] = ch.Axis + "=" + ch.Label
	}
	return field.NewPath("spec", "matrix"), "matrix cell " + strings.Join(parts, ", ")
}

func extraOf(in map[string]authenticationv1.ExtraValue) map[string][]string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string][]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

// WriterStamp is the mutating webhook that records who wrote a campaign's
// spec (tenancy.WriterAnnotation): on a create or a change of spec, the
// request's user; on any other update, the stored record, put back if the
// request changed or dropped it (a server-side apply by a manager that
// owned the annotation would drop it).
type WriterStamp struct{}

// Handle stamps the writer.
func (WriterStamp) Handle(_ context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	var c v1alpha1.BenchmarkCampaign
	if err := json.Unmarshal(req.Object.Raw, &c); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	want, set := tenancy.Stamp(req.UserInfo), true
	if req.Operation == admissionv1.Update {
		var old v1alpha1.BenchmarkCampaign
		if err := json.Unmarshal(req.OldObject.Raw, &old); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		if !specChanged(&old, &c) {
			want, set = old.Annotations[tenancy.WriterAnnotation]
		}
	}
	if got, present := c.Annotations[tenancy.WriterAnnotation]; present == set && got == want {
		return admission.Allowed("")
	}
	// Patch the request's own JSON, not a typed copy, so that nothing but
	// the annotation changes.
	var obj map[string]any
	if err := json.Unmarshal(req.Object.Raw, &obj); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	ann, _ := meta["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
	}
	if set {
		ann[tenancy.WriterAnnotation] = want
	} else {
		delete(ann, tenancy.WriterAnnotation)
	}
	meta["annotations"] = ann
	out, err := json.Marshal(obj)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, out)
}
