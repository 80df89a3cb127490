package benchmarkrun

import (
	"context"
	"errors"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun/children"
	"github.com/spanbench/spanbench/controllers/statuswrite"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/protocol/chunks"
)

// Test-only access, for the envtest scenarios of package controllers_test,
// to what the controller builds and does without a running manager.

// RunnerObjectsForTest are the objects the controller creates for run's
// runners: their service account, Role and RoleBinding, and the shard
// ConfigMaps.
func RunnerObjectsForTest(run *v1alpha1.BenchmarkRun) []client.Object {
	objs := []client.Object{children.NewRunnerServiceAccount(run), children.NewRunnerRole(run), children.NewRunnerRoleBinding(run, children.RunnerServiceAccountName(run))}
	for i := range int(run.Replicas()) {
		objs = append(objs, children.NewShardConfigMap(run, i))
	}
	return objs
}

// AggregateForTest aggregates run's shards as a reconcile does once every
// runner has reported, and returns the events it would record, each as
// "Type Reason: message".
func AggregateForTest(ctx context.Context, r *BenchmarkRunReconciler, run *v1alpha1.BenchmarkRun) ([]string, error) {
	outbox := &statuswrite.Outbox{}
	_, err := r.aggregate(ctx, run, outbox, nil)
	return outbox.Events(), err
}

// noChunks is the chunk loader of the package's tests whose results are
// all inline: a chunked one is an error.
func noChunks(index int, _ chunks.Head) (*result.Document, error) {
	return nil, errors.New("this test stores no chunked result")
}

// DeleteShardChunksForTest deletes run's shard result chunks as the
// wrap-up of an ended run does.
func DeleteShardChunksForTest(ctx context.Context, r *BenchmarkRunReconciler, run *v1alpha1.BenchmarkRun) error {
	return r.deleteShardChunks(ctx, run)
}

// HoldAggregation takes the reconciler's aggregation slot, as another
// run's aggregation under way would, and returns its release.
func (r *BenchmarkRunReconciler) HoldAggregation() (release func()) {
	r.aggregating.Lock()
	return r.aggregating.Unlock
}

// DeleteShardObjectsForTest deletes run's shard result objects as the
// wrap-up of an ended run does.
func DeleteShardObjectsForTest(ctx context.Context, r *BenchmarkRunReconciler, run *v1alpha1.BenchmarkRun) error {
	return r.deleteShardObjects(ctx, run)
}

// HoldResultObjectsForTest puts the results finalizer on run, as a
// reconcile of a run that has not ended does with a results bucket.
func HoldResultObjectsForTest(ctx context.Context, r *BenchmarkRunReconciler, run *v1alpha1.BenchmarkRun) error {
	return r.holdResultObjects(ctx, run)
}

// FinalizeForTest finalizes run, being deleted, as a reconcile does.
func FinalizeForTest(ctx context.Context, r *BenchmarkRunReconciler, run *v1alpha1.BenchmarkRun) error {
	_, err := r.finalize(ctx, run)
	return err
}

// RunEventFilters are the filters of the run controller's watches: of a
// run's own updates, and of its children's creates.
var RunEventFilters = struct{ Run, Children predicate.Predicate }{ignoreFinalizerOnly, ignoreOwnCreates}

// ChildEventFiltersForTest are the filters of the watches of run's
// children, as SetupWithManager makes them, with r's expectations of its
// own writes (made here if SetupWithManager did not).
func (r *BenchmarkRunReconciler) ChildEventFiltersForTest() predicate.Predicate {
	if r.own == nil {
		r.own = newOwnWrites(r.Clock)
	}
	return predicate.And(r.childEventFilters()...)
}

// PublishStartForTest publishes run's start in its control ConfigMap, as
// the start barrier does once every runner is ready.
func PublishStartForTest(ctx context.Context, r *BenchmarkRunReconciler, run *v1alpha1.BenchmarkRun) error {
	_, err := r.publishStart(ctx, run)
	return err
}

// CleanupRunnersForTest deletes run's loader and runner Jobs as the
// wrap-up of an ended run does.
func CleanupRunnersForTest(ctx context.Context, r *BenchmarkRunReconciler, run *v1alpha1.BenchmarkRun) error {
	return r.cleanupRunners(ctx, run)
}

// OwnWriterForTest is the writer of r's children whose events r expects.
func OwnWriterForTest(r *BenchmarkRunReconciler) client.Writer { return r.ownWriter() }

// TakeDatabaseClaimForTest claims run's database as a reconcile does
// (database_claim.go): holder is "" when run holds it, else the holder
// as namespace/name.
func TakeDatabaseClaimForTest(ctx context.Context, r *BenchmarkRunReconciler, run *v1alpha1.BenchmarkRun) (holder string, err error) {
	return r.takeClaim(ctx, run)
}

// TrackStatusWritesForTest makes r mark the cached versions its status
// writes replace as stale, as SetupWithManager does.
func TrackStatusWritesForTest(r *BenchmarkRunReconciler) { r.versions = newRunVersions(r.Clock) }

// RunEventFilterForTest is the filter of the run's own update events as
// SetupWithManager makes it, with r's record of the versions read (made
// by TrackStatusWritesForTest).
func (r *BenchmarkRunReconciler) RunEventFilterForTest() predicate.Predicate {
	return predicate.And(ignoreFinalizerOnly, r.versions.ignoreVersionsRead())
}

// StaleRunRecheck is how soon a run read stale is reconciled again.
const StaleRunRecheck = staleRunRecheck
