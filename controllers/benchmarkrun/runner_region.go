package benchmarkrun

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun/children"
)

// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch

// ranInRegion is where a run's runners ran: the
// topology.kubernetes.io/region of the nodes their pods were bound to, not
// the region the spec asked for, which a node selector or a cluster
// without such nodes may not have honoured. It is read while the pods
// still exist (aggregation, before they are cleaned up). Only the nodes'
// metadata is read, so the manager caches node labels, not whole nodes.
func (r *BenchmarkRunReconciler) ranInRegion(ctx context.Context, run *v1alpha1.BenchmarkRun) string {
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(run.Namespace),
		client.MatchingLabels{v1alpha1.LabelRun: run.Name, children.LabelComponent: children.ComponentRunner}); err != nil {
		log.FromContext(ctx).Error(err, "listing the runner pods for their region")
		return ""
	}
	regions := map[string]string{} // node name -> region, "" when unknown
	for _, p := range pods.Items {
		node := p.Spec.NodeName
		if node == "" {
			continue // never scheduled: it ran nowhere
		}
		if _, seen := regions[node]; !seen {
			regions[node] = r.nodeRegion(ctx, node)
		}
	}
	return commonRegion(regions)
}

// nodeRegion is a node's region label, "" when the node is gone, unlabelled
// or unreadable.
func (r *BenchmarkRunReconciler) nodeRegion(ctx context.Context, name string) string {
	node := &metav1.PartialObjectMetadata{}
	node.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Node"))
	if err := r.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		if !apierrors.IsNotFound(err) {
			log.FromContext(ctx).Error(err, "reading a runner's node for its region", "node", name)
		}
		return ""
	}
	return node.GetLabels()[corev1.LabelTopologyRegion]
}

// commonRegion reduces the runners' nodes' regions (by node name) to one
// value: the region they share; v1alpha1.RunnerRegionMixed when two of them
// differ; "" (unknown) when there are none or one node's region is unknown
// and the known ones agree, since that node may be anywhere.
func commonRegion(byNode map[string]string) string {
	known := map[string]bool{}
	unknown := false
	for _, region := range byNode {
		if region == "" {
			unknown = true
			continue
		}
		known[region] = true
	}
	switch {
	case len(known) > 1:
		return v1alpha1.RunnerRegionMixed
	case len(known) == 0 || unknown:
		return ""
	}
	for region := range known {
		return region // the only one
	}
	return ""
}
