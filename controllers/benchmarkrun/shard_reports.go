package benchmarkrun

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/statuswrite"
	"github.com/spanbench/spanbench/runner/protocol"
)

// The runners report in their shard ConfigMaps: ready, then Succeeded with
// a result or Failed with a message. Until the run is aggregated the
// controller reads only these states; each shard's result stays encoded
// until the aggregation decodes it, once (result_aggregation.go).

// shardReport is what one shard ConfigMap says.
type shardReport struct {
	index int
	protocol.ShardReport
	// err says the map holds what no spanbench runner writes (a
	// *protocol.DecodeError); the report is then empty.
	err error
}

// readShards reads every shard ConfigMap; a missing one reads as empty.
// Their content comes from pods: a report that does not decode is an
// error on that shard, never a panic nor an error of the reconcile.
func (r *BenchmarkRunReconciler) readShards(ctx context.Context, run *v1alpha1.BenchmarkRun) ([]shardReport, error) {
	out := make([]shardReport, run.Replicas())
	for i := range out {
		out[i].index = i
		cm := &corev1.ConfigMap{}
		err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: protocol.ShardConfigMapName(run.Name, i)}, cm)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, err
		}
		if out[i].ShardReport, err = protocol.DecodeShardReport(cm.Data, cm.BinaryData); err != nil {
			out[i].ShardReport, out[i].err = protocol.ShardReport{}, err
		}
	}
	return out, nil
}

// awaitShards waits until every runner has reported (or failed), or the
// overrun deadline has passed; then the results are aggregated with
// whatever arrived.
func (r *BenchmarkRunReconciler) awaitShards(ctx context.Context, run *v1alpha1.BenchmarkRun, outbox *statuswrite.Outbox) (ctrl.Result, error) {
	reports, err := r.readShards(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	control := r.readControl(ctx, run)
	retryLive := r.liveProgress(run, reports, control)
	w := run.Spec.Workload.Resolved()
	retrySearch, err := r.advanceSearch(ctx, run, &w, reports, control, outbox)
	if err != nil || run.IsFinished() {
		return ctrl.Result{}, err
	}
	failed := r.failedIndexes(ctx, run)
	reported := 0
	for _, o := range reports {
		if o.State != protocol.StateNone || o.err != nil || failed[o.index] {
			reported++
		}
	}
	if reported == len(reports) {
		run.SetCondition(v1alpha1.ConditionLoadCompleted, metav1.ConditionTrue, v1alpha1.ReasonShardsReported, "every runner reported", r.now())
		return statuswrite.RequeueSoon, nil
	}
	requeue, field, late := r.untilDeadline(run)
	if !late {
		run.SetCondition(v1alpha1.ConditionLoadCompleted, metav1.ConditionFalse, v1alpha1.ReasonRunning,
			fmt.Sprintf("%d of %d runners reported", reported, len(reports)), r.now())
		for _, retry := range []time.Duration{retryLive, retrySearch} {
			if retry > 0 {
				requeue = min(requeue, retry)
			}
		}
		return ctrl.Result{RequeueAfter: requeue}, nil
	}
	msg := fmt.Sprintf("only %d of %d runners reported within spec.deadlines.%s; aggregating what arrived", reported, len(reports), field)
	run.SetCondition(v1alpha1.ConditionLoadCompleted, metav1.ConditionTrue, v1alpha1.ReasonDeadlineExceeded, msg, r.now())
	outbox.Warning(v1alpha1.ReasonDeadlineExceeded, msg)
	return statuswrite.RequeueSoon, nil
}
