package children

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/runtest"
)

// builderRunLabels are v1alpha1.RunLabels of a run named name, written out.
func builderRunLabels(name string) map[string]string {
	return map[string]string{
		"bench.spanbench.io/run":       name,
		"app.kubernetes.io/name":       "spanbench",
		"app.kubernetes.io/managed-by": "spanbench",
	}
}

// builderPodLabels are the runner pod labels of a run named name.
func builderPodLabels(name string) map[string]string {
	l := builderRunLabels(name)
	l["app.kubernetes.io/component"] = "runner"
	return l
}

func restrictedPodSecurity() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		RunAsUser:      ptr.To[int64](65532),
		RunAsGroup:     ptr.To[int64](65532),
		FSGroup:        ptr.To[int64](65532),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

func restrictedContainerSecurity() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot:             ptr.To(true),
		RunAsUser:                ptr.To[int64](65532),
		ReadOnlyRootFilesystem:   ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

func downwardEnv() []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
		}},
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"},
		}},
	}
}

func tmpVolume() corev1.Volume {
	return corev1.Volume{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
}

func tmpMount() corev1.VolumeMount { return corev1.VolumeMount{Name: "tmp", MountPath: "/tmp"} }

func TestNewRunnerJob(t *testing.T) {
	defaultCfg := RunnerConfig{Image: "ghcr.io/spanbench/spanbench:v0.1.0", StartupGrace: 30 * time.Second}

	tests := []struct {
		name string
		run  *v1alpha1.BenchmarkRun
		cfg  RunnerConfig
		want *batchv1.Job
	}{
		{
			name: "a minimal run gets one restricted runner with the manager's image, its own service account and port 9090",
			run:  runtest.Bare("nightly").Obj(),
			cfg:  defaultCfg,
			want: &batchv1.Job{
				ObjectMeta: metav1.ObjectMeta{Name: "nightly-runners", Namespace: "bench", Labels: builderRunLabels("nightly")},
				Spec: batchv1.JobSpec{
					CompletionMode:       ptr.To(batchv1.IndexedCompletion),
					Completions:          ptr.To[int32](1),
					Parallelism:          ptr.To[int32](1),
					BackoffLimitPerIndex: ptr.To[int32](0),
					MaxFailedIndexes:     ptr.To[int32](1),
					// runnersReady 10m + grace 30s + duration 10m + overrun 5m
					ActiveDeadlineSeconds: ptr.To[int64](1530),
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{
							Labels: builderPodLabels("nightly"),
							Annotations: map[string]string{
								"prometheus.io/scrape": "true",
								"prometheus.io/port":   "9090",
								"prometheus.io/path":   "/metrics",
							},
						},
						Spec: corev1.PodSpec{
							ServiceAccountName: "nightly-runner",
							RestartPolicy:      corev1.RestartPolicyNever,
							SecurityContext:    restrictedPodSecurity(),
							Containers: []corev1.Container{{
								Name:            "runner",
								Image:           "ghcr.io/spanbench/spanbench:v0.1.0",
								Command:         []string{"/spanbench-runner"},
								Args:            []string{"runner", "--run", "nightly", "--metrics-addr", ":9090", "--ready-timeout", "10m30s"},
								Env:             downwardEnv(),
								Ports:           []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP}},
								VolumeMounts:    []corev1.VolumeMount{tmpMount()},
								SecurityContext: restrictedContainerSecurity(),
							}},
							Volumes: []corev1.Volume{tmpVolume()},
						},
					},
				},
			},
		},
		{
			name: "a fully specified run mounts its credentials key and is placed, sized, tolerated and imaged as asked",
			run: runtest.Bare("multi").
				Replicas(3).
				Credentials("spanner-key", "sa.json").
				Deadlines(2*time.Minute, 20*time.Minute, time.Minute).
				Runners(func(r *v1alpha1.RunnersSpec) {
					r.Image = "registry.example/spanbench:dev"
					r.ServiceAccountName = "spanner-wi"
					r.Region = "asia-northeast1"
					r.Zone = "asia-northeast1-b"
					r.NodeSelector = map[string]v1alpha1.LabelValue{"pool": "bench"}
					r.Tolerations = []v1alpha1.Toleration{{Key: "dedicated", Operator: "Equal", Value: "bench", Effect: "NoSchedule"}}
					r.Resources = v1alpha1.RunnerResources{
						Requests: &v1alpha1.ResourceQuantities{CPU: ptr.To(intstr.FromInt32(2)), Memory: ptr.To(intstr.FromString("1Gi"))},
						Limits:   &v1alpha1.ResourceQuantities{Memory: ptr.To(intstr.FromString("1Gi"))},
					}
				}).Obj(),
			cfg: RunnerConfig{
				Image:            "ghcr.io/spanbench/spanbench:v0.1.0",
				ImagePullPolicy:  corev1.PullIfNotPresent,
				MetricsPort:      8080,
				TTLAfterFinished: ptr.To[int32](3600),
				StartupGrace:     10 * time.Second,
			},
			want: &batchv1.Job{
				ObjectMeta: metav1.ObjectMeta{Name: "multi-runners", Namespace: "bench", Labels: builderRunLabels("multi")},
				Spec: batchv1.JobSpec{
					CompletionMode:       ptr.To(batchv1.IndexedCompletion),
					Completions:          ptr.To[int32](3),
					Parallelism:          ptr.To[int32](3),
					BackoffLimitPerIndex: ptr.To[int32](0),
					MaxFailedIndexes:     ptr.To[int32](3),
					// runnersReady 2m + grace 10s + duration 10m + overrun 1m
					ActiveDeadlineSeconds:   ptr.To[int64](790),
					TTLSecondsAfterFinished: ptr.To[int32](3600),
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{
							Labels: builderPodLabels("multi"),
							Annotations: map[string]string{
								"prometheus.io/scrape": "true",
								"prometheus.io/port":   "8080",
								"prometheus.io/path":   "/metrics",
							},
						},
						Spec: corev1.PodSpec{
							ServiceAccountName: "spanner-wi",
							RestartPolicy:      corev1.RestartPolicyNever,
							SecurityContext:    restrictedPodSecurity(),
							Containers: []corev1.Container{{
								Name:            "runner",
								Image:           "registry.example/spanbench:dev",
								ImagePullPolicy: corev1.PullIfNotPresent,
								Command:         []string{"/spanbench-runner"},
								Args:            []string{"runner", "--run", "multi", "--metrics-addr", ":8080", "--ready-timeout", "2m10s"},
								Env: append(downwardEnv(), corev1.EnvVar{
									Name: "GOOGLE_APPLICATION_CREDENTIALS", Value: "/var/run/secrets/spanbench/key.json",
								}),
								Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
								Resources: corev1.ResourceRequirements{
									Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi")},
									Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
								},
								VolumeMounts: []corev1.VolumeMount{
									tmpMount(),
									{Name: "credentials", MountPath: "/var/run/secrets/spanbench", ReadOnly: true},
								},
								SecurityContext: restrictedContainerSecurity(),
							}},
							Volumes: []corev1.Volume{
								tmpVolume(),
								{Name: "credentials", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
									SecretName:  "spanner-key",
									Items:       []corev1.KeyToPath{{Key: "sa.json", Path: "key.json"}},
									DefaultMode: ptr.To[int32](0o440),
								}}},
							},
							Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
								RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
									NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
										{Key: "topology.kubernetes.io/region", Operator: corev1.NodeSelectorOpIn, Values: []string{"asia-northeast1"}},
										{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"asia-northeast1-b"}},
									}}},
								},
							}},
							NodeSelector: map[string]string{"pool": "bench"},
							Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "bench", Effect: corev1.TaintEffectNoSchedule}},
						},
					},
				},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := NewRunnerJob(tc.run, tc.cfg)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("NewRunnerJob (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewRunnerJobCredentialsKeyDefaultsToKeyJSON(t *testing.T) {
	run := runtest.Bare("r").Credentials("spanner-key", "").Obj()
	job := NewRunnerJob(run, RunnerConfig{Image: "img"})

	want := &corev1.SecretVolumeSource{
		SecretName:  "spanner-key",
		Items:       []corev1.KeyToPath{{Key: "key.json", Path: "key.json"}},
		DefaultMode: ptr.To[int32](0o440),
	}
	var got *corev1.SecretVolumeSource
	for _, v := range job.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			got = v.Secret
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("credentials volume with an empty key (-want +got):\n%s", diff)
	}
}

func TestNewRunnerJobRegionOnlyRequiresOnlyTheRegion(t *testing.T) {
	run := runtest.Bare("r").Runners(func(r *v1alpha1.RunnersSpec) { r.Region = "us-central1" }).Obj()
	got := NewRunnerJob(run, RunnerConfig{Image: "img"}).Spec.Template.Spec.Affinity
	want := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: "topology.kubernetes.io/region", Operator: corev1.NodeSelectorOpIn, Values: []string{"us-central1"}},
			}}},
		},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("affinity for a region alone (-want +got):\n%s", diff)
	}
}

// The reconciler may keep a built Job around while the run (from the cache)
// or the config are reused: the Job must share no memory with either.
func TestNewRunnerJobSharesNoMemoryWithItsInputs(t *testing.T) {
	run := runtest.Bare("r").Runners(func(r *v1alpha1.RunnersSpec) {
		r.NodeSelector = map[string]v1alpha1.LabelValue{"pool": "bench"}
		r.Tolerations = []v1alpha1.Toleration{{Key: "dedicated", Operator: "Exists"}}
		r.Resources.Limits = &v1alpha1.ResourceQuantities{CPU: ptr.To(intstr.FromString("1"))}
	}).Obj()
	cfg := RunnerConfig{Image: "img", TTLAfterFinished: ptr.To[int32](60)}
	job := NewRunnerJob(run, cfg)
	before := job.DeepCopy()

	run.Spec.Runners.NodeSelector["pool"] = "other"
	run.Spec.Runners.Tolerations[0].Key = "other"
	run.Spec.Runners.Resources.Limits.CPU.StrVal = "8"
	*cfg.TTLAfterFinished = 1

	if diff := cmp.Diff(before, job); diff != "" {
		t.Errorf("changing the run or config after the build changed the Job (-before +after):\n%s", diff)
	}
}

func TestRunnerJobActiveDeadline(t *testing.T) {
	tests := []struct {
		name string
		run  *v1alpha1.BenchmarkRun
		cfg  RunnerConfig
		want time.Duration
	}{
		{
			name: "defaults: runnersReady 10m, overrun 5m around a 10m workload; the load is the loader Job's",
			run:  runtest.Bare("r").Obj(),
			want: 10*time.Minute + 10*time.Minute + 5*time.Minute,
		},
		{
			name: "the startup grace is allowed for",
			run:  runtest.Bare("r").Obj(),
			cfg:  RunnerConfig{StartupGrace: 45 * time.Second},
			want: 10*time.Minute + 45*time.Second + 10*time.Minute + 5*time.Minute,
		},
		{
			name: "a stepped load counts the sum of its steps",
			run: func() *v1alpha1.BenchmarkRun {
				r := runtest.Bare("r").Deadlines(time.Minute, 2*time.Minute, 3*time.Minute).Obj()
				r.Spec.Workload.Duration = nil
				r.Spec.Workload.Load = v1alpha1.LoadSpec{Steps: []v1alpha1.RateStep{
					{Rate: 100, Duration: metav1.Duration{Duration: 5 * time.Minute}},
					{Rate: 200, Duration: metav1.Duration{Duration: 7 * time.Minute}},
				}}
				return r
			}(),
			want: time.Minute + 12*time.Minute + 3*time.Minute,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := runnerJobActiveDeadline(tc.run, tc.cfg); got != tc.want {
				t.Errorf("runnerJobActiveDeadline = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCeilSecondsNeverCutsADeadlineShort(t *testing.T) {
	for d, want := range map[time.Duration]int64{
		0:                                   0,
		time.Second:                         1,
		time.Second + time.Nanosecond:       2,
		90*time.Second - time.Millisecond:   90,
		time.Hour + 500*time.Millisecond:    3601,
		10*time.Minute + 30*time.Second + 0: 630,
	} {
		if got := ceilSeconds(d); got != want {
			t.Errorf("ceilSeconds(%v) = %d, want %d", d, got, want)
		}
	}
}

func TestRunnerRegion(t *testing.T) {
	tests := []struct {
		name         string
		region, zone string
		want         string
	}{
		{name: "unset is unknown", want: ""},
		{name: "the region as given", region: "asia-northeast1", want: "asia-northeast1"},
		{name: "the region wins over the zone", region: "asia-northeast1", zone: "us-central1-a", want: "asia-northeast1"},
		{name: "the zone's region", zone: "asia-northeast1-b", want: "asia-northeast1"},
		{name: "a zone without a dash says nothing", zone: "local", want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := runtest.Bare("r").Runners(func(r *v1alpha1.RunnersSpec) { r.Region, r.Zone = tc.region, tc.zone }).Obj()
			if got := RunnerRegion(run); got != tc.want {
				t.Errorf("RunnerRegion(region %q, zone %q) = %q, want %q", tc.region, tc.zone, got, tc.want)
			}
		})
	}
}
