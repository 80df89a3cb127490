package guardrails

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/runtest"
)

func TestLimitsRefuseWhatTheOperatorDoesNotAllow(t *testing.T) {
	limits := Limits{MaxRunners: 4, MaxDuration: time.Hour, MaxProcessingUnits: 3000,
		AllowedInstanceConfigs: []string{"regional-asia-northeast1", "asia1"}, MaxEphemeralDuration: 3 * time.Hour,
		MaxDatasetRows: 1_000_000, MaxDatasetBytes: 500_000_000, AllowedProjects: []string{"my-project", "bench-b"},
		RunnerImages:     ImageAllowlist{"spanbench:test", "registry.example/bench/", "registry.example/tools/loader:"},
		TolerationKeys:   KeyAllowlist{"dedicated", "cloud.google.com/"},
		NodeSelectorKeys: KeyAllowlist{"*"}}
	dataset := func(rows int64, fieldBytes int32) *v1alpha1.BenchmarkRun {
		r := runtest.Bare("data").Obj()
		r.Spec.Workload.Dataset.Rows, r.Spec.Workload.Dataset.FieldBytes = ptr.To(rows), ptr.To(fieldBytes)
		return r
	}
	runners := func(f func(*v1alpha1.RunnersSpec)) *v1alpha1.BenchmarkRun {
		return runtest.Bare("placed").Runners(f).Obj()
	}
	target := func(f func(*v1alpha1.TargetSpec)) *v1alpha1.BenchmarkRun {
		r := runtest.Bare("aimed").Obj()
		f(&r.Spec.Target)
		return r
	}
	for _, tc := range []struct {
		name string
		run  *v1alpha1.BenchmarkRun
		want string // "" = allowed
	}{
		{"an Existing run within every limit", runtest.Bare("ok").Obj(), ""},
		{"too many runners", runtest.Bare("wide").Replicas(5).Obj(), "--max-runners"},
		{"too many loader pods", func() *v1alpha1.BenchmarkRun {
			r := runtest.Bare("loaders").Obj()
			r.Spec.Workload.Dataset.LoaderPods = ptr.To[int32](5)
			return r
		}(), "dataset.loaderPods 5 exceeds the operator's limit of 4 pods (--max-runners)"},
		{"too long a run", func() *v1alpha1.BenchmarkRun {
			r := runtest.Bare("long").Obj()
			r.Spec.Workload.Duration = &metav1.Duration{Duration: 2 * time.Hour}
			return r
		}(), "more than the operator's limit of 1h0m0s (--max-duration)"},
		{"too big an instance", runtest.Bare("big").Ephemeral("asia1", 4).Obj(), "--max-processing-units"},
		{"an allowed configuration", runtest.Bare("tokyo").Ephemeral("regional-asia-northeast1", 3).Obj(), ""},
		{"a configuration not allowed", runtest.Bare("nam").Ephemeral("nam-eur-asia1", 1).Obj(), "--allowed-instance-configs"},
		{"an Existing instance of any configuration", func() *v1alpha1.BenchmarkRun {
			r := runtest.Bare("theirs").Obj()
			r.Spec.Target.Instance.Config = "nam-eur-asia1"
			return r
		}(), ""},
		{"a full config name is no ID on the list", func() *v1alpha1.BenchmarkRun {
			r := runtest.Bare("full").Ephemeral("asia1", 1).Obj() // the API refuses it; the manager must too
			r.Spec.Target.Instance.Config = "projects/other/instanceConfigs/asia1"
			return r
		}(),
			"config projects/other/instanceConfigs/asia1 is not among the configurations"},
		{"a dataset within both caps", dataset(400_000, 100), ""},
		{"too many rows", dataset(1_000_001, 1), "spec.workload.dataset.rows 1000001 exceeds the operator's limit of 1000000 rows (--max-dataset-rows)"},
		{"too many bytes (YCSB rows of 10 fields)", dataset(500_000, 100), "estimated size, 509500000 bytes (spec.workload.dataset.rows 500000 of a YCSB row with fieldBytes 100)"},
		{"an Existing instance is no way around the dataset caps", func() *v1alpha1.BenchmarkRun {
			r := dataset(10_000_000_000, 1)
			r.Spec.Target.Instance.Mode = v1alpha1.InstanceExisting
			return r
		}(), "--max-dataset-rows"},
		{"another project", target(func(t *v1alpha1.TargetSpec) { t.Project = "not-mine" }), "spec.target.project not-mine is not among the projects the operator allows: my-project, bench-b (--allowed-projects)"},
		{"a project that only starts like an allowed one", target(func(t *v1alpha1.TargetSpec) { t.Project = "my-project-2" }), "--allowed-projects"},
		{"any project on an emulator", target(func(t *v1alpha1.TargetSpec) { t.Project, t.EmulatorHost = "spanbench-local", "localhost:9010" }), ""},
		{"the manager's own image", runners(func(r *v1alpha1.RunnersSpec) { r.Image = "spanbench:test" }), ""},
		{"an image under an allowed prefix", runners(func(r *v1alpha1.RunnersSpec) { r.Image = "registry.example/bench/spanbench:v2" }), ""},
		{"an image under an allowed tag prefix", runners(func(r *v1alpha1.RunnersSpec) { r.Image = "registry.example/tools/loader:v1" }), ""},
		{"an image beside an allowed prefix", runners(func(r *v1alpha1.RunnersSpec) { r.Image = "registry.example/bench-evil/x:v1" }),
			"spec.runners.image registry.example/bench-evil/x:v1 is not among the runner images the operator allows"},
		{"an image that extends an exact entry", runners(func(r *v1alpha1.RunnersSpec) { r.Image = "spanbench:test2" }), "--allowed-runner-images"},
		{"a toleration of an allowed key", runners(func(r *v1alpha1.RunnersSpec) {
			r.Tolerations = []v1alpha1.Toleration{{Key: "dedicated", Value: "bench", Effect: "NoSchedule"}, {Key: "cloud.google.com/gke-spot", Operator: "Exists"}}
		}), ""},
		{"a toleration of every taint", runners(func(r *v1alpha1.RunnersSpec) {
			r.Tolerations = []v1alpha1.Toleration{{Key: "dedicated"}, {Operator: "Exists"}}
		}), "spec.runners.tolerations[1] has no key: it tolerates every taint"},
		{"a toleration of another key", runners(func(r *v1alpha1.RunnersSpec) { r.Tolerations = []v1alpha1.Toleration{{Key: "gpu"}} }),
			"spec.runners.tolerations[0].key gpu is not among the taint keys"},
		{"a toleration of the control plane's taint", runners(func(r *v1alpha1.RunnersSpec) {
			r.Tolerations = []v1alpha1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: "Exists"}}
		}), "--allowed-toleration-keys"},
		{"a node selector of any key", runners(func(r *v1alpha1.RunnersSpec) {
			r.NodeSelector = map[string]v1alpha1.LabelValue{"cloud.google.com/gke-nodepool": "bench", "disk": "ssd"}
		}), ""},
		{"a control-plane node selector is not covered by *", runners(func(r *v1alpha1.RunnersSpec) {
			r.NodeSelector = map[string]v1alpha1.LabelValue{"disk": "ssd", "node-role.kubernetes.io/control-plane": ""}
		}), "spec.runners.nodeSelector key node-role.kubernetes.io/control-plane is not among the node labels"},
		{"an instance that could outlive its cap", func() *v1alpha1.BenchmarkRun {
			r := runtest.Bare("long").Ephemeral("asia1", 1).Obj()
			r.Spec.Deadlines.Load = &metav1.Duration{Duration: 3 * time.Hour}
			return r
		}(), "--max-ephemeral-duration"},
	} {
		got := limits.Check(tc.run)
		switch {
		case tc.want == "" && got != "":
			t.Errorf("%s: refused with %q", tc.name, got)
		case tc.want != "" && !strings.Contains(got, tc.want):
			t.Errorf("%s: check says %q; want a refusal naming %s", tc.name, got, tc.want)
		}
	}
	anything := runtest.Bare("any").Replicas(1000).Ephemeral("anything", 1000).Runners(func(r *v1alpha1.RunnersSpec) {
		r.Image, r.Tolerations = "anywhere/any:thing", []v1alpha1.Toleration{{Operator: "Exists"}}
		r.NodeSelector = map[string]v1alpha1.LabelValue{"node-role.kubernetes.io/master": ""}
	}).Obj()
	anything.Spec.Workload.Dataset.Rows = ptr.To[int64](10_000_000_000)
	if got := (Limits{}).Check(anything); got != "" {
		t.Errorf("zero limits refused a run: %q", got)
	}
}

func TestEphemeralLifetimeAddsEveryDeadlineToTheWorkload(t *testing.T) {
	run := runtest.Bare("r").Obj() // 10m workload, default deadlines
	want := 10*time.Minute + v1alpha1.DefaultPrepareDeadline + v1alpha1.DefaultLoadDeadline + v1alpha1.DefaultRunnersReadyDeadline +
		v1alpha1.DefaultOverrunDeadline + v1alpha1.DefaultAggregateDeadline
	if got := EphemeralLifetime(run); got != want {
		t.Errorf("EphemeralLifetime = %s, want %s", got, want)
	}
}

// TestKeyAndImageAllowlists: "*" and prefixes never reach the control
// plane's keys; image prefixes end in '/', ':' or '@'; other entries are
// exact.
func TestKeyAndImageAllowlists(t *testing.T) {
	keys := KeyAllowlist{"*"}
	for key, want := range map[string]bool{"disk": true, "example.com/pool": true,
		"node-role.kubernetes.io/control-plane": false, "node-role.kubernetes.io/master": false} {
		if got := keys.Allows(key); got != want {
			t.Errorf("%v allows %s: %t, want %t", keys, key, got, want)
		}
	}
	for list, key := range map[string]KeyAllowlist{"prefix": {"node-role.kubernetes.io/"}, "none": {}} {
		if key.Allows("node-role.kubernetes.io/control-plane") {
			t.Errorf("%s list %v allows the control plane's key", list, key)
		}
	}
	if !(KeyAllowlist{"node-role.kubernetes.io/control-plane"}).Allows("node-role.kubernetes.io/control-plane") {
		t.Errorf("an exact entry does not allow the control plane's key")
	}
	images := ImageAllowlist{"registry.example/bench/", "ghcr.io/spanbench/spanbench:", "mirror.example/spanbench@", "spanbench:dev"}
	for image, want := range map[string]bool{"registry.example/bench/x:1": true, "registry.example/bench-evil/x:1": false,
		"ghcr.io/spanbench/spanbench:v1": true, "ghcr.io/spanbench/spanbench-evil:v1": false,
		"mirror.example/spanbench@sha256:00": true, "spanbench:dev": true, "spanbench:dev2": false, "spanbench": false} {
		if got := images.Allows(image); got != want {
			t.Errorf("%v allows %s: %t, want %t", images, image, got, want)
		}
	}
}
