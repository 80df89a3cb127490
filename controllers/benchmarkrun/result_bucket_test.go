package benchmarkrun_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/controllers/runreport"
	"github.com/spanbench/spanbench/internal/heappeak"
	"github.com/spanbench/spanbench/internal/shardtest"
	"github.com/spanbench/spanbench/runner/pod"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/runner/protocol/bucket"
)

// withBucket gives the scenario a file:// results bucket in a fresh
// directory, and returns the directory.
func (s *storeScenario) withBucket() string {
	s.t.Helper()
	dir := s.t.TempDir()
	b, err := bucket.Open(context.Background(), "file://"+dir)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { _ = b.Close() })
	s.results = b
	return dir
}

// objectFile is the file of the object key in a file:// bucket at dir.
func objectFile(dir, key string) string { return filepath.Join(dir, filepath.FromSlash(key)) }

// TestADense30MinuteShardInTheResultsBucketRoundTripsAndMergesExactly:
// with a results bucket, two dense 30-minute shards of 10 operations are
// each stored by the runner's own code as one object (no chunk ConfigMap,
// nothing of the result in etcd), signalled by a pointer in the shard
// ConfigMap; the controller's aggregation reads them back from the
// bucket and merges them to exactly one histogram of every latency, with
// every 10 s interval kept; the report is an object its ConfigMap points
// at; wrap-up deletes the shards' objects and keeps the report's, and
// deleting the run deletes the rest.
func TestADense30MinuteShardInTheResultsBucketRoundTripsAndMergesExactly(t *testing.T) {
	s := newStoreScenario(t, "bucketed", 2, shardtest.DenseDuration)
	dir := s.withBucket()
	r := s.reconciler()
	if err := benchmarkrun.HoldResultObjectsForTest(bounded(t), r, s.run); err != nil {
		t.Fatal(err)
	}
	if !controllerutil.ContainsFinalizer(s.run, benchmarkrun.FinalizerResults) {
		t.Fatalf("the run's finalizers are %q; want %s before its runners write objects", s.run.Finalizers, benchmarkrun.FinalizerResults)
	}
	pool := shardtest.NewDensePool(16)
	began, peak := time.Now(), heappeak.Start()
	for i, stored := range s.storeShards(pool) {
		want := bucket.ShardKey(s.run.Namespace, s.run.Name, string(s.run.UID), i)
		if stored.Object == nil || stored.Object.Key != want || stored.Head != nil || stored.Inline != nil {
			t.Fatalf("shard %d was stored as %+v; want one object %s", i, stored, want)
		}
		info, err := os.Stat(objectFile(dir, want))
		if err != nil || info.Size() != stored.Object.Bytes {
			t.Fatalf("object %s: %v (size %v); want %d bytes in the bucket's directory", want, err, info, stored.Object.Bytes)
		}
		t.Logf("shard %d: %.1f MiB compressed in one object", i, float64(stored.Object.Bytes)/(1<<20))
	}
	t.Logf("building and storing both shards as the runners do: %s, peak heap %.0f MiB", time.Since(began).Round(time.Millisecond), peak.MiB())
	if err := s.c.Get(bounded(t), client.ObjectKey{Namespace: s.run.Namespace, Name: protocol.ShardChunkNames(s.run.Name, 0)[0]}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("a chunk ConfigMap of shard 0: %v; want none with a results bucket", err)
	}

	head := s.aggregateCleanly("reading 2 shards' objects")
	reportKey := bucket.ReportKey(s.run.Namespace, s.run.Name, string(s.run.UID))
	p, ok, err := bucket.DecodePointer(head.Data, protocol.ReportLimits().MaxObjectBytes())
	if !ok || err != nil || p.Key != reportKey || len(head.BinaryData) > 0 {
		t.Fatalf("the report ConfigMap holds %v (pointer %+v, %v); want only a pointer to %s", head.Data, p, err, reportKey)
	}
	if err := s.c.Status().Update(bounded(t), s.run); err != nil {
		t.Fatal(err)
	}
	if _, err := runreport.ReadReport(bounded(t), s.c, client.ObjectKeyFromObject(s.run), pod.RunArrivals); err == nil || !strings.Contains(err.Error(), "--results-bucket") {
		t.Errorf("reading a bucketed report without the bucket: %v; want an error naming --results-bucket", err)
	}
	report, err := runreport.ReadReportFrom(bounded(t), s.c, s.results, client.ObjectKeyFromObject(s.run), pod.RunArrivals)
	if err != nil {
		t.Fatalf("reading the merged report from the bucket as spanbench report does: %v", err)
	}
	checkDenseReport(t, report, s.run, pool)
	s.objectsGoAtWrapUpAndWithTheRun(dir, reportKey)
}

// objectsGoAtWrapUpAndWithTheRun: wrap-up deletes the shards' objects and
// keeps the report's, and another run's object; deleting the run
// (finalize) deletes the report's and lets the run go.
func (s *storeScenario) objectsGoAtWrapUpAndWithTheRun(dir, reportKey string) {
	t := s.t
	stranger := bucket.ShardKey(s.run.Namespace, s.run.Name, "another-uid", 0)
	if err := os.MkdirAll(filepath.Dir(objectFile(dir, stranger)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(objectFile(dir, stranger), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := s.reconciler()
	if err := benchmarkrun.DeleteShardObjectsForTest(bounded(t), r, s.run); err != nil {
		t.Fatal(err)
	}
	for i := range int(s.run.Replicas()) {
		key := bucket.ShardKey(s.run.Namespace, s.run.Name, string(s.run.UID), i)
		if _, err := os.Stat(objectFile(dir, key)); !os.IsNotExist(err) {
			t.Errorf("object %s after wrap-up: %v; want it deleted", key, err)
		}
	}
	for _, key := range []string{reportKey, stranger} {
		if _, err := os.Stat(objectFile(dir, key)); err != nil {
			t.Errorf("object %s after wrap-up: %v; want it kept", key, err)
		}
	}

	if err := s.c.Delete(bounded(t), s.run); err != nil {
		t.Fatal(err)
	}
	run := &v1alpha1.BenchmarkRun{}
	if err := s.c.Get(bounded(t), client.ObjectKeyFromObject(s.run), run); err != nil {
		t.Fatalf("the run, held by its finalizer: %v", err)
	}
	if err := benchmarkrun.FinalizeForTest(bounded(t), r, run); err != nil {
		t.Fatalf("finalizing the run: %v", err)
	}
	if _, err := os.Stat(objectFile(dir, reportKey)); !os.IsNotExist(err) {
		t.Errorf("the report object after the run's deletion: %v; want it deleted", err)
	}
	if _, err := os.Stat(objectFile(dir, stranger)); err != nil {
		t.Errorf("another run's object after this run's deletion: %v; want it kept", err)
	}
	if err := s.c.Get(bounded(t), client.ObjectKeyFromObject(s.run), &v1alpha1.BenchmarkRun{}); !apierrors.IsNotFound(err) {
		t.Errorf("the run after finalizing: %v; want it gone, its finalizer removed", err)
	}
}

// TestAMissingCorruptOrForeignObjectIsAnInvalidResultNamingIt: of four
// shards stored in the results bucket, one object deleted, one truncated,
// one altered and one pointer redirected to another run's object are
// each refused with ResultInvalid naming the shard and the object; with
// no shard left the run fails so, and nothing panics.
func TestAMissingCorruptOrForeignObjectIsAnInvalidResultNamingIt(t *testing.T) {
	s := newStoreScenario(t, "broken-objects", 4, 5*time.Minute)
	dir := s.withBucket()
	stored := s.storeShards(shardtest.NewDensePool(8))
	key := func(i int) string { return stored[i].Object.Key }
	if err := os.Remove(objectFile(dir, key(0))); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(objectFile(dir, key(1)), stored[1].Object.Bytes/2); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(objectFile(dir, key(2)))
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x40
	if err := os.WriteFile(objectFile(dir, key(2)), b, 0o644); err != nil {
		t.Fatal(err)
	}
	foreign := bucket.ShardKey(s.run.Namespace, "theirs", "their-uid", 3)
	shard3 := &corev1.ConfigMap{}
	if err := s.c.Get(bounded(t), client.ObjectKey{Namespace: s.run.Namespace, Name: protocol.ShardConfigMapName(s.run.Name, 3)}, shard3); err != nil {
		t.Fatal(err)
	}
	shard3.Data[bucket.KeyObject] = foreign
	if err := s.c.Update(bounded(t), shard3); err != nil {
		t.Fatal(err)
	}

	events := s.aggregate()
	failed := meta.FindStatusCondition(s.run.Status.Conditions, v1alpha1.ConditionSucceeded)
	if s.run.Status.Phase != v1alpha1.PhaseFailed || failed == nil || failed.Reason != v1alpha1.ReasonResultInvalid {
		t.Fatalf("the run is %s, condition %+v; want Failed with %s", s.run.Status.Phase, failed, v1alpha1.ReasonResultInvalid)
	}
	for _, want := range []string{
		"shard 0: invalid result: object " + key(0) + " is missing",
		"shard 1: invalid result: object " + key(1) + " is ",
		"; its pointer records",
		"shard 2: invalid result: object " + key(2) + " has sha256",
		"shard 3: invalid result: points at object \"" + foreign + "\"; shard 3's is " + key(3),
	} {
		if !strings.Contains(failed.Message, want) {
			t.Errorf("the condition says %q; want it to say %q", failed.Message, want)
		}
	}
	if !slices.ContainsFunc(events, func(e string) bool {
		return strings.HasPrefix(e, "Warning "+v1alpha1.ReasonResultInvalid+": ") && strings.Contains(e, key(2))
	}) {
		t.Errorf("no %s warning names object %s (events %q)", v1alpha1.ReasonResultInvalid, key(2), events)
	}
}
