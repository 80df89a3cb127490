package children

import (
	"path"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/runner/protocol/bucket"
)

// RunnerConfig is the operator-level part of every runner Job, set by the
// manager's flags. A run's spec overrides Image (spec.runners.image).
type RunnerConfig struct {
	// Image is the spanbench image the runners run, unless the run names
	// its own. It must not be empty.
	Image string
	// ImagePullPolicy is the runner container's pull policy; empty leaves
	// the API server's default.
	ImagePullPolicy corev1.PullPolicy
	// MetricsPort is where runners serve live Prometheus metrics; 0 means
	// DefaultRunnerMetricsPort.
	MetricsPort int32
	// TTLAfterFinished is the runner Job's ttlSecondsAfterFinished: how long
	// a finished Job and its pods (and their logs) are kept. nil keeps them
	// until the run is deleted.
	TTLAfterFinished *int32
	// StartupGrace is the time between the last runner reporting ready and
	// the common start time the controller sets, so that every runner reads
	// the start time before it comes. The runner Job's deadline allows for
	// it.
	StartupGrace time.Duration
	// Results names the results bucket to the runners; its zero value
	// (no bucket) keeps their results in ConfigMaps.
	Results ResultsStore
}

// ResultsStore is the runners' side of the results bucket.
type ResultsStore struct {
	// URL is the bucket's (bucket.ParseURL's): the runners get it as
	// --results-bucket, with the run's UID.
	URL string
	// Volume, for a file:// bucket, is what the runner pods mount at the
	// URL's directory: the same directory the manager has mounted there
	// (a hostPath on a local cluster, a ReadWriteMany claim in each run's
	// namespace elsewhere). nil for gs://.
	Volume *corev1.VolumeSource
	// MountPath is the directory the volume is mounted at (the URL's).
	MountPath string
}

// resultsVolume is the name of the results bucket's volume.
const resultsVolume = "results"

// args are the runner's flags that name the bucket.
func (s ResultsStore) args(run *v1alpha1.BenchmarkRun) []string {
	if s.URL == "" {
		return nil
	}
	return []string{"--results-bucket", s.URL, "--run-uid", string(run.UID)}
}

// mount adds the bucket's volume to a runner pod, when it has one: only
// the run's own directory of it (bucket.RunPrefix, as a subPath), at the
// same place under MountPath, so that a runner can neither read nor write
// another run's objects. The manager makes that directory, owned by the
// runner's uid, before the Job (prepareRunDir).
func (s ResultsStore) mount(spec *corev1.PodSpec, run *v1alpha1.BenchmarkRun) {
	if s.URL == "" || s.Volume == nil {
		return
	}
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: resultsVolume, VolumeSource: *s.Volume.DeepCopy()})
	dir := strings.TrimSuffix(bucket.RunPrefix(run.Namespace, run.Name, string(run.UID)), "/")
	c := &spec.Containers[0]
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: resultsVolume, MountPath: path.Join(s.MountPath, dir), SubPath: dir})
}

// DefaultRunnerMetricsPort is the runners' metrics port when
// RunnerConfig.MetricsPort is 0.
const DefaultRunnerMetricsPort int32 = 9090

// Fixed parts of the runner pod.
const (
	// runnerContainerName is the runner pod's only container.
	runnerContainerName = "runner"
	// runnerBinary is what runner and loader pods run: the image's
	// runner-only build (the Dockerfile's /spanbench-runner), without the
	// manager's and the tools' code, so a runner's memory is the load's.
	runnerBinary = "/spanbench-runner"
	// runnerMetricsPortName names the container port Prometheus scrapes.
	runnerMetricsPortName = "metrics"
	// RunnerUID is the non-root user and group the runner runs as (the
	// distroless "nonroot" user).
	RunnerUID int64 = 65532
	// runnerCredentialsVolume is the volume of the credentials Secret.
	runnerCredentialsVolume = "credentials"
	// runnerCredentialsDir is where the credentials volume is mounted.
	runnerCredentialsDir = "/var/run/secrets/spanbench"
	// runnerCredentialsFile is the key file's name in runnerCredentialsDir,
	// whatever the Secret's key is called, so that the path is fixed.
	runnerCredentialsFile = "key.json"
	// defaultCredentialsKey is spec.target.credentials.key when empty.
	defaultCredentialsKey = "key.json"
	// runnerTmpVolume is the writable /tmp under a read-only root.
	runnerTmpVolume = "tmp"
	// LabelComponent tells runner pods apart from other spanbench pods.
	LabelComponent = "app.kubernetes.io/component"
	// ComponentRunner is LabelComponent's value on runner pods.
	ComponentRunner = "runner"
	// ComponentLoader is LabelComponent's value on loader pods.
	ComponentLoader = "loader"
	// Node labels the runners are placed by (spec.runners.region, zone).
	labelTopologyRegion = "topology.kubernetes.io/region"
	labelTopologyZone   = "topology.kubernetes.io/zone"
)

// metricsPort is MetricsPort, defaulted.
func (c RunnerConfig) metricsPort() int32 {
	if c.MetricsPort == 0 {
		return DefaultRunnerMetricsPort
	}
	return c.MetricsPort
}

// RunnerRegion is where a run's runners are placed, recorded with the
// results (shard.Control.Region): spec.runners.region, else the region of
// spec.runners.zone (a Google Cloud zone is its region plus "-<letter>"),
// else empty, unknown before the pods are scheduled.
func RunnerRegion(run *v1alpha1.BenchmarkRun) string {
	r := run.Spec.Runners
	if r.Region != "" {
		return r.Region
	}
	if i := strings.LastIndexByte(r.Zone, '-'); i > 0 {
		return r.Zone[:i]
	}
	return ""
}

// runnerJobActiveDeadline bounds how long the runner Job may be active: the
// runners take runnersReady to become ready, wait StartupGrace for the
// common start, run the workload and overrun. It is a backstop for when
// the controller is not there to enforce the stage deadlines itself, so it
// errs long: cutting a run that is within its deadlines would be worse
// than a hung runner living a little longer. The dataset is loaded before
// the runner Job exists (the loader Job), so the load is not in it.
func runnerJobActiveDeadline(run *v1alpha1.BenchmarkRun, cfg RunnerConfig) time.Duration {
	d := run.Spec.Deadlines.Resolve()
	return v1alpha1.SaturatingSum(d.RunnersReady, cfg.StartupGrace, run.Spec.Workload.TotalDuration(), d.Overrun)
}

// runnerReadyTimeout is how long a runner waits for the start time after
// reporting ready: the slowest runner may take the whole runnersReady
// stage to get ready, and then comes the grace.
func runnerReadyTimeout(run *v1alpha1.BenchmarkRun, cfg RunnerConfig) time.Duration {
	d := run.Spec.Deadlines.Resolve()
	return d.RunnersReady + cfg.StartupGrace
}

// NewRunnerJob builds the run's runners: an Indexed Job of replicas pods,
// all running at once (the start barrier needs every shard up), pod i
// serving shard i (the Job controller gives it JOB_COMPLETION_INDEX).
//
// Failure policy: a runner that fails is not retried (backoffLimitPerIndex
// 0). A replacement would start after the common start time and send its
// shard of the load late, skewing every merged figure; and the shard's
// state in its ConfigMap already tells the controller what happened. The
// other shards keep going (maxFailedIndexes = replicas, so the Job is never
// failed early for a failed index) and the run ends with partial results.
func NewRunnerJob(run *v1alpha1.BenchmarkRun, cfg RunnerConfig) *batchv1.Job {
	replicas := run.Replicas()
	port := cfg.metricsPort()
	args := []string{"runner", "--run", run.Name, "--metrics-addr", ":" + strconv.Itoa(int(port)),
		"--ready-timeout", runnerReadyTimeout(run, cfg).String()}
	args = append(args, cfg.Results.args(run)...)
	tmpl := podTemplate(run, cfg, ComponentRunner, args)
	cfg.Results.mount(&tmpl.Spec, run)
	tmpl.Annotations = map[string]string{
		"prometheus.io/scrape": "true",
		"prometheus.io/port":   strconv.Itoa(int(port)),
		"prometheus.io/path":   "/metrics",
	}
	tmpl.Spec.Containers[0].Ports = []corev1.ContainerPort{{
		Name:          runnerMetricsPortName,
		ContainerPort: port,
		Protocol:      corev1.ProtocolTCP,
	}}
	return indexedJob(run, v1alpha1.RunnerJobName(run), replicas, 0, runnerJobActiveDeadline(run, cfg), cfg, tmpl)
}

// indexedJob is an Indexed Job of n pods, all running at once, pod i
// given index i (JOB_COMPLETION_INDEX), each index retried up to retries
// times. maxFailedIndexes = n: a failed index never fails the Job early,
// the controller decides what it means for the run. deadline becomes
// activeDeadlineSeconds, a backstop for when the controller is away.
func indexedJob(run *v1alpha1.BenchmarkRun, name string, n, retries int32, deadline time.Duration, cfg RunnerConfig, tmpl corev1.PodTemplateSpec) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: run.Namespace,
			Labels:    v1alpha1.RunLabels(run),
		},
		Spec: batchv1.JobSpec{
			CompletionMode:          ptr.To(batchv1.IndexedCompletion),
			Completions:             ptr.To(n),
			Parallelism:             ptr.To(n),
			BackoffLimitPerIndex:    ptr.To(retries),
			MaxFailedIndexes:        ptr.To(n),
			ActiveDeadlineSeconds:   ptr.To(ceilSeconds(deadline)),
			TTLSecondsAfterFinished: CopyInt32(cfg.TTLAfterFinished),
			Template:                tmpl,
		},
	}
}

// podTemplate is the pod of a run's runners and loaders: the spanbench
// image's runner binary running args as component, placed and sized as spec.runners says.
//
// The pod runs restricted (Pod Security Standards): non-root, no privilege
// escalation, no capabilities, read-only root with an emptyDir at /tmp,
// RuntimeDefault seccomp. Credentials, when the run references a Secret,
// are only mounted — that key of that Secret, read-only — and named by
// GOOGLE_APPLICATION_CREDENTIALS; no other object ever carries them.
func podTemplate(run *v1alpha1.BenchmarkRun, cfg RunnerConfig, component string, args []string) corev1.PodTemplateSpec {
	spec := &run.Spec.Runners
	image := cfg.Image
	if spec.Image != "" {
		image = spec.Image
	}
	labels := v1alpha1.RunLabels(run)
	labels[LabelComponent] = component
	volumes, mounts, env := podEnvironment(run)
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{
			ServiceAccountName: RunnerServiceAccountName(run),
			RestartPolicy:      corev1.RestartPolicyNever,
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				RunAsUser:      ptr.To(RunnerUID),
				RunAsGroup:     ptr.To(RunnerUID),
				FSGroup:        ptr.To(RunnerUID),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:            runnerContainerName,
				Image:           image,
				ImagePullPolicy: cfg.ImagePullPolicy,
				Command:         []string{runnerBinary},
				Args:            args,
				Env:             env,
				Resources:       spec.Resources.Requirements(),
				VolumeMounts:    mounts,
				SecurityContext: &corev1.SecurityContext{
					RunAsNonRoot:             ptr.To(true),
					RunAsUser:                ptr.To(RunnerUID),
					ReadOnlyRootFilesystem:   ptr.To(true),
					AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
			Volumes:      volumes,
			Affinity:     runnerAffinity(spec),
			NodeSelector: spec.PodNodeSelector(),
			Tolerations:  spec.PodTolerations(),
		},
	}
}

// podEnvironment is the pod's writable /tmp, its namespace and name, and
// the credentials Secret's key file when the run references one.
func podEnvironment(run *v1alpha1.BenchmarkRun) ([]corev1.Volume, []corev1.VolumeMount, []corev1.EnvVar) {
	volumes := []corev1.Volume{{
		Name:         runnerTmpVolume,
		VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}},
	}}
	mounts := []corev1.VolumeMount{{Name: runnerTmpVolume, MountPath: "/tmp"}}
	env := []corev1.EnvVar{
		{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
		}},
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"},
		}},
	}
	cred := run.Spec.Target.Credentials
	if cred == nil {
		return volumes, mounts, env
	}
	key := cred.Key
	if key == "" {
		key = defaultCredentialsKey
	}
	volumes = append(volumes, corev1.Volume{
		Name: runnerCredentialsVolume,
		VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: cred.SecretName,
			// Only the key file, readable by the runner's group (fsGroup)
			// and nobody else.
			Items:       []corev1.KeyToPath{{Key: key, Path: runnerCredentialsFile}},
			DefaultMode: ptr.To[int32](0o440),
		}},
	})
	mounts = append(mounts, corev1.VolumeMount{
		Name:      runnerCredentialsVolume,
		MountPath: runnerCredentialsDir,
		ReadOnly:  true,
	})
	env = append(env, corev1.EnvVar{
		Name:  "GOOGLE_APPLICATION_CREDENTIALS",
		Value: path.Join(runnerCredentialsDir, runnerCredentialsFile),
	})
	return volumes, mounts, env
}

// runnerAffinity requires the nodes of spec.runners.region and zone, so that
// the client side of the measured latency is where the user asked for it
// (next to the leader, or away from it). nil when neither is set.
func runnerAffinity(spec *v1alpha1.RunnersSpec) *corev1.Affinity {
	var exprs []corev1.NodeSelectorRequirement
	if spec.Region != "" {
		exprs = append(exprs, corev1.NodeSelectorRequirement{
			Key: labelTopologyRegion, Operator: corev1.NodeSelectorOpIn, Values: []string{spec.Region},
		})
	}
	if spec.Zone != "" {
		exprs = append(exprs, corev1.NodeSelectorRequirement{
			Key: labelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{spec.Zone},
		})
	}
	if exprs == nil {
		return nil
	}
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: exprs}},
		},
	}}
}

// ceilSeconds rounds d up to whole seconds, so that a deadline is never cut
// short by rounding.
func ceilSeconds(d time.Duration) int64 {
	s := int64(d / time.Second)
	if d%time.Second > 0 {
		s++
	}
	return s
}

// CopyInt32 copies an optional value, so that a built object never shares
// memory with the RunnerConfig it came from.
func CopyInt32(p *int32) *int32 {
	if p == nil {
		return nil
	}
	return ptr.To(*p)
}
