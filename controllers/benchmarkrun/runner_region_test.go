package benchmarkrun

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun/children"
)

func regionNode(name, region string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if region != "" {
		n.Labels = map[string]string{corev1.LabelTopologyRegion: region}
	}
	return n
}

func boundPod(run, name, component, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench",
			Labels: map[string]string{v1alpha1.LabelRun: run, children.LabelComponent: component}},
		Spec: corev1.PodSpec{NodeName: node},
	}
}

// TestRanInRegionReadsTheRunnersNodes checks status.environment.runnerRegion
// against the API doc: the region label of the nodes the run's runner pods
// were bound to, "mixed" when they differ, unknown ("") when a node is
// unlabelled or gone. The API server is controller-runtime's fake client:
// only the reconciler's reads are under test here (the envtest scenario
// TestRunnerRegionIsWhereTheRunnersRan covers the real one).
func TestRanInRegionReadsTheRunnersNodes(t *testing.T) {
	nodes := []client.Object{
		regionNode("tokyo-a", "asia-northeast1"), regionNode("tokyo-b", "asia-northeast1"),
		regionNode("iowa-a", "us-central1"), regionNode("bare", ""),
	}
	for _, tc := range []struct {
		name string
		pods []client.Object
		want string
	}{
		{"runners on two nodes of one region", []client.Object{
			boundPod("r", "r-0", children.ComponentRunner, "tokyo-a"), boundPod("r", "r-1", children.ComponentRunner, "tokyo-b"),
		}, "asia-northeast1"},
		{"runners in two regions", []client.Object{
			boundPod("r", "r-0", children.ComponentRunner, "tokyo-a"), boundPod("r", "r-1", children.ComponentRunner, "iowa-a"),
		}, v1alpha1.RunnerRegionMixed},
		{"a runner on an unlabelled node", []client.Object{
			boundPod("r", "r-0", children.ComponentRunner, "tokyo-a"), boundPod("r", "r-1", children.ComponentRunner, "bare"),
		}, ""},
		{"two regions and an unlabelled node", []client.Object{
			boundPod("r", "r-0", children.ComponentRunner, "tokyo-a"), boundPod("r", "r-1", children.ComponentRunner, "iowa-a"),
			boundPod("r", "r-2", children.ComponentRunner, "bare"),
		}, v1alpha1.RunnerRegionMixed},
		{"a runner on a node that is gone", []client.Object{
			boundPod("r", "r-0", children.ComponentRunner, "tokyo-a"), boundPod("r", "r-1", children.ComponentRunner, "deleted"),
		}, ""},
		{"loaders, unscheduled runners and other runs' runners do not count", []client.Object{
			boundPod("r", "r-0", children.ComponentRunner, "tokyo-a"), boundPod("r", "r-1", children.ComponentRunner, ""),
			boundPod("r", "r-loader-0", children.ComponentLoader, "iowa-a"), boundPod("other", "other-0", children.ComponentRunner, "iowa-a"),
		}, "asia-northeast1"},
		{"no runner pod", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(nodes...).WithObjects(tc.pods...).Build()
			r := &BenchmarkRunReconciler{Client: c}
			run := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "bench"}}
			if got := r.ranInRegion(context.Background(), run); got != tc.want {
				t.Errorf("runner region = %q, want %q", got, tc.want)
			}
		})
	}
}
