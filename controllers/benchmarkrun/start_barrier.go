package benchmarkrun

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/statuswrite"
	"github.com/spanbench/spanbench/runner/protocol"
)

// awaitRunners creates the runners and holds them at the start barrier:
// once every runner reported ready, it publishes one start time a little
// ahead, for all of them. The dataset is loaded by then (awaitLoad).
func (r *BenchmarkRunReconciler) awaitRunners(ctx context.Context, run *v1alpha1.BenchmarkRun, w *v1alpha1.WorkloadSpec, outbox *statuswrite.Outbox) (ctrl.Result, error) {
	if ok, err := r.ensureChildren(ctx, run, w, outbox, r.ensureRunnerChildren); !ok {
		return ctrl.Result{}, err
	}
	reports, err := r.readShards(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	if reason, msg := r.runnerProblem(ctx, run, reports); reason != "" {
		r.fail(run, outbox, reason, msg)
		return ctrl.Result{}, nil
	}
	ready := 0
	for _, o := range reports {
		if !o.Ready.IsZero() {
			ready++
		}
	}
	if ready < len(reports) {
		return r.notReadyYet(ctx, run, outbox, ready, len(reports))
	}
	return r.releaseRunners(ctx, run, outbox)
}

// notReadyYet records progress, or fails the run past its deadline.
func (r *BenchmarkRunReconciler) notReadyYet(ctx context.Context, run *v1alpha1.BenchmarkRun, outbox *statuswrite.Outbox, ready, n int) (ctrl.Result, error) {
	msg := fmt.Sprintf("%d of %d runners ready", ready, n)
	run.SetCondition(v1alpha1.ConditionRunnersReady, metav1.ConditionFalse, v1alpha1.ReasonRunnersNotReady, msg, r.now())
	requeue, field, late := r.untilDeadline(run)
	if !late {
		return ctrl.Result{RequeueAfter: requeue}, nil
	}
	reason := v1alpha1.ReasonRunnersNotReady
	if r.anyUnschedulable(ctx, run) {
		reason = v1alpha1.ReasonRunnersUnschedulable
	}
	r.fail(run, outbox, reason, fmt.Sprintf("only %s within spec.deadlines.%s; check the runner pods' events", msg, field))
	return ctrl.Result{}, nil
}

// releaseRunners publishes the start.
func (r *BenchmarkRunReconciler) releaseRunners(ctx context.Context, run *v1alpha1.BenchmarkRun, outbox *statuswrite.Outbox) (ctrl.Result, error) {
	start, err := r.publishStart(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	run.Status.StartTime = &metav1.Time{Time: start}
	msg := fmt.Sprintf("all %d runners ready; the load starts at %s%s", run.Replicas(), start.UTC().Format(time.RFC3339Nano), staleWaitNote(run))
	run.SetCondition(v1alpha1.ConditionRunnersReady, metav1.ConditionTrue, v1alpha1.ReasonAllRunnersReady, msg, r.now())
	outbox.Normal(v1alpha1.ReasonAllRunnersReady, msg)
	return ctrl.Result{RequeueAfter: max(start.Add(run.Spec.Workload.TotalDuration()).Sub(r.now()), time.Second)}, nil
}

// DefaultStartupGrace is how far ahead the start time is published when
// RunnerConfig.StartupGrace is unset: runners poll the control ConfigMap
// every 250 ms, so a few seconds let every one of them see it in time.
const DefaultStartupGrace = 3 * time.Second

// publishStart writes the common start time into the control ConfigMap,
// once: a restarted manager reuses the time already published.
func (r *BenchmarkRunReconciler) publishStart(ctx context.Context, run *v1alpha1.BenchmarkRun) (time.Time, error) {
	cm := &corev1.ConfigMap{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: protocol.ControlConfigMapName(run.Name)}, cm); err != nil {
		return time.Time{}, err
	}
	if start, ok, err := protocol.DecodeStart(cm.Data); ok || err != nil {
		return start, err
	}
	grace := r.Runner.StartupGrace
	if grace <= 0 {
		grace = DefaultStartupGrace
	}
	// Stale reads must not start before they can see the dataset the run
	// loaded; the runners simply wait for the later start.
	start := r.now().Add(grace)
	if ready := staleReadsReady(run); ready.After(start) {
		start = ready
	}
	start = start.Add(time.Millisecond - 1).Truncate(time.Millisecond) // never before ready
	before := cm.DeepCopy()
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	maps.Copy(cm.Data, protocol.EncodeStart(start))
	// Optimistic lock: two managers (or a stale cache) never publish two
	// different start times.
	if err := r.ownWriter().Patch(ctx, cm, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return time.Time{}, err
	}
	return start, nil
}

// controlRecord is the run's control map as one reconcile reads it, once
// (readControl), and the start time it publishes: both the live progress
// and the capacity search need them.
type controlRecord struct {
	// cm is the map; nil when it could not be read.
	cm *corev1.ConfigMap
	// start is the published start, the one the runners got and put in
	// their reports: status.startTime keeps whole seconds only
	// (metav1.Time), so a report never matches it to the millisecond.
	start time.Time
	// err says why there is no start: the map could not be read, holds
	// none yet, or holds one that does not decode.
	err error
}

// readControl reads the run's control map and decodes its start time.
func (r *BenchmarkRunReconciler) readControl(ctx context.Context, run *v1alpha1.BenchmarkRun) controlRecord {
	cm := &corev1.ConfigMap{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: protocol.ControlConfigMapName(run.Name)}, cm); err != nil {
		return controlRecord{err: err}
	}
	start, published, err := protocol.DecodeStart(cm.Data)
	if err == nil && !published {
		err = fmt.Errorf("no %s published", protocol.KeyStartTime)
	}
	return controlRecord{cm: cm, start: start, err: err}
}

// runnerProblem finds a reason to fail a run before its start: a runner
// that reported failure, a runner index the Job gave up on, or an image
// that cannot be pulled.
func (r *BenchmarkRunReconciler) runnerProblem(ctx context.Context, run *v1alpha1.BenchmarkRun, reports []shardReport) (reason, message string) {
	for _, o := range reports {
		switch {
		case o.err != nil:
			return v1alpha1.ReasonRunnerFailed, fmt.Sprintf("runner %d's ConfigMap %s holds no report a spanbench runner writes: %v",
				o.index, protocol.ShardConfigMapName(run.Name, o.index), o.err)
		case o.State == protocol.StateFailed:
			return v1alpha1.ReasonRunnerFailed, fmt.Sprintf("runner %d failed before the start: %s", o.index, o.Message)
		}
	}
	if failed := r.failedIndexes(ctx, run); len(failed) > 0 {
		return v1alpha1.ReasonRunnerFailed, fmt.Sprintf("runner pods %v failed before the start; see their logs", keys(failed))
	}
	if msg := r.imagePullProblem(ctx, run); msg != "" {
		return v1alpha1.ReasonRunnerImagePullFailed, msg
	}
	return "", ""
}

// failedIndexes are the runner indexes whose pod failed (the Job does not
// retry them: a late restart would miss the common start).
func (r *BenchmarkRunReconciler) failedIndexes(ctx context.Context, run *v1alpha1.BenchmarkRun) map[int]bool {
	job := &batchv1.Job{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: v1alpha1.RunnerJobName(run)}, job); err != nil || job.Status.FailedIndexes == nil {
		return nil
	}
	return parseIndexes(*job.Status.FailedIndexes)
}

// parseIndexes reads the Job API's index list, e.g. "1,3-5".
func parseIndexes(s string) map[int]bool {
	out := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil {
				continue
			}
		}
		for i := a; i <= b && i-a < 100_000; i++ {
			out[i] = true
		}
	}
	return out
}

func keys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func (r *BenchmarkRunReconciler) runnerPods(ctx context.Context, run *v1alpha1.BenchmarkRun) []corev1.Pod {
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(run.Namespace), client.MatchingLabels{v1alpha1.LabelRun: run.Name}); err != nil {
		return nil
	}
	return pods.Items
}

// imagePullProblem explains a runner image that cannot be pulled.
func (r *BenchmarkRunReconciler) imagePullProblem(ctx context.Context, run *v1alpha1.BenchmarkRun) string {
	for _, p := range r.runnerPods(ctx, run) {
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && (w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff" || w.Reason == "InvalidImageName") {
				return fmt.Sprintf("runner image %s cannot be pulled (%s: %s); set spec.runners.image or the manager's --runner-image", cs.Image, w.Reason, w.Message)
			}
		}
	}
	return ""
}

func (r *BenchmarkRunReconciler) anyUnschedulable(ctx context.Context, run *v1alpha1.BenchmarkRun) bool {
	for _, p := range r.runnerPods(ctx, run) {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				return true
			}
		}
	}
	return false
}
