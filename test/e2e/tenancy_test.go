//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/await"
)

// runAuthor is the impersonated user of the tenancy test: rights on
// BenchmarkRuns and BenchmarkCampaigns of its namespace only.
const runAuthor = "run-author"

// TestRunAuthorCannotBorrowAnAccountOrSecret: on the installed operator,
// a user whose only rights in a namespace are BenchmarkRuns and
// BenchmarkCampaigns (kubectl --as) cannot get a pod to run under another
// service account of the namespace, nor mount one of its Secrets, through
// a campaign's template, an axis path, or any patch form of an axis value
// (strategic merge, JSON patch, whole objects, $patch directives): every
// such campaign is refused at `kubectl create`, and no pod of the
// namespace ever runs as that account or mounts that Secret. Every
// campaign sample is admitted for the same user.
func TestRunAuthorCannotBorrowAnAccountOrSecret(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "e2e-tenancy")
	for _, obj := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "wi-runner", Namespace: ns}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "payments-db-password", Namespace: ns}, StringData: map[string]string{"key.json": "{}"}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "run-author", Namespace: ns}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"benchmarkruns", "benchmarkcampaigns"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "run-author", Namespace: ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "run-author"},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: runAuthor}}},
	} {
		create(t, obj)
	}

	raw, err := os.ReadFile(filepath.Join(suite.root, samplesDir, "campaign-read-vs-sql.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// base is the sample with a plain second axis value to patch.
	base := func(t *testing.T, name string) *v1alpha1.BenchmarkCampaign {
		c := &v1alpha1.BenchmarkCampaign{}
		if err := yaml.UnmarshalStrict(raw, c); err != nil {
			t.Fatal(err)
		}
		c.Name, c.Namespace = name, ns
		c.Spec.Repetitions = nil
		return c
	}
	smp := func(patch string) func(*v1alpha1.BenchmarkCampaign) {
		return func(c *v1alpha1.BenchmarkCampaign) {
			js, err := yaml.YAMLToJSON([]byte(patch))
			if err != nil {
				t.Fatal(err)
			}
			c.Spec.Matrix.Axes[0].Values[1].StrategicMergePatch = &apiextensionsv1.JSON{Raw: js}
		}
	}
	jsonPatch := func(ops string) func(*v1alpha1.BenchmarkCampaign) {
		return func(c *v1alpha1.BenchmarkCampaign) {
			if err := json.Unmarshal([]byte(ops), &c.Spec.Matrix.Axes[0].Values[1].JSONPatch); err != nil {
				t.Fatal(err)
			}
		}
	}
	pathAxis := func(path, value string) func(*v1alpha1.BenchmarkCampaign) {
		return func(c *v1alpha1.BenchmarkCampaign) {
			c.Spec.Matrix.Axes = append(c.Spec.Matrix.Axes, v1alpha1.MatrixAxis{Name: "evil", Path: path, Values: []v1alpha1.AxisValue{
				{Label: "a", Value: apiextensionsv1.JSON{Raw: []byte(value)}}}})
		}
	}
	for _, tc := range []struct {
		name string
		edit func(*v1alpha1.BenchmarkCampaign)
	}{
		{"template-sa", func(c *v1alpha1.BenchmarkCampaign) { c.Spec.Template.Spec.Runners.ServiceAccountName = "wi-runner" }},
		{"template-secret", func(c *v1alpha1.BenchmarkCampaign) {
			c.Spec.Template.Spec.Target.Credentials = &v1alpha1.CredentialsSpec{SecretName: "payments-db-password"}
		}},
		{"path-sa", pathAxis("runners.serviceAccountName", `"wi-runner"`)},
		{"path-secret", pathAxis("target.credentials", `{"secretName":"payments-db-password"}`)},
		{"smp-sa-secret", smp(`{runners: {serviceAccountName: wi-runner}, target: {credentials: {secretName: payments-db-password}}}`)},
		{"smp-secret", smp(`target: {credentials: {secretName: payments-db-password}}`)},
		{"smp-replace-runners", smp(`runners: {$patch: replace, replicas: 1, serviceAccountName: wi-runner}`)},
		{"smp-replace-credentials", smp(`target: {credentials: {$patch: replace, secretName: payments-db-password}}`)},
		{"json-add-sa", jsonPatch(`[{"op":"add","path":"/runners/serviceAccountName","value":"wi-runner"}]`)},
		{"json-add-credentials", jsonPatch(`[{"op":"add","path":"/target/credentials","value":{"secretName":"payments-db-password"}}]`)},
		{"json-replace-runners", jsonPatch(`[{"op":"replace","path":"/runners","value":{"replicas":1,"serviceAccountName":"wi-runner"}}]`)},
	} {
		c := base(t, "bypass-"+tc.name)
		tc.edit(c)
		manifest, err := yaml.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		out, err := kubectlStdin(t, manifest, "--as", runAuthor, "create", "-n", ns, "-f", "-")
		if err == nil {
			t.Errorf("%s: user %s created a campaign that runs pods as wi-runner or with Secret payments-db-password: %s", tc.name, runAuthor, out)
			continue
		}
		if !strings.Contains(out, "forbidden") && !strings.Contains(out, "Forbidden") {
			t.Errorf("%s: refused, but not as Forbidden: %s", tc.name, out)
		}
	}

	// Nothing that was (wrongly) admitted may have made such a pod; the
	// campaigns are not suspended, so one would appear within seconds.
	await.Consistently(t, await.Poll{Within: 20 * time.Second, Every: time.Second}, "no pod of "+ns+" as wi-runner or with payments-db-password",
		func() (bool, string) {
			pods := &corev1.PodList{}
			if err := suite.c.List(t.Context(), pods, client.InNamespace(ns)); err != nil {
				return false, err.Error()
			}
			for _, p := range pods.Items {
				if p.Spec.ServiceAccountName == "wi-runner" {
					return false, fmt.Sprintf("pod %s runs as wi-runner", p.Name)
				}
				for _, v := range p.Spec.Volumes {
					if v.Secret != nil && v.Secret.SecretName == "payments-db-password" {
						return false, fmt.Sprintf("pod %s mounts Secret payments-db-password", p.Name)
					}
				}
			}
			return true, fmt.Sprintf("%d pods, none borrowing", len(pods.Items))
		})

	files, err := filepath.Glob(filepath.Join(suite.root, samplesDir, "campaign-*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no campaign samples in %s (%v)", samplesDir, err)
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := kubectlStdin(t, raw, "--as", runAuthor, "create", "--dry-run=server", "-n", ns, "-f", "-"); err != nil {
			t.Errorf("%s: refused for user %s: %v\n%s", filepath.Base(file), runAuthor, err, out)
		}
	}
}
