package benchmarkrun

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/runner/protocol"
)

// deleteShardChunks deletes the chunks of the run's shard results once the
// run has ended: the report holds the merged result, and a dense shard's
// chunks are megabytes of etcd each (a run of 100 dense 30-minute shards,
// 1.1 GiB), which would otherwise stay until the run is deleted. It runs
// at wrap-up only, after the ended run's status is stored: a reconcile
// that aggregated but failed to store its status aggregates again, from
// the same chunks. The chunks are found by their run label through the
// uncached reader, metadata only, and only names of this run's chunks are
// deleted, whatever a runner labelled; a chunk a stale list still shows is
// not found, and one it misses is deleted at the next wrap-up or with the
// run. Kept with the runners when the
// operator keeps them.
func (r *BenchmarkRunReconciler) deleteShardChunks(ctx context.Context, run *v1alpha1.BenchmarkRun) error {
	if r.KeepRunners {
		return nil
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
	// ResourceVersion "0": served from the API server's watch cache,
	// filtered there, not read from etcd on every wrap-up.
	if err := r.uncached().List(ctx, list, client.InNamespace(run.Namespace),
		client.MatchingLabels{protocol.LabelShardChunkOfRun: run.Name},
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: "0"}}); err != nil {
		return fmt.Errorf("listing the shard result chunks: %w", err)
	}
	ours := map[string]bool{}
	if len(list.Items) > 0 {
		for i := range int(run.Replicas()) {
			for _, n := range protocol.ShardChunkNames(run.Name, i) {
				ours[n] = true
			}
		}
	}
	for i := range list.Items {
		m := &list.Items[i]
		if !ours[m.Name] {
			continue
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name, UID: m.UID}}
		if err := r.ownWriter().Delete(ctx, cm, client.Preconditions{UID: &m.UID}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting ConfigMap %s: %w", m.Name, err)
		}
	}
	return nil
}
