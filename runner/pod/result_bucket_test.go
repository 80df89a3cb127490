package pod

import (
	"context"
	"testing"
	"time"

	"github.com/spanbench/spanbench/internal/sessiontest"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/runner/protocol/bucket"
)

// TestARunnerWithAResultsBucketStoresItsResultAsAnObject: a runner given
// a results bucket (spanbench runner --results-bucket --run-uid) runs its
// shard against the emulator and stores the result as the object of its
// shard's key, the shard ConfigMap holding only the pointer beside
// Succeeded; the object reads back as the shard's result.
func TestARunnerWithAResultsBucketStoresItsResultAsAnObject(t *testing.T) {
	spec := ycsb(100, 2*time.Second, readOp)
	s := sessiontest.Start(t, &spec)
	ns, run, uid := newNamespace(t), "bucketed", "0b0e7c1e-uid"
	createControl(t, ns, protocol.Control{Run: run, Namespace: ns, Shards: 1, Target: s.Target, Workload: spec, Region: "asia-northeast1"})
	createShardMaps(t, ns, run, 1)
	b, err := bucket.Open(context.Background(), "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	runners := startRunners(t, k8sClient, ns, run, 1, func(_ int, o *Options) { o.Results, o.RunUID = b, uid })
	waitReady(t, ns, run, runners, readyWithin)
	start := time.Now().Add(time.Second)
	publishStart(t, ns, run, start)
	start, _, _ = protocol.DecodeStart(protocol.EncodeStart(start))
	if err := runners[0].wait(t, runWithin); err != nil {
		t.Fatalf("the runner failed: %v", err)
	}
	rep := shardReport(t, ns, run, 0)
	want := bucket.ShardKey(ns, run, uid, 0)
	if rep.State != protocol.StateSucceeded || rep.Object == nil || rep.Object.Key != want || rep.Result != nil || rep.Chunked != nil {
		t.Fatalf("the shard reports %s with object %+v, inline %d bytes, chunks %v; want Succeeded with only a pointer to %s",
			rep.State, rep.Object, len(rep.Result), rep.Chunked, want)
	}
	doc, err := protocol.LoadObject(bounded(t), b, *rep.Object, protocol.ShardLimits().Budget)
	if err != nil {
		t.Fatalf("the object does not read back: %v", err)
	}
	checkShardResult(t, doc, 0, 1, start)
}
