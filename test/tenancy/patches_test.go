package tenancy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/tenancy"
)

// patched is a campaign of teamNS whose template is a normal run changed
// by edit, with one path-less axis "p": a harmless first value (the
// template as it is) and a second value carrying the patches given.
// smp is a strategic-merge patch (YAML or JSON), ops a JSON patch (JSON).
func patched(t *testing.T, edit func(*v1alpha1.BenchmarkRunSpec), smp, ops string) *v1alpha1.BenchmarkCampaign {
	t.Helper()
	c := campaignWith("patched", edit)
	v := v1alpha1.AxisValue{Label: "evil"}
	if smp != "" {
		js, err := yaml.YAMLToJSON([]byte(smp))
		if err != nil {
			t.Fatal(err)
		}
		v.StrategicMergePatch = &apiextensionsv1.JSON{Raw: js}
	}
	if ops != "" {
		if err := json.Unmarshal([]byte(ops), &v.JSONPatch); err != nil {
			t.Fatal(err)
		}
	}
	c.Spec.Matrix = &v1alpha1.MatrixSpec{Axes: []v1alpha1.MatrixAxis{{Name: "p", Values: []v1alpha1.AxisValue{{Label: "plain"}, v}}}}
	return c
}

// withPlacement gives the template a node selector and a toleration, for
// the patches that remove them.
func withPlacement(s *v1alpha1.BenchmarkRunSpec) {
	s.Runners.NodeSelector = map[string]v1alpha1.LabelValue{"pool": "bench"}
	s.Runners.Tolerations = []v1alpha1.Toleration{{Key: "bench", Operator: "Exists"}}
}

// The powers of teamNS a refusal names.
const (
	needsPods       = "create pods in namespace team"
	needsWIRunner   = "impersonate serviceaccount team/wi-runner"
	needsSpannerKey = "get secret team/spanner-key"
)

// patchCases are an axis value's patches that set, change or remove a
// guarded field, in every form a patch can take, and what the refusal
// of user tenant must name.
var patchCases = []struct {
	name     string
	edit     func(*v1alpha1.BenchmarkRunSpec)
	smp, ops string
	want     []string
}{
	{name: "strategic merge: service account", smp: `runners: {serviceAccountName: wi-runner}`,
		want: []string{`runners.serviceAccountName "wi-runner"`, needsPods, needsWIRunner}},
	{name: "strategic merge: credentials Secret", smp: `target: {credentials: {secretName: spanner-key}}`,
		want: []string{`target.credentials.secretName "spanner-key"`, needsSpannerKey}},
	{name: "strategic merge: image", smp: `runners: {image: evil.example/steal:1}`,
		want: []string{"runners.image", needsPods}},
	{name: "strategic merge: tolerations", smp: `runners: {tolerations: [{operator: Exists, key: gpu}]}`,
		want: []string{"runners.tolerations", needsPods}},
	{name: "strategic merge: node selector", smp: `runners: {nodeSelector: {pool: secure}}`,
		want: []string{"runners.nodeSelector", needsPods}},
	{name: "strategic merge: the whole runners object replaced", smp: `runners: {$patch: replace, replicas: 1, serviceAccountName: wi-runner}`,
		want: []string{`runners.serviceAccountName "wi-runner"`, needsPods}},
	{name: "strategic merge: account and Secret at once", smp: `{runners: {serviceAccountName: wi-runner}, target: {credentials: {secretName: spanner-key}}}`,
		want: []string{`runners.serviceAccountName "wi-runner"`}},
	{name: "strategic merge: $patch delete of the node selector", edit: withPlacement, smp: `runners: {nodeSelector: {$patch: delete}}`,
		want: []string{"runners.nodeSelector", needsPods}},
	{name: "strategic merge: the tolerations list replaced", edit: withPlacement,
		smp:  `runners: {tolerations: [{operator: Exists}]}`,
		want: []string{"runners.tolerations", needsPods}},
	{name: "strategic merge: a nested $patch replace of credentials", smp: `target: {credentials: {$patch: replace, secretName: spanner-key}}`,
		want: []string{`target.credentials.secretName "spanner-key"`, needsSpannerKey}},
	{name: "JSON patch: add the service account", ops: `[{"op":"add","path":"/runners/serviceAccountName","value":"wi-runner"}]`,
		want: []string{`runners.serviceAccountName "wi-runner"`, needsWIRunner}},
	{name: "JSON patch: add credentials", ops: `[{"op":"add","path":"/target/credentials","value":{"secretName":"spanner-key"}}]`,
		want: []string{`target.credentials.secretName "spanner-key"`, needsSpannerKey}},
	{name: "JSON patch: the Secret's name in a nested object", ops: `[{"op":"add","path":"/target/credentials","value":{"secretName":"shared-key","key":"k.json"}}]`,
		want: []string{`target.credentials.secretName "shared-key"`, "get secret team/shared-key"}},
	{name: "JSON patch: replace the image", ops: `[{"op":"add","path":"/runners/image","value":"evil.example/steal:1"}]`,
		want: []string{"runners.image", needsPods}},
	{name: "JSON patch: replace the whole runners object", ops: `[{"op":"replace","path":"/runners","value":{"replicas":1,"serviceAccountName":"wi-runner"}}]`,
		want: []string{`runners.serviceAccountName "wi-runner"`}},
	{name: "JSON patch: copy a value into the service account", edit: func(s *v1alpha1.BenchmarkRunSpec) { s.Target.Database = "wi-runner" },
		ops:  `[{"op":"copy","from":"/target/database","path":"/runners/serviceAccountName"}]`,
		want: []string{`runners.serviceAccountName "wi-runner"`}},
	{name: "JSON patch: add tolerations", ops: `[{"op":"add","path":"/runners/tolerations","value":[{"operator":"Exists"}]}]`,
		want: []string{"runners.tolerations", needsPods}},
	{name: "JSON patch: add a node selector", ops: `[{"op":"add","path":"/runners/nodeSelector","value":{"pool":"secure"}}]`,
		want: []string{"runners.nodeSelector", needsPods}},
	{name: "JSON patch: remove the node selector", edit: withPlacement, ops: `[{"op":"remove","path":"/runners/nodeSelector"}]`,
		want: []string{"runners.nodeSelector", needsPods}},
	{name: "JSON patch: remove a toleration", edit: withPlacement, ops: `[{"op":"remove","path":"/runners/tolerations/0"}]`,
		want: []string{"runners.tolerations", needsPods}},
	{name: "both patches: the JSON patch undoes nothing the merge set", smp: `runners: {replicas: 2}`,
		ops:  `[{"op":"add","path":"/runners/serviceAccountName","value":"wi-runner"}]`,
		want: []string{`runners.serviceAccountName "wi-runner"`}},
}

// An axis value's patches are checked like the fields they set: a user
// who may create campaigns but neither pods nor Secrets is refused every
// patch that sets, changes or removes a guarded field, by the campaign
// webhook, naming the axis value, the field and the permission.
func TestAdmissionChecksWhatPatchesChange(t *testing.T) {
	t.Parallel()
	for _, tc := range patchCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := create(t, tenant, patched(t, tc.edit, tc.smp, tc.ops))
			if err == nil {
				t.Fatalf("user tenant created a campaign whose axis value %s: admitted, want refused naming %q", tc.name, tc.want)
			}
			if !apierrors.IsForbidden(err) {
				t.Errorf("refusal is %v, want Forbidden", err)
			}
			for _, w := range append([]string{"spec.matrix.axes[0].values[1]", `matrix axis "p" value "evil"`, "user tenant"}, tc.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal does not say %q:\n%v", w, err)
				}
			}
		})
	}
}

// A writer who holds the power a patch gives is admitted, and only for
// the object the power names.
func TestAdmissionAdmitsPatchesTheWriterMayMake(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, user, smp, ops string
		admitted             bool
	}{
		{"a pod creator's patch names an account", podMaker, `runners: {serviceAccountName: wi-runner}`, "", true},
		{"a pod creator's patch names an image and tolerations", podMaker, `runners: {image: registry.example/mine:2, tolerations: [{operator: Exists, key: gpu}]}`, "", true},
		{"an impersonator's patch names the account", impersonator, "", `[{"op":"add","path":"/runners/serviceAccountName","value":"wi-runner"}]`, true},
		{"an impersonator's patch names another account", impersonator, "", `[{"op":"add","path":"/runners/serviceAccountName","value":"opted-runner"}]`, false},
		{"a reader's patch names the Secret", secretReader, `target: {credentials: {secretName: spanner-key}}`, "", true},
		{"a reader's patch names another Secret", secretReader, `target: {credentials: {secretName: shared-key}}`, "", false},
		{"a pod creator's patch names a Secret", podMaker, `target: {credentials: {secretName: spanner-key}}`, "", false},
		{"a patch that removes the account the template names", podMaker, "", `[{"op":"remove","path":"/runners/serviceAccountName"}]`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var edit func(*v1alpha1.BenchmarkRunSpec)
			if strings.Contains(tc.ops, "remove") {
				edit = serviceAccount("wi-runner")
			}
			err := create(t, tc.user, patched(t, edit, tc.smp, tc.ops))
			if tc.admitted && err != nil {
				t.Errorf("user %s refused: %v", tc.user, err)
			}
			if !tc.admitted && !apierrors.IsForbidden(err) {
				t.Errorf("user %s: %v, want Forbidden", tc.user, err)
			}
		})
	}
}

// Every campaign of config/samples is admitted for a user with rights on
// BenchmarkRuns and BenchmarkCampaigns only: the policy evaluates on
// path-less (patch-only) axes, and no sample's axis touches a guarded
// field.
func TestAdmissionAdmitsEveryCampaignSampleForARunAuthor(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "..", "config", "samples", "campaign-*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no campaign samples found: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			c := &v1alpha1.BenchmarkCampaign{}
			if err := yaml.UnmarshalStrict(b, c); err != nil {
				t.Fatal(err)
			}
			c.Namespace = teamNS
			if err := create(t, tenant, c); err != nil {
				t.Errorf("user tenant may not create sample %s: %v", filepath.Base(f), err)
			}
		})
	}
}

// The writer record: the webhook stamps the user who writes the spec,
// whatever annotation the request carried, keeps it across metadata
// updates, and restores it when a metadata update changes or drops it.
func TestAdmissionRecordsTheSpecWriter(t *testing.T) {
	t.Parallel()
	c := campaignWith("recorded", nil)
	c.Annotations = map[string]string{tenancy.WriterAnnotation: `{"username":"system:admin","groups":["system:masters"]}`}
	if err := clients[tenant].Create(bounded(t), c); err != nil {
		t.Fatalf("user tenant may not create a campaign: %v", err)
	}
	writer := func() string {
		t.Helper()
		got := &v1alpha1.BenchmarkCampaign{}
		if err := admin.Get(bounded(t), client.ObjectKeyFromObject(c), got); err != nil {
			t.Fatal(err)
		}
		u, err := tenancy.Writer(got.Annotations)
		if err != nil {
			t.Fatalf("stored campaign: %v", err)
		}
		return u.Username
	}
	if w := writer(); w != tenant {
		t.Fatalf("the forged writer was stored: writer %q, want %q", w, tenant)
	}
	// A metadata update by another user that forges the record: put back.
	if err := clients[podMaker].Get(bounded(t), client.ObjectKeyFromObject(c), c); err != nil {
		t.Fatal(err)
	}
	c.Annotations[tenancy.WriterAnnotation] = `{"username":"system:admin","groups":["system:masters"]}`
	c.Labels = map[string]string{"team": "perf"}
	if err := clients[podMaker].Update(bounded(t), c); err != nil {
		t.Fatalf("a metadata update: %v", err)
	}
	if w := writer(); w != tenant {
		t.Errorf("after a metadata update forging the record, writer %q, want %q", w, tenant)
	}
	// Dropped (as a server-side apply by a manager owning it would): put back.
	delete(c.Annotations, tenancy.WriterAnnotation)
	if err := clients[podMaker].Update(bounded(t), c); err != nil {
		t.Fatalf("a metadata update dropping the record: %v", err)
	}
	if w := writer(); w != tenant {
		t.Errorf("after a metadata update dropping the record, writer %q, want %q", w, tenant)
	}
	// A change of spec makes its writer the campaign's.
	c.Spec.RunNow = "now"
	if err := clients[podMaker].Update(bounded(t), c); err != nil {
		t.Fatalf("a spec update: %v", err)
	}
	if w := writer(); w != podMaker {
		t.Errorf("after pod-maker changed the spec, writer %q, want %q", w, podMaker)
	}
}
