package benchmarkrun

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun/children"
	"github.com/spanbench/spanbench/controllers/runreport"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/runner/protocol/bucket"
)

// With a results bucket (BenchmarkRunReconciler.Results), a run's shard
// results and its report are objects under the run's prefix
// (bucket.RunPrefix: namespace, name and UID). Nothing deletes them with
// the run as owner references delete ConfigMaps: FinalizerResults holds
// the run until its objects are deleted. The shards' objects go at
// wrap-up, as their chunks do; the report's with the run.

// FinalizerResults holds a run whose objects may be in the results
// bucket, until they are deleted.
const FinalizerResults = "bench.spanbench.io/result-objects"

// holdResultObjects puts FinalizerResults on a run that has not ended,
// before any of its runners can write an object.
func (r *BenchmarkRunReconciler) holdResultObjects(ctx context.Context, run *v1alpha1.BenchmarkRun) error {
	if r.Results == nil || run.IsFinished() {
		return nil
	}
	return r.setFinalizer(ctx, run, FinalizerResults, true)
}

// releaseResultObjects deletes every object of a run being deleted, then
// its FinalizerResults. A manager started without the bucket since lets
// the run go, saying which objects it left.
func (r *BenchmarkRunReconciler) releaseResultObjects(ctx context.Context, run *v1alpha1.BenchmarkRun) error {
	if !controllerutil.ContainsFinalizer(run, FinalizerResults) {
		return nil
	}
	prefix := bucket.RunPrefix(run.Namespace, run.Name, string(run.UID))
	if r.Results == nil {
		log.FromContext(ctx).Info("the manager has no results bucket: the run's result objects, if any, are left", "prefix", prefix)
	} else if b, err := runreport.RunObjects(r.Results, run); err != nil {
		return err
	} else if n, err := b.DeletePrefix(ctx, prefix); err != nil {
		return fmt.Errorf("deleting the run's result objects: %w", err)
	} else if n > 0 {
		log.FromContext(ctx).Info("deleted the run's result objects", "objects", n, "prefix", prefix)
	}
	return r.setFinalizer(ctx, run, FinalizerResults, false)
}

// deleteShardObjects deletes the shards' objects of an ended run, as
// deleteShardChunks their chunks: the report holds the merged result. It
// runs at wrap-up, after the ended run's status is stored, and keeps
// them with the runners when the operator keeps those.
func (r *BenchmarkRunReconciler) deleteShardObjects(ctx context.Context, run *v1alpha1.BenchmarkRun) error {
	if r.Results == nil || r.KeepRunners {
		return nil
	}
	uid := string(run.UID)
	b, err := runreport.RunObjects(r.Results, run)
	if err != nil {
		return err
	}
	_, err = b.DeletePrefix(ctx, bucket.RunPrefix(run.Namespace, run.Name, uid), bucket.ReportKey(run.Namespace, run.Name, uid))
	if err != nil {
		return fmt.Errorf("deleting the shards' result objects: %w", err)
	}
	return nil
}

// prepareRunDir makes a file:// bucket's directory for run's objects,
// owned by the runners' uid with mode 0700, before the runner Job: the
// runner pods mount only it (ResultsStore.mount), and a directory the
// kubelet made for a missing subPath would belong to root. Nothing for
// gs:// or without a bucket.
func (r *BenchmarkRunReconciler) prepareRunDir(run *v1alpha1.BenchmarkRun) error {
	b, err := runreport.RunObjects(r.Results, run)
	if err != nil || b == nil {
		return err
	}
	return b.PrepareScopeDir(int(children.RunnerUID), int(children.RunnerUID))
}

// objectLoader reads shard index's result object, which p points at.
type objectLoader func(index int, p bucket.Pointer) (*result.Document, error)

// shardObjectLoader reads a shard's object from the results bucket,
// streamed. The pointer comes from the runner: it must name the shard's
// own key, never another run's object.
func (r *BenchmarkRunReconciler) shardObjectLoader(ctx context.Context, run *v1alpha1.BenchmarkRun) objectLoader {
	return func(index int, p bucket.Pointer) (*result.Document, error) {
		if r.Results == nil {
			return nil, fmt.Errorf("points at object %.80q, but the manager has no results bucket (--results-bucket)", p.Key)
		}
		if want := bucket.ShardKey(run.Namespace, run.Name, string(run.UID), index); p.Key != want {
			return nil, fmt.Errorf("points at object %.80q; shard %d's is %s", p.Key, index, want)
		}
		b, err := runreport.RunObjects(r.Results, run)
		if err != nil {
			return nil, err
		}
		return protocol.LoadObject(ctx, b, p, protocol.ShardLimits().Budget)
	}
}

// storeReportObject writes doc as the run's report object and sets the
// report ConfigMap cm to point at it.
func (r *BenchmarkRunReconciler) storeReportObject(ctx context.Context, run *v1alpha1.BenchmarkRun, cm *corev1.ConfigMap, doc *result.Document) error {
	b, err := runreport.RunObjects(r.Results, run)
	if err != nil {
		return err
	}
	p, err := protocol.StoreResultObject(ctx, b, bucket.ReportKey(run.Namespace, run.Name, string(run.UID)), doc, protocol.ReportLimits())
	if err != nil {
		return err
	}
	cm.Data, cm.BinaryData = p.Data(), nil
	return nil
}
