package benchmarkrun_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
)

// TestRunnerRegionIsWhereTheRunnersRan: status.environment.runnerRegion
// records the regions of the nodes the runner pods were bound to, not the
// region the spec asked for. The spec asks for asia-northeast1; one runner
// lands on a node of another region, so the run ran "mixed".
//
// envtest runs neither the Job controller nor the scheduler, and the
// harness's kubelet plays the runners in this process; so, standing in for
// those two, the scenario creates the Job's pods from its template, bound
// to labelled nodes, while the runners run.
func TestRunnerRegionIsWhereTheRunnersRan(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	tokyo := h.node("tokyo", "asia-northeast1")
	iowa := h.node("iowa", "us-central1")

	run := h.runSpec("region", 2)
	run.Spec.Runners.Region = "asia-northeast1"
	h.create(run)
	runners := h.kubelet(run, 0, 1)
	h.bindRunnerPod(run, 0, tokyo)
	h.bindRunnerPod(run, 1, iowa)
	got := h.finished(run, 90*time.Second)
	runners.Wait()

	if c := h.condition(got, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionTrue {
		t.Fatalf("run ended %s/%s: %s", c.Status, c.Reason, c.Message)
	}
	if env := got.Status.Environment; env == nil || env.RunnerRegion != v1alpha1.RunnerRegionMixed {
		t.Errorf("status.environment = %+v; want children.RunnerRegion %q: the runners ran on nodes in asia-northeast1 and us-central1",
			env, v1alpha1.RunnerRegionMixed)
	}
}

// node creates a node labelled with region, named after the scenario's
// namespace (nodes are cluster-wide), and deletes it after the scenario.
func (h *harness) node(name, region string) string {
	h.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: h.ns + "-" + name,
		Labels: map[string]string{corev1.LabelTopologyRegion: region}}}
	if err := h.c.Create(context.Background(), n); err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { _ = h.c.Delete(context.Background(), n) })
	return n.Name
}

// bindRunnerPod creates the pod the runner Job's index would have, with
// the Job's pod template, as bound by the scheduler to node.
func (h *harness) bindRunnerPod(run *v1alpha1.BenchmarkRun, index int, node string) {
	h.t.Helper()
	job := h.job(v1alpha1.RunnerJobName(run))
	if job == nil {
		h.t.Fatal("the runner Job is gone before its pods were made")
	}
	tmpl := job.Spec.Template.DeepCopy()
	p := &corev1.Pod{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}
	p.Name, p.Namespace = fmt.Sprintf("%s-%d", job.Name, index), h.ns
	p.Spec.NodeName = node
	if err := h.c.Create(context.Background(), p); err != nil {
		h.t.Fatal(err)
	}
}
