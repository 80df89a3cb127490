package spanbench_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The tenancy policy keys, as both installs name them.
const (
	policyKey  = "ValidatingAdmissionPolicy/spanbench-tenancy"
	bindingKey = "ValidatingAdmissionPolicyBinding/spanbench-tenancy"
	paramsKey  = "ConfigMap/spanbench-tenancy"
)

// The chart installs the tenancy policy as config/admission-policy does:
// the same rules, binding and params (docs/security.md).
func TestAdmissionPolicyMatchesKustomize(t *testing.T) {
	t.Parallel()
	chart, kust := template(t), kustomize(t)
	for _, f := range []struct {
		key  string
		path []string
	}{
		{policyKey, []string{"spec"}},
		{bindingKey, []string{"spec"}},
		{paramsKey, []string{"data"}},
	} {
		k, c := kust[f.key], chart[f.key]
		if k == nil || c == nil {
			t.Fatalf("%s: in kustomize %t, in the chart %t; want both", f.key, k != nil, c != nil)
		}
		kv, _, _ := unstructured.NestedFieldNoCopy(k.Object, f.path...)
		cv, _, _ := unstructured.NestedFieldNoCopy(c.Object, f.path...)
		if diff := cmp.Diff(kv, cv); diff != "" {
			t.Errorf("%s %v differs (-kustomize +chart); run `make manifests`:\n%s", f.key, f.path, diff)
		}
	}
}

// The values' opt-ins reach the params, one a line; the manager's account
// follows the release; the toggle removes the whole policy.
func TestTemplateAdmissionPolicyValues(t *testing.T) {
	t.Parallel()
	m := template(t, "--namespace", "perf-system",
		"--set", "serviceAccount.name=mine",
		"--set", "admissionPolicy.serviceAccounts={team/wi-runner,perf/runner}",
		"--set", "admissionPolicy.secrets={team/key}",
		"--set", "admissionPolicy.runnerImagePrefixes={us-docker.pkg.dev/p/spanbench/}")
	data, _, _ := unstructured.NestedStringMap(m[paramsKey].Object, "data")
	want := map[string]string{
		"managerServiceAccount": "perf-system/mine",
		"serviceAccounts":       "team/wi-runner\nperf/runner",
		"secrets":               "team/key",
		"runnerImagePrefixes":   "us-docker.pkg.dev/p/spanbench/",
	}
	if diff := cmp.Diff(want, data); diff != "" {
		t.Errorf("params data (-want +got):\n%s", diff)
	}
	ns, _, _ := unstructured.NestedString(m[bindingKey].Object, "spec", "paramRef", "namespace")
	if ns != "perf-system" {
		t.Errorf("binding's paramRef.namespace %q, want the release namespace perf-system", ns)
	}
	action, _, _ := unstructured.NestedString(m[bindingKey].Object, "spec", "paramRef", "parameterNotFoundAction")
	if action != "Deny" {
		t.Errorf("binding's parameterNotFoundAction %q, want Deny: without its params the policy must fail closed", action)
	}

	off := template(t, "--set", "admissionPolicy.enabled=false")
	for _, key := range []string{policyKey, bindingKey, paramsKey} {
		if off[key] != nil {
			t.Errorf("admissionPolicy.enabled=false still renders %s", key)
		}
	}
}
