package children

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/runtest"
)

// TestNewLoaderJob: the loader Job runs dataset.loaderPods indexed pods of
// `spanbench runner --load`, retries each slice, is bounded by the load
// deadline, and serves no metrics.
func TestNewLoaderJob(t *testing.T) {
	run := runtest.Bare("nightly").Replicas(2).Deadlines(time.Minute, 40*time.Minute, time.Minute).Obj()
	run.Spec.Workload.Dataset.LoaderPods = ptr.To[int32](3)
	job := NewLoaderJob(run, RunnerConfig{Image: "spanbench:v1", TTLAfterFinished: ptr.To[int32](60)})

	if job.Name != "nightly-loader" || job.Namespace != "bench" || !cmp.Equal(job.Labels, builderRunLabels("nightly")) {
		t.Errorf("Job %s/%s labelled %v; want bench/nightly-loader with the run's labels", job.Namespace, job.Name, job.Labels)
	}
	want := batchv1.JobSpec{
		CompletionMode:          ptr.To(batchv1.IndexedCompletion),
		Completions:             ptr.To[int32](3),
		Parallelism:             ptr.To[int32](3),
		BackoffLimitPerIndex:    ptr.To(LoaderRetries),
		MaxFailedIndexes:        ptr.To[int32](3),
		ActiveDeadlineSeconds:   ptr.To[int64](2400),
		TTLSecondsAfterFinished: ptr.To[int32](60),
	}
	got := job.Spec
	got.Template = corev1.PodTemplateSpec{}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("loader Job spec (-want +got):\n%s", diff)
	}
	c := job.Spec.Template.Spec.Containers[0]
	if !cmp.Equal(c.Command, []string{"/spanbench-runner"}) || !cmp.Equal(c.Args, []string{"runner", "--load", "--run", "nightly"}) || len(c.Ports) > 0 || len(job.Spec.Template.Annotations) > 0 {
		t.Errorf("loader container args %v, ports %v, annotations %v; want runner --load --run nightly, no metrics", c.Args, c.Ports, job.Spec.Template.Annotations)
	}
	if got := job.Spec.Template.Labels["app.kubernetes.io/component"]; got != "loader" {
		t.Errorf("loader pods are component %q; want loader", got)
	}
	if LoaderRetries < 1 {
		t.Errorf("LoaderRetries = %d; an idempotent load should be retried", LoaderRetries)
	}
}

// TestLoaderPodsAreRunnerPods: loaders run with the runners' image,
// identity, security, credentials and placement; only what they run and
// their metrics differ.
func TestLoaderPodsAreRunnerPods(t *testing.T) {
	run := runtest.Bare("r").Credentials("spanner-key", "sa.json").Runners(func(s *v1alpha1.RunnersSpec) {
		s.Region, s.Zone = "asia-northeast1", "asia-northeast1-b"
		s.NodeSelector = map[string]v1alpha1.LabelValue{"pool": "bench"}
		s.Tolerations = []v1alpha1.Toleration{{Key: "bench", Operator: "Exists"}}
		s.Image = "spanbench:custom"
	}).Obj()
	cfg := RunnerConfig{Image: "spanbench:v1", ImagePullPolicy: corev1.PullNever}
	strip := func(tmpl corev1.PodTemplateSpec) corev1.PodTemplateSpec {
		tmpl = *tmpl.DeepCopy()
		tmpl.Annotations, tmpl.Labels = nil, nil
		tmpl.Spec.Containers[0].Args, tmpl.Spec.Containers[0].Ports = nil, nil
		return tmpl
	}
	runner, loader := NewRunnerJob(run, cfg).Spec.Template, NewLoaderJob(run, cfg).Spec.Template
	if diff := cmp.Diff(strip(runner), strip(loader)); diff != "" {
		t.Errorf("loader pods differ from runner pods beyond args and metrics (-runner +loader):\n%s", diff)
	}
	if loader.Spec.Containers[0].Image != "spanbench:custom" || loader.Spec.SecurityContext == nil || !*loader.Spec.SecurityContext.RunAsNonRoot {
		t.Errorf("loader pod %+v; want the run's image, non-root", loader.Spec)
	}
}
