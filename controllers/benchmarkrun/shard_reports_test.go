package benchmarkrun

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/runtest"
	"github.com/spanbench/spanbench/runner/protocol"
)

// shardMap is shard i's ConfigMap holding rep, as runner i writes it.
func shardMap(namespace, run string, i int, rep protocol.ShardReport) *corev1.ConfigMap {
	m := protocol.EncodeShardReport(rep)
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: protocol.ShardConfigMapName(run, i)},
		Data: m.Data, BinaryData: m.BinaryData}
}

// TestWhileRunningOnlyTheShardsStatesAreRead: a Running reconcile reads
// each shard's state and leaves its result encoded, even one that would
// not decode; the aggregation decodes it, once, and names the problem.
// A Running reconcile that decoded results would gunzip every finished
// shard's result again on every pass.
func TestWhileRunningOnlyTheShardsStatesAreRead(t *testing.T) {
	run := runtest.Bare("running").Replicas(2).Obj()
	ready := time.Now()
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(
		shardMap(run.Namespace, run.Name, 0, protocol.ShardReport{Ready: ready, State: protocol.StateSucceeded, Result: []byte("not gzip at all")}),
		shardMap(run.Namespace, run.Name, 1, protocol.ShardReport{Ready: ready}),
	).Build()
	r := &BenchmarkRunReconciler{Client: c}

	reports, err := r.readShards(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	if o := reports[0]; o.err != nil || o.State != protocol.StateSucceeded || string(o.Result) != "not gzip at all" {
		t.Fatalf("reading the shards while running gave shard 0 as %+v (error %v); want Succeeded with its result undecoded, no error", o.ShardReport, o.err)
	}
	if o := reports[1]; o.err != nil || o.State != protocol.StateNone || o.Ready.IsZero() {
		t.Fatalf("shard 1 read as %+v (error %v); want ready, still running", o.ShardReport, o.err)
	}

	_, problems, _, err := mergeShards(reports, run, time.Now(), nil, shardLoaders{chunked: noChunks})
	if err == nil || len(problems) != 2 || !strings.Contains(problems[0], "shard 0: invalid result: the result is not gzip") {
		t.Errorf("aggregating gave problems %q, error %v; want shard 0's result refused as not gzip, and no usable result", problems, err)
	}
}

// TestUnreadableReportsNameTheirShardOrLoader: a map a pod filled with
// what no spanbench pod writes becomes a condition naming the pod and the
// key, never a panic or a failed reconcile.
func TestUnreadableReportsNameTheirShardOrLoader(t *testing.T) {
	run := runtest.Bare("garbled").Replicas(2).Obj()
	garbled := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: protocol.ShardConfigMapName(run.Name, 1)},
		Data: map[string]string{protocol.KeyReady: "yesterday"}}
	loader := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: protocol.LoaderConfigMapName(run.Name, 0)},
		Data: map[string]string{protocol.KeyVersion: "7", protocol.KeyLoaded: "10"}}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(garbled, loader).Build()
	r := &BenchmarkRunReconciler{Client: c}
	ctx := context.Background()

	shards, err := r.readShards(ctx, run)
	if err != nil {
		t.Fatalf("an unreadable shard report failed the reconcile: %v", err)
	}
	reason, msg := r.runnerProblem(ctx, run, shards)
	if reason != v1alpha1.ReasonRunnerFailed || !strings.Contains(msg, "runner 1's ConfigMap garbled-shard-1") || !strings.Contains(msg, `key "ready": "yesterday" is not an RFC 3339 time`) {
		t.Errorf("runnerProblem = %s, %q; want RunnerFailed naming runner 1, its map and the key", reason, msg)
	}

	loaders, err := r.readLoaders(ctx, run)
	if err != nil {
		t.Fatalf("an unreadable loader report failed the reconcile: %v", err)
	}
	reason, msg = r.loadProblem(ctx, run, loaders)
	if reason != v1alpha1.ReasonDatasetLoadFailed || !strings.Contains(msg, "loader 0's ConfigMap garbled-load-0") || !strings.Contains(msg, "is not protocol version 1") {
		t.Errorf("loadProblem = %s, %q; want DatasetLoadFailed naming loader 0, its map and the version", reason, msg)
	}
}
