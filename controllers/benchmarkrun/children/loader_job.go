package children

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// LoaderRetries is how often the loader Job retries one index (slice)
// before the run fails: loads are idempotent upserts, so a retry is safe,
// and a node drained or a pod evicted mid-load should not cost the run.
const LoaderRetries int32 = 3

// loaderJobActiveDeadline is the loader Job's backstop deadline: the load
// stage's, which the controller enforces itself while it runs.
func loaderJobActiveDeadline(run *v1alpha1.BenchmarkRun) time.Duration {
	return run.Spec.Deadlines.Resolve().Load
}

// NewLoaderJob builds the run's loaders: an Indexed Job of
// dataset.loaderPods pods, all at once, pod i loading slice i of the key
// space (`spanbench runner --load`) and reporting in its loader ConfigMap.
// It runs the runners' image, service account, placement and resources:
// loaders near the instance load fastest, and the runners' node pool is
// sized for Spanner clients. No metrics port: the loaders' progress is in
// the run's status.
func NewLoaderJob(run *v1alpha1.BenchmarkRun, cfg RunnerConfig) *batchv1.Job {
	tmpl := podTemplate(run, cfg, ComponentLoader, []string{"runner", "--load", "--run", run.Name})
	return indexedJob(run, v1alpha1.LoaderJobName(run), run.LoaderPods(), LoaderRetries, loaderJobActiveDeadline(run), cfg, tmpl)
}
