package tenancy

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/await"
	"github.com/spanbench/spanbench/internal/runtest"
)

// runWith is a normal run in teamNS, changed by edit.
func runWith(name string, edit func(*v1alpha1.BenchmarkRunSpec)) *v1alpha1.BenchmarkRun {
	r := runtest.Run(name).InNamespace(teamNS).Obj()
	r.UID, r.Generation = "", 0
	if edit != nil {
		edit(&r.Spec)
	}
	return r
}

// campaignWith is a one-cell campaign in teamNS whose template is a normal
// run changed by edit.
func campaignWith(name string, edit func(*v1alpha1.BenchmarkRunSpec)) *v1alpha1.BenchmarkCampaign {
	return &v1alpha1.BenchmarkCampaign{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: teamNS},
		Spec:       v1alpha1.BenchmarkCampaignSpec{Template: v1alpha1.BenchmarkRunTemplate{Spec: runWith(name, edit).Spec}},
	}
}

func serviceAccount(sa string) func(*v1alpha1.BenchmarkRunSpec) {
	return func(s *v1alpha1.BenchmarkRunSpec) { s.Runners.ServiceAccountName = sa }
}

func image(ref string) func(*v1alpha1.BenchmarkRunSpec) {
	return func(s *v1alpha1.BenchmarkRunSpec) { s.Runners.Image = ref }
}

func credentials(secret string) func(*v1alpha1.BenchmarkRunSpec) {
	return func(s *v1alpha1.BenchmarkRunSpec) {
		s.Target.Credentials = &v1alpha1.CredentialsSpec{SecretName: secret}
	}
}

// axis adds a matrix axis setting path to the JSON values given.
func axis(c *v1alpha1.BenchmarkCampaign, name, path string, values ...string) *v1alpha1.BenchmarkCampaign {
	a := v1alpha1.MatrixAxis{Name: name, Path: path}
	for i, v := range values {
		a.Values = append(a.Values, v1alpha1.AxisValue{Label: string(rune('a' + i)), Value: apiextensionsv1.JSON{Raw: []byte(v)}})
	}
	if c.Spec.Matrix == nil {
		c.Spec.Matrix = &v1alpha1.MatrixSpec{}
	}
	c.Spec.Matrix.Axes = append(c.Spec.Matrix.Axes, a)
	return c
}

// create creates obj as user, dry-run: admission runs in full, nothing is
// stored, so cases never collide.
func create(t *testing.T, user string, obj client.Object) error {
	t.Helper()
	return clients[user].Create(bounded(t), obj, client.DryRunAll)
}

// The confused-deputy manifests: a user who may create runs and campaigns
// but neither pods nor Secrets is refused, with a message naming the field
// and the permission the user lacks.
func TestAdmissionRefusesTheConfusedDeputy(t *testing.T) {
	t.Parallel()
	system := func(r *v1alpha1.BenchmarkRun) *v1alpha1.BenchmarkRun { r.Namespace = systemNS; return r }
	for _, tc := range []struct {
		name string
		user string
		obj  client.Object
		want []string
	}{
		{name: "the manager's account", user: tenant, obj: system(runWith("mgr", serviceAccount("spanbench-manager"))),
			want: []string{"spec.runners.serviceAccountName", "spanbench's manager account"}},
		{name: "the manager's account, even for a pod creator", user: podMaker, obj: system(runWith("mgr", serviceAccount("spanbench-manager"))),
			want: []string{"spec.runners.serviceAccountName", "spanbench's manager account"}},
		{name: "the default account", user: tenant, obj: runWith("dflt", serviceAccount("default")),
			want: []string{"spec.runners.serviceAccountName", `"default" is refused`}},
		{name: "the default account, even for a pod creator", user: podMaker, obj: runWith("dflt", serviceAccount("default")),
			want: []string{"spec.runners.serviceAccountName", `"default" is refused`}},
		// The CRD's own name syntax may refuse it first; either way, refused
		// naming the field.
		{name: "an account of another namespace", user: podMaker, obj: runWith("xns", serviceAccount("system:serviceaccount:kube-system:admin")),
			want: []string{"spec.runners.serviceAccountName"}},
		{name: "another account of the namespace", user: tenant, obj: runWith("sa", serviceAccount("wi-runner")),
			want: []string{"spec.runners.serviceAccountName", "user tenant may not use service account wi-runner",
				"create pods in namespace team", "impersonate serviceaccount team/wi-runner"}},
		{name: "another run's account", user: tenant, obj: runWith("sa", serviceAccount("victim-runner")),
			want: []string{"spec.runners.serviceAccountName", "create pods in namespace team"}},
		{name: "a Secret the user may not get", user: tenant, obj: runWith("key", credentials("spanner-key")),
			want: []string{"spec.target.credentials.secretName", "user tenant may not get Secret team/spanner-key"}},
		{name: "another Secret than the one the user may get", user: secretReader, obj: runWith("key", credentials("other-key")),
			want: []string{"spec.target.credentials.secretName", "may not get Secret team/other-key"}},
		{name: "an image of the user's choice", user: tenant, obj: runWith("img", image("evil.example/steal:1")),
			want: []string{"spec.runners.image", "may not choose runner image evil.example/steal:1", "create pods in namespace team"}},
		{name: "a campaign's template account", user: tenant, obj: campaignWith("c-sa", serviceAccount("wi-runner")),
			want: []string{"spec.template.spec.runners.serviceAccountName", "create pods in namespace team"}},
		{name: "a campaign's template default account", user: tenant, obj: campaignWith("c-dflt", serviceAccount("default")),
			want: []string{"spec.template.spec.runners.serviceAccountName", `"default" is refused`}},
		{name: "a campaign's template Secret", user: tenant, obj: campaignWith("c-key", credentials("spanner-key")),
			want: []string{"spec.template.spec.target.credentials.secretName", "may not get Secret team/spanner-key"}},
		{name: "a campaign's template image", user: tenant, obj: campaignWith("c-img", image("evil.example/steal:1")),
			want: []string{"spec.template.spec.runners.image", "create pods in namespace team"}},
		{name: "a campaign axis that sets the account", user: tenant,
			obj:  axis(campaignWith("c-axis", nil), "who", "runners.serviceAccountName", `"wi-runner"`, `"default"`),
			want: []string{"spec.matrix.axes: axis who", "create pods and to get secrets in namespace team"}},
		{name: "a campaign axis that sets the whole runners object", user: podMaker,
			obj:  axis(campaignWith("c-axis", nil), "runners", "runners", `{"image":"evil.example/steal:1"}`, `{"replicas":2}`),
			want: []string{"spec.matrix.axes: axis runners", "get secrets in namespace team"}},
		{name: "a campaign axis that sets the credentials", user: tenant,
			obj:  axis(campaignWith("c-axis", nil), "key", "target.credentials.secretName", `"spanner-key"`, `"shared-key"`),
			want: []string{"spec.matrix.axes: axis key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := create(t, tc.user, tc.obj)
			if err == nil {
				t.Fatalf("user %s created %s: admitted, want refused with %q", tc.user, tc.name, tc.want)
			}
			if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) {
				t.Errorf("refusal is %v, want Forbidden (the policy) or Invalid (the CRD)", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal does not say %q:\n%v", w, err)
				}
			}
		})
	}
}

// The same user still runs a normal benchmark: a run and a campaign that
// name no account, image or Secret, and a campaign whose axes vary
// harmless fields.
func TestAdmissionAdmitsANormalRunOfTheSameUser(t *testing.T) {
	t.Parallel()
	for name, obj := range map[string]client.Object{
		"run":                           runWith("plain", nil),
		"campaign":                      campaignWith("plain", nil),
		"campaign with a harmless axis": axis(campaignWith("axes", nil), "replicas", "runners.replicas", "1", "2"),
	} {
		if err := create(t, tenant, obj); err != nil {
			t.Errorf("user tenant may not create a normal %s: %v", name, err)
		}
	}
	// Stored for real too, not only dry-run.
	r := runWith("stored", nil)
	if err := clients[tenant].Create(bounded(t), r); err != nil {
		t.Fatalf("user tenant may not store a normal run: %v", err)
	}
}

// A user whose RBAC already gives the power a field asks for is admitted.
func TestAdmissionAdmitsCreatorsWithThePermission(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		user string
		obj  client.Object
	}{
		{"a pod creator names an account", podMaker, runWith("sa", serviceAccount("wi-runner"))},
		{"a pod creator names an image", podMaker, runWith("img", image("registry.example/mine:2"))},
		{"an impersonator names the account", impersonator, runWith("sa", serviceAccount("wi-runner"))},
		{"a reader of the Secret names it", secretReader, runWith("key", credentials("spanner-key"))},
		{"a pod creator's campaign names an account and image", podMaker, campaignWith("c", func(s *v1alpha1.BenchmarkRunSpec) {
			serviceAccount("wi-runner")(s)
			image("registry.example/mine:2")(s)
		})},
		{"a reader's campaign names the Secret", secretReader, campaignWith("c", credentials("spanner-key"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if err := create(t, tc.user, tc.obj); err != nil {
				t.Errorf("user %s refused: %v", tc.user, err)
			}
		})
	}
	t.Run("an impersonator may not name another account", func(t *testing.T) {
		t.Parallel()
		if err := create(t, impersonator, runWith("sa", serviceAccount("other-runner"))); err == nil {
			t.Error("impersonate on wi-runner admitted a run naming other-runner")
		}
	})
}

// What the cluster admin opts in through the policy's data variable, any
// creator of runs may name. (The other tests never name what this one opts
// in: they run alongside.)
func TestAdmissionAdmitsWhatTheAdminOptsIn(t *testing.T) {
	t.Parallel()
	cases := map[string]client.Object{
		"account": runWith("sa", serviceAccount("opted-runner")),
		"Secret":  runWith("key", credentials("shared-key")),
		"image":   runWith("img", image("registry.example/bench/runner:1")),
	}
	for name, obj := range cases {
		if err := create(t, tenant, obj); err == nil {
			t.Fatalf("the %s is admitted before the admin opts it in", name)
		}
	}
	setOptIns(t, map[string]string{"managerServiceAccount": systemNS + "/spanbench-manager",
		"serviceAccounts": "team/opted-runner\nother/x\n", "secrets": "team/shared-key", "runnerImagePrefixes": "registry.example/bench/\n"})
	for name, obj := range cases {
		await.Eventually(t, await.Poll{Within: 30 * time.Second, Every: 200 * time.Millisecond}, "the opted-in "+name+" admitted",
			func() (bool, string) {
				err := create(t, tenant, obj)
				return err == nil, errString(err)
			})
	}
	// A prefix is a prefix: a longer repository name does not match.
	if err := create(t, tenant, runWith("img", image("registry.example/bench-evil/runner:1"))); err == nil {
		t.Error("prefix registry.example/bench/ admitted registry.example/bench-evil/runner:1")
	}
}

// The manager creates a campaign's runs; the campaign was checked when its
// creator wrote it, so the manager's requests skip the permission checks,
// but never the outright refusals. Metadata updates (finalizers, labels)
// are not checked at all.
func TestAdmissionOfTheManagerAndOfMetadataUpdates(t *testing.T) {
	t.Parallel()
	if err := create(t, managerUser, runWith("cell", serviceAccount("wi-runner"))); err != nil {
		t.Errorf("the manager may not create a campaign's run naming an account: %v", err)
	}
	if err := create(t, managerUser, runWith("cell", serviceAccount("default"))); err == nil {
		t.Error("the manager created a run naming the default account")
	}
	r := runWith("labelled", serviceAccount("wi-runner"))
	if err := clients[podMaker].Create(bounded(t), r); err != nil {
		t.Fatalf("pod-maker may not create the run: %v", err)
	}
	r.Labels = map[string]string{"team": "perf"}
	if err := clients[tenant].Update(bounded(t), r); err != nil {
		t.Errorf("user tenant may not label a run that names an account (metadata only): %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return "admitted"
	}
	return err.Error()
}

// setOptIns sets the policy's data variable, as a kustomize patch or the
// chart's values would: each value a CEL string literal's content.
func setOptIns(t *testing.T, data map[string]string) {
	t.Helper()
	vap := &unstructured.Unstructured{}
	vap.SetGroupVersionKind(schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicy"})
	if err := admin.Get(bounded(t), client.ObjectKey{Name: "spanbench-tenancy"}, vap); err != nil {
		t.Fatal(err)
	}
	vars, _, err := unstructured.NestedSlice(vap.Object, "spec", "variables")
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	entries := make([]string, 0, len(keys))
	for _, k := range keys {
		// A CEL string literal holds no raw newline: escape it.
		entries = append(entries, fmt.Sprintf("'%s': '%s'", k, strings.ReplaceAll(data[k], "\n", `\n`)))
	}
	set := false
	for _, v := range vars {
		if m := v.(map[string]any); m["name"] == "data" {
			m["expression"], set = "{"+strings.Join(entries, ", ")+"}", true
		}
	}
	if !set {
		t.Fatal("the policy has no data variable")
	}
	if err := unstructured.SetNestedSlice(vap.Object, vars, "spec", "variables"); err != nil {
		t.Fatal(err)
	}
	if err := admin.Update(bounded(t), vap); err != nil {
		t.Fatal(err)
	}
}
