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
)

// The chart installs the tenancy policy as config/admission-policy does:
// the same rules (with the default values, the same opt-ins) and binding
// (docs/security.md). Neither has a params ConfigMap any more.
func TestAdmissionPolicyMatchesKustomize(t *testing.T) {
	t.Parallel()
	chart, kust := template(t, "--namespace", "spanbench-system"), kustomize(t)
	for _, key := range []string{policyKey, bindingKey} {
		k, c := kust[key], chart[key]
		if k == nil || c == nil {
			t.Fatalf("%s: in kustomize %t, in the chart %t; want both", key, k != nil, c != nil)
		}
		kv, _, _ := unstructured.NestedFieldNoCopy(k.Object, "spec")
		cv, _, _ := unstructured.NestedFieldNoCopy(c.Object, "spec")
		if diff := cmp.Diff(kv, cv); diff != "" {
			t.Errorf("%s spec differs (-kustomize +chart); run `make manifests`:\n%s", key, diff)
		}
		if _, has, _ := unstructured.NestedFieldNoCopy(c.Object, "spec", "paramRef"); has {
			t.Errorf("%s has a paramRef: a built-in paramKind stops working after a reinstall (docs/security.md)", key)
		}
	}
	if kust["ConfigMap/spanbench-tenancy"] != nil || chart["ConfigMap/spanbench-tenancy"] != nil {
		t.Error("an install still ships the tenancy params ConfigMap")
	}
}

// The values' opt-ins reach the policy's data variable, one a line, as CEL
// string literals; the manager's account follows the release; the toggle
// removes the whole policy.
func TestTemplateAdmissionPolicyValues(t *testing.T) {
	t.Parallel()
	m := template(t, "--namespace", "perf-system",
		"--set", "serviceAccount.name=mine",
		"--set", "admissionPolicy.serviceAccounts={team/wi-runner,perf/runner}",
		"--set", "admissionPolicy.secrets={team/key}",
		"--set", "admissionPolicy.runnerImagePrefixes={us-docker.pkg.dev/p/spanbench/}")
	if m[policyKey] == nil {
		t.Fatalf("no %s rendered", policyKey)
	}
	vars, _, _ := unstructured.NestedSlice(m[policyKey].Object, "spec", "variables")
	var data string
	for _, v := range vars {
		if v := v.(map[string]any); v["name"] == "data" {
			data, _ = v["expression"].(string)
		}
	}
	want := `{'managerServiceAccount': 'perf-system/mine', 'serviceAccounts': 'team/wi-runner\nperf/runner', ` +
		`'secrets': 'team/key', 'runnerImagePrefixes': 'us-docker.pkg.dev/p/spanbench/'}`
	if data != want {
		t.Errorf("the policy's data variable:\n got %s\nwant %s", data, want)
	}
	off := template(t, "--set", "admissionPolicy.enabled=false")
	for _, key := range []string{policyKey, bindingKey} {
		if off[key] != nil {
			t.Errorf("admissionPolicy.enabled=false still renders %s", key)
		}
	}
}
