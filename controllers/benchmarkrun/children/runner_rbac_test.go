package children

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/runtest"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/runner/protocol/chunks"
)

func TestNewRunnerServiceAccount(t *testing.T) {
	want := &corev1.ServiceAccount{
		ObjectMeta:                   metav1.ObjectMeta{Name: "nightly-runner", Namespace: "bench", Labels: builderRunLabels("nightly")},
		AutomountServiceAccountToken: ptr.To(true),
	}
	if diff := cmp.Diff(want, NewRunnerServiceAccount(runtest.Bare("nightly").Obj())); diff != "" {
		t.Errorf("NewRunnerServiceAccount (-want +got):\n%s", diff)
	}
}

func TestRunnerServiceAccountName(t *testing.T) {
	if got := RunnerServiceAccountName(runtest.Bare("nightly").Obj()); got != "nightly-runner" {
		t.Errorf("without spec.runners.serviceAccountName: %q, want spanbench's nightly-runner", got)
	}
	run := runtest.Bare("nightly").Runners(func(r *v1alpha1.RunnersSpec) { r.ServiceAccountName = "spanner-wi" }).Obj()
	if got := RunnerServiceAccountName(run); got != "spanner-wi" {
		t.Errorf("with spec.runners.serviceAccountName spanner-wi: %q", got)
	}
}

func TestNewRunnerRole(t *testing.T) {
	tests := []struct {
		name   string
		run    *v1alpha1.BenchmarkRun
		shards []string
		chunks int
	}{
		{name: "one runner, one loader", run: runtest.Bare("nightly").Obj(), shards: []string{"nightly-shard-0", "nightly-load-0"}, chunks: 1},
		{
			name: "three runners, two loaders: the control map, three shard maps and two loader maps",
			run: func() *v1alpha1.BenchmarkRun {
				r := runtest.Bare("nightly").Replicas(3).Obj()
				r.Spec.Workload.Dataset.LoaderPods = ptr.To[int32](2)
				return r
			}(),
			shards: []string{"nightly-shard-0", "nightly-shard-1", "nightly-shard-2", "nightly-load-0", "nightly-load-1"},
			chunks: 3,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var chunkNames []string
			for i := range tc.chunks {
				for k := range chunks.MaxShardChunks {
					chunkNames = append(chunkNames, fmt.Sprintf("nightly-shard-%d-%d", i, k))
				}
			}
			want := &rbacv1.Role{
				ObjectMeta: metav1.ObjectMeta{Name: "nightly-runner", Namespace: "bench", Labels: builderRunLabels("nightly")},
				Rules: []rbacv1.PolicyRule{
					{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}, ResourceNames: []string{"nightly-control"}},
					{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "update", "patch"}, ResourceNames: tc.shards},
					{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create", "patch"}, ResourceNames: chunkNames},
				},
			}
			if diff := cmp.Diff(want, NewRunnerRole(tc.run)); diff != "" {
				t.Errorf("NewRunnerRole (-want +got):\n%s", diff)
			}
		})
	}
}

// Whatever the run, every rule is confined to ConfigMaps of that run, by
// name, with no verb beyond get, update and patch, only get on the
// control map (the controller alone writes the start time), and create
// only on the names of its shards' result chunks. Even at 1,000 runners
// and the longest run name the Role fits an object's 1.5 MiB.
func TestNewRunnerRoleIsLeastPrivilege(t *testing.T) {
	for _, replicas := range []int32{1, 7, 1000} {
		run := runtest.Bare("nightly").Replicas(replicas).Obj()
		run.Spec.Workload.Dataset.LoaderPods = ptr.To(min(replicas, v1alpha1.MaxLoaderPods))
		own, chunkNames := map[string]bool{protocol.ControlConfigMapName(run.Name): true}, map[string]bool{}
		for i := range int(replicas) {
			own[protocol.ShardConfigMapName(run.Name, i)] = true
			for k := range chunks.MaxShardChunks {
				own[protocol.ShardChunkNames(run.Name, i)[k]], chunkNames[protocol.ShardChunkNames(run.Name, i)[k]] = true, true
			}
		}
		for i := range int(*run.Spec.Workload.Dataset.LoaderPods) {
			own[protocol.LoaderConfigMapName(run.Name, i)] = true
		}
		named := map[string]bool{}
		for _, rule := range NewRunnerRole(run).Rules {
			if !slices.Equal(rule.APIGroups, []string{""}) || !slices.Equal(rule.Resources, []string{"configmaps"}) {
				t.Errorf("replicas %d: a rule reaches API groups %q, resources %v; want core configmaps only", replicas, rule.APIGroups, rule.Resources)
			}
			if len(rule.ResourceNames) == 0 || len(rule.NonResourceURLs) > 0 {
				t.Errorf("replicas %d: a rule granting %v is not confined by resourceNames (nonResourceURLs %v)", replicas, rule.Verbs, rule.NonResourceURLs)
			}
			for _, v := range rule.Verbs {
				if v == "create" && !slices.Equal(rule.Verbs, []string{"create", "patch"}) {
					t.Errorf("replicas %d: create is granted with %v; want with patch only", replicas, rule.Verbs)
				}
				if v != "get" && v != "update" && v != "patch" && v != "create" {
					t.Errorf("replicas %d: a rule on %v grants %q; want get, update, patch and create only", replicas, rule.Resources, v)
				}
			}
			for _, n := range rule.ResourceNames {
				if slices.Contains(rule.Verbs, "create") != chunkNames[n] {
					t.Errorf("replicas %d: ConfigMap %s is granted %v; want create and patch for result chunks alone", replicas, n, rule.Verbs)
				}
			}
			for _, n := range rule.ResourceNames {
				if !own[n] {
					t.Errorf("replicas %d: rule names %q, not a ConfigMap of this run", replicas, n)
				}
				if n == protocol.ControlConfigMapName(run.Name) && !slices.Equal(rule.Verbs, []string{"get"}) {
					t.Errorf("replicas %d: the control map is granted %v, want get only", replicas, rule.Verbs)
				}
				named[n] = true
			}
		}
		if len(named) != len(own) {
			t.Errorf("replicas %d: the Role names %d ConfigMaps, want the control map, %d shard maps, their chunks and the loader maps", replicas, len(named), replicas)
		}
	}
	long := runtest.Bare(strings.Repeat("n", v1alpha1.MaxRunNameLength)).Replicas(1000).Obj()
	if b, err := json.Marshal(NewRunnerRole(long)); err != nil || len(b) > 3<<19 {
		t.Errorf("the Role of 1,000 runners of a run named at the limit is %d bytes of JSON (%v); want within 1.5 MiB", len(b), err)
	}
}

func TestNewRunnerRoleBinding(t *testing.T) {
	for _, sa := range []string{"nightly-runner", "spanner-wi"} {
		want := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "nightly-runner", Namespace: "bench", Labels: builderRunLabels("nightly")},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: "bench"}},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "nightly-runner"},
		}
		if diff := cmp.Diff(want, NewRunnerRoleBinding(runtest.Bare("nightly").Obj(), sa)); diff != "" {
			t.Errorf("NewRunnerRoleBinding(run, %q) (-want +got):\n%s", sa, diff)
		}
	}
}

// builtChild is one child object of a run, with its kind for messages.
type builtChild struct {
	kind string
	obj  metav1.Object
}

// allRunnerChildren builds every child object of run with the builders.
func allRunnerChildren(t *testing.T, run *v1alpha1.BenchmarkRun) []builtChild {
	t.Helper()
	control, err := NewControlConfigMap(run, protocol.Control{
		Run: run.Name, Namespace: run.Namespace, Shards: int(run.Replicas()), Target: run.Spec.Target, Workload: run.Spec.Workload,
	})
	if err != nil {
		t.Fatal(err)
	}
	children := []builtChild{
		{"ConfigMap", control},
		{"ServiceAccount", NewRunnerServiceAccount(run)},
		{"Role", NewRunnerRole(run)},
		{"RoleBinding", NewRunnerRoleBinding(run, RunnerServiceAccountName(run))},
		{"Job", NewRunnerJob(run, RunnerConfig{Image: "img", StartupGrace: time.Second})},
		{"Job", NewLoaderJob(run, RunnerConfig{Image: "img"})},
	}
	for i := range int(run.Replicas()) {
		children = append(children, builtChild{"ConfigMap", NewShardConfigMap(run, i)})
	}
	for i := range int(run.LoaderPods()) {
		children = append(children, builtChild{"ConfigMap", NewLoaderConfigMap(run, i)})
	}
	return children
}

// Every child is named, namespaced and labelled for the run, and owned by
// nothing: the reconciler sets the owner (SetControllerReference), and a
// builder that set one would make adopt-or-refuse lie.
func TestBuildersLabelAndDoNotOwn(t *testing.T) {
	run := runtest.Bare("nightly").Replicas(2).Credentials("spanner-key", "").Obj()
	for _, c := range allRunnerChildren(t, run) {
		o := c.obj
		if o.GetName() == "" || o.GetNamespace() != "bench" {
			t.Errorf("%s %q: namespace %q, want a name in bench", c.kind, o.GetName(), o.GetNamespace())
		}
		if len(o.GetOwnerReferences()) > 0 {
			t.Errorf("%s %s has owner references %v; the reconciler sets them", c.kind, o.GetName(), o.GetOwnerReferences())
		}
		for k, v := range v1alpha1.RunLabels(run) {
			if o.GetLabels()[k] != v {
				t.Errorf("%s %s: label %s=%q, want %q", c.kind, o.GetName(), k, o.GetLabels()[k], v)
			}
		}
	}
}

// The credentials Secret is reachable from exactly one place: the runner
// pod's credentials volume. No env var, envFrom, image pull secret,
// projected volume or other object refers to a Secret, and the Role grants
// nothing on Secrets.
func TestBuildersReferenceNoSecretButTheCredentialsVolume(t *testing.T) {
	runs := map[string]*v1alpha1.BenchmarkRun{
		"without credentials": runtest.Bare("plain").Replicas(2).Obj(),
		"with credentials":    runtest.Bare("keyed").Replicas(2).Credentials("spanner-key-secret", "sa.json").Obj(),
	}
	for name, run := range runs {
		t.Run(name, func(t *testing.T) {
			for _, c := range allRunnerChildren(t, run) {
				if c.kind == "Job" {
					continue // checked field by field below
				}
				b, err := json.Marshal(c.obj)
				if err != nil {
					t.Fatal(err)
				}
				if text := strings.ToLower(string(b)); strings.Contains(text, "secret") {
					t.Errorf("%s %s mentions a Secret: %s", c.kind, c.obj.GetName(), b)
				}
			}

			pod := NewRunnerJob(run, RunnerConfig{Image: "img"}).Spec.Template.Spec
			if len(pod.ImagePullSecrets) > 0 {
				t.Errorf("the runner pod has image pull secrets %v", pod.ImagePullSecrets)
			}
			var secretVolumes []string
			for _, v := range pod.Volumes {
				if v.Secret != nil {
					secretVolumes = append(secretVolumes, v.Name+"="+v.Secret.SecretName)
				}
				if v.Projected != nil {
					for _, s := range v.Projected.Sources {
						if s.Secret != nil {
							t.Errorf("projected volume %s holds Secret %s", v.Name, s.Secret.Name)
						}
					}
				}
			}
			var want []string
			if cred := run.Spec.Target.Credentials; cred != nil {
				want = []string{"credentials=" + cred.SecretName}
			}
			if diff := cmp.Diff(want, secretVolumes); diff != "" {
				t.Errorf("Secret volumes of the runner pod (-want +got):\n%s", diff)
			}
			for _, ctr := range append(pod.InitContainers, pod.Containers...) {
				for _, e := range ctr.EnvFrom {
					if e.SecretRef != nil {
						t.Errorf("container %s: envFrom Secret %s", ctr.Name, e.SecretRef.Name)
					}
				}
				for _, e := range ctr.Env {
					if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
						t.Errorf("container %s: env %s from Secret %s", ctr.Name, e.Name, e.ValueFrom.SecretKeyRef.Name)
					}
				}
			}
		})
	}
}
