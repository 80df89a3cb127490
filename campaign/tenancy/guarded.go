// Package tenancy is the rule that a campaign's matrix gives its writer no
// power their own RBAC does not (docs/security.md): the run fields that
// make the manager do something on the author's behalf — the runners'
// service account, image and node placement, and the target's credentials
// — are guarded, and a cell whose planned run sets one differently from
// the template needs a writer who holds the power it gives. The
// ValidatingAdmissionPolicy checks the template's fields; it cannot apply
// an axis value's patches, so the campaign webhook (controllers/webhook)
// and, before it creates each run, the campaign controller compute here
// what each cell changes and ask the API server, with SubjectAccessReviews,
// whether the writer may.
package tenancy

import (
	"encoding/json"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// Power is one permission in the run's namespace, as RBAC grants it.
type Power struct {
	// Verb and Resource (of the core group) are what is allowed; Name, when
	// set, narrows it to one object.
	Verb, Resource, Name string
}

// The powers the guarded fields need.
var (
	createPods = Power{Verb: "create", Resource: "pods"}
)

func impersonateServiceAccount(name string) Power {
	return Power{Verb: "impersonate", Resource: "serviceaccounts", Name: name}
}

func getSecret(name string) Power { return Power{Verb: "get", Resource: "secrets", Name: name} }

// Describe says the power in ns as a refusal names it: "create pods in
// namespace team", "get secret team/key".
func (p Power) Describe(ns string) string {
	if p.Name == "" {
		return fmt.Sprintf("%s %s in namespace %s", p.Verb, p.Resource, ns)
	}
	return fmt.Sprintf("%s %s %s/%s", p.Verb, singular(p.Resource), ns, p.Name)
}

func singular(resource string) string {
	if n := len(resource); n > 0 && resource[n-1] == 's' {
		return resource[:n-1]
	}
	return resource
}

// Change is a guarded field a planned run sets differently from the
// template, and the powers that allow it: any one of them suffices.
type Change struct {
	// Field is the run spec's field, such as runners.serviceAccountName.
	Field string
	// Value is the run's value, as a refusal quotes it.
	Value string
	// AnyOf are the powers of which the writer needs one.
	AnyOf []Power
}

// Changes are the guarded fields run sets differently from template (set,
// changed or removed) that give a power, in a fixed order:
//
//   - runners.serviceAccountName: pods run as that account; needs create
//     pods (which already lets one run a pod as any account of the
//     namespace) or impersonate of that account. Cleared, the run gets an
//     account of its own: no power.
//   - target.credentials: the Secret is mounted into pods running code the
//     author influences; needs get of that Secret. Cleared, no Secret is
//     mounted: no power.
//   - runners.image: arbitrary code under the run's account and with its
//     Secret; needs create pods. (The policy also admits an image under the
//     admin's prefixes; this rule does not read them, so it is stricter.)
//     Cleared, the manager's own image: no power.
//   - runners.nodeSelector, runners.tolerations: where the pods land;
//     needs create pods for any difference, a removal included (a removed
//     selector widens where they may land).
//
// Any object holding these (runners, target, target.credentials) is
// covered: the comparison is of the planned run, whatever path, patch or
// directive made it.
func Changes(template, run *v1alpha1.BenchmarkRunSpec) []Change {
	var out []Change
	tr, rr := &template.Runners, &run.Runners
	if sa := rr.ServiceAccountName; sa != tr.ServiceAccountName && sa != "" {
		out = append(out, Change{Field: "runners.serviceAccountName", Value: sa,
			AnyOf: []Power{createPods, impersonateServiceAccount(sa)}})
	}
	if c := run.Target.Credentials; c != nil && c.SecretName != "" && !apiequality.Semantic.DeepEqual(c, template.Target.Credentials) {
		out = append(out, Change{Field: "target.credentials.secretName", Value: c.SecretName, AnyOf: []Power{getSecret(c.SecretName)}})
	}
	if img := rr.Image; img != tr.Image && img != "" {
		out = append(out, Change{Field: "runners.image", Value: img, AnyOf: []Power{createPods}})
	}
	if !apiequality.Semantic.DeepEqual(rr.NodeSelector, tr.NodeSelector) {
		out = append(out, Change{Field: "runners.nodeSelector", Value: asJSON(rr.NodeSelector), AnyOf: []Power{createPods}})
	}
	if !apiequality.Semantic.DeepEqual(rr.Tolerations, tr.Tolerations) {
		out = append(out, Change{Field: "runners.tolerations", Value: asJSON(rr.Tolerations), AnyOf: []Power{createPods}})
	}
	return out
}

// asJSON is v as a refusal quotes it ("null" when removed).
func asJSON(v any) string {
	b, _ := json.Marshal(v) // label maps and tolerations always marshal
	return string(b)
}
