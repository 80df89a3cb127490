package benchmarkrun_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/controllers/runreport"
	"github.com/spanbench/spanbench/internal/await"
	"github.com/spanbench/spanbench/internal/heappeak"
	"github.com/spanbench/spanbench/internal/shardtest"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
	"github.com/spanbench/spanbench/runner/pod"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/runner/protocol/bucket"
	"github.com/spanbench/spanbench/runner/protocol/chunks"
)

// storeScenario is a run whose runners' access and shard ConfigMaps exist,
// as the controller creates them, on envtest's real API server, with no
// manager and no emulator: the runners' results are written by the
// runner's own code (pod.StoreShardResult) acting as the runner service
// account, and read by the controller's aggregation.
type storeScenario struct {
	t     *testing.T
	c     client.Client
	run   *v1alpha1.BenchmarkRun
	start time.Time
	// results, when set, is the results bucket the runners store their
	// results in and the controller reads them from.
	results *bucket.Bucket
}

// object is where runner i stores its result: nil without a results
// bucket, else its object, as the runner computes it.
func (s *storeScenario) object(i int) *pod.ResultObject {
	if s.results == nil {
		return nil
	}
	return &pod.ResultObject{Bucket: s.results, Key: bucket.ShardKey(s.run.Namespace, s.run.Name, string(s.run.UID), i)}
}

// reconciler is the controller of the scenario, with its results bucket.
func (s *storeScenario) reconciler() *benchmarkrun.BenchmarkRunReconciler {
	return &benchmarkrun.BenchmarkRunReconciler{Client: s.c, APIReader: s.c, Scheme: scheme, Clock: clock.RealClock{},
		Preparer: benchmarkrun.SpannerPreparer{}, Results: s.results, Arrivals: pod.RunArrivals}
}

func newStoreScenario(t *testing.T, name string, replicas int32, duration time.Duration) *storeScenario {
	t.Helper()
	c, err := client.New(restConfig, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := fmt.Sprintf("store-%d", time.Now().UnixNano()%1_000_000_000)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	nodes := int32(1)
	run := &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.BenchmarkRunSpec{
			Target: v1alpha1.TargetSpec{Project: "spanbench-test", Database: "bench", EmulatorHost: "localhost:9010",
				Instance: v1alpha1.InstanceSpec{Name: "bench", Config: "regional-asia-northeast1", Nodes: &nodes}},
			Workload: shardtest.DenseWorkload(duration),
			Runners:  v1alpha1.RunnersSpec{Replicas: &replicas},
		},
	}
	if err := c.Create(ctx, run); err != nil {
		t.Fatalf("creating the run: %v", err)
	}
	// The API server outlives the scenario: the next scenarios' managers,
	// which watch every namespace, must not spend their time on this run,
	// nor the API server its memory on its chunks.
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), run)
		_ = c.DeleteAllOf(context.Background(), &corev1.ConfigMap{}, client.InNamespace(ns))
	})
	// The load ended just now: every shard's end is in the past.
	s := &storeScenario{t: t, c: c, run: run, start: time.Now().Add(-duration - 5*time.Second).Truncate(time.Second)}
	run.Status.StartTime = &metav1.Time{Time: s.start}
	for _, o := range benchmarkrun.RunnerObjectsForTest(run) {
		if err := controllerutil.SetControllerReference(run, o, scheme); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("creating the runners' %T: %v", o, err)
		}
	}
	return s
}

// runnerClient acts as the run's runner service account, bound to the
// Role the controller built.
func (s *storeScenario) runnerClient() client.Client {
	s.t.Helper()
	cfg := rest.CopyConfig(restConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + s.run.Namespace + ":" + v1alpha1.RunnerServiceAccountName(s.run)}
	rc, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		s.t.Fatal(err)
	}
	return rc
}

// storeShards stores shard i of the run from pool for each i, as runner i
// does at its end, and returns how each was stored.
func (s *storeScenario) storeShards(pool shardtest.DensePool) []protocol.StoredResult {
	s.t.Helper()
	rc := s.runnerClient()
	var out []protocol.StoredResult
	for i := range int(s.run.Replicas()) {
		doc := pool.Shard(s.run.Name, s.run.Spec.Workload.Resolved(), s.start, i, int(s.run.Replicas()))
		key := client.ObjectKey{Namespace: s.run.Namespace, Name: protocol.ShardConfigMapName(s.run.Name, i)}
		stored, err := pod.StoreShardResult(bounded(s.t), rc, key, s.start, doc, s.object(i))
		if err != nil {
			s.t.Fatalf("the runner could not store shard %d's result: %v", i, err)
		}
		out = append(out, stored)
	}
	return out
}

// aggregate runs the controller's aggregation of the run.
func (s *storeScenario) aggregate() []string {
	s.t.Helper()
	events, err := benchmarkrun.AggregateForTest(bounded(s.t), s.reconciler(), s.run)
	if err != nil {
		s.t.Fatalf("aggregating: %v", err)
	}
	return events
}

// aggregateCleanly aggregates the run (what says what it read, for the
// log), requires it Succeeded with a report and without a warning event,
// and returns the report's head ConfigMap.
func (s *storeScenario) aggregateCleanly(what string) *corev1.ConfigMap {
	s.t.Helper()
	began, peak := time.Now(), heappeak.Start()
	events := s.aggregate()
	s.t.Logf("aggregating (%s, merging, writing the report's): %s, peak heap %.0f MiB",
		what, time.Since(began).Round(time.Millisecond), peak.MiB())
	if s.run.Status.Phase != v1alpha1.PhaseSucceeded || s.run.Status.Report == nil {
		s.t.Fatalf("the run is %s with report %v after aggregating (events %q); want Succeeded with a report", s.run.Status.Phase, s.run.Status.Report, events)
	}
	for _, e := range events {
		if strings.HasPrefix(e, corev1.EventTypeWarning) {
			s.t.Errorf("aggregating warned: %s", e)
		}
	}
	head := &corev1.ConfigMap{}
	if err := s.c.Get(bounded(s.t), client.ObjectKey{Namespace: s.run.Namespace, Name: s.run.Status.Report.ConfigMapName}, head); err != nil {
		s.t.Fatal(err)
	}
	return head
}

// TestADense30MinuteShardIsStoredWholeAndMergesExactly: two dense
// 30-minute shards of 10 operations (issue 11's scale: 11 MiB gzipped
// each, which EncodeResult used to coarsen or refuse) are stored by the
// runner's code in chunks under the controller's Role, read back by the
// controller's aggregation through the API server, and merged to exactly
// one histogram of every latency after the warm-up, per operation and
// overall, with every 10 s interval kept. The merged report is as long,
// so it is chunked too, and spanbench report's reader reads it whole.
func TestADense30MinuteShardIsStoredWholeAndMergesExactly(t *testing.T) {
	s := newStoreScenario(t, "dense", 2, shardtest.DenseDuration)
	pool := shardtest.NewDensePool(16)
	began, peak := time.Now(), heappeak.Start()
	for i, stored := range s.storeShards(pool) {
		if stored.Head == nil || len(stored.Chunks) < 2 {
			t.Fatalf("shard %d was stored in %d chunks (inline %d bytes); want a dense 30-minute shard chunked", i, len(stored.Chunks), len(stored.Inline))
		}
		t.Logf("shard %d: %.1f MiB compressed in %d chunks", i, float64(stored.Head.Bytes)/(1<<20), len(stored.Chunks))
	}
	t.Logf("building and storing both shards as the runners do: %s, peak heap %.0f MiB", time.Since(began).Round(time.Millisecond), peak.MiB())
	chunk := &corev1.ConfigMap{}
	if err := s.c.Get(bounded(t), client.ObjectKey{Namespace: s.run.Namespace, Name: protocol.ShardChunkNames(s.run.Name, 1)[0]}, chunk); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(chunk.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == s.run.UID }) {
		t.Errorf("chunk %s is owned by %+v; want the run, so that it is deleted with it", chunk.Name, chunk.OwnerReferences)
	}
	if _, labelled := chunk.Labels[v1alpha1.LabelRun]; labelled {
		t.Errorf("chunk %s carries the run label: the manager's cache would hold it", chunk.Name)
	}

	head := s.aggregateCleanly("reading 2 shards' chunks")
	reportHead, chunked, err := chunks.DecodeHead(head.Data, chunks.MaxReportChunks)
	if !chunked || err != nil {
		t.Errorf("the merged report's ConfigMap holds no chunked result (%v); a dense 30-minute report needs chunks", err)
	}
	if err := s.c.Status().Update(bounded(t), s.run); err != nil {
		t.Fatal(err)
	}
	began, peak = time.Now(), heappeak.Start()
	report, err := runreport.ReadReport(bounded(t), s.c, client.ObjectKeyFromObject(s.run), pod.RunArrivals)
	if err != nil {
		t.Fatalf("reading the merged report as spanbench report does: %v", err)
	}
	t.Logf("reading the report (%d chunks): %s, peak heap %.0f MiB", len(reportHead.Chunks), time.Since(began).Round(time.Millisecond), peak.MiB())
	checkDenseReport(t, report, s.run, pool)
	s.wrapUpDeletesTheShardChunksAlone(reportHead)
}

// wrapUpDeletesTheShardChunksAlone: once the run has ended, its shards'
// chunks go (the report holds the merged result), the report's stay, and
// so does another run's chunk labelled as this run's.
func (s *storeScenario) wrapUpDeletesTheShardChunksAlone(report chunks.Head) {
	t := s.t
	stranger := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.run.Namespace, Name: "stranger-shard-0-0",
		Labels: map[string]string{protocol.LabelShardChunkOfRun: s.run.Name}}}
	if err := s.c.Create(bounded(t), stranger); err != nil {
		t.Fatal(err)
	}
	r := &benchmarkrun.BenchmarkRunReconciler{Client: s.c, APIReader: s.c, Scheme: scheme, Clock: clock.RealClock{}, Preparer: benchmarkrun.SpannerPreparer{}}
	await.Eventually(t, await.Poll{Within: 30 * time.Second, Every: 200 * time.Millisecond}, "the shard chunks deleted", func() (bool, string) {
		if err := benchmarkrun.DeleteShardChunksForTest(bounded(t), r, s.run); err != nil {
			return false, err.Error()
		}
		left := 0
		for i := range int(s.run.Replicas()) {
			for _, n := range protocol.ShardChunkNames(s.run.Name, i) {
				err := s.c.Get(bounded(t), client.ObjectKey{Namespace: s.run.Namespace, Name: n}, &corev1.ConfigMap{})
				if !apierrors.IsNotFound(err) {
					left++
				}
			}
		}
		return left == 0, fmt.Sprintf("%d shard chunks left", left)
	})
	for k := range report.Chunks {
		name := chunks.Name(s.run.Status.Report.ConfigMapName, k)
		if err := s.c.Get(bounded(t), client.ObjectKey{Namespace: s.run.Namespace, Name: name}, &corev1.ConfigMap{}); err != nil {
			t.Errorf("report chunk %s: %v; want it kept with the run", name, err)
		}
	}
	if err := s.c.Get(bounded(t), client.ObjectKeyFromObject(stranger), &corev1.ConfigMap{}); err != nil {
		t.Errorf("ConfigMap %s, labelled as this run's chunk but not named so: %v; want it kept", stranger.Name, err)
	}
}

// bounded is a context for one call to the API server.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func totalCount(h *hdr.Histogram) int64 {
	if h == nil {
		return 0
	}
	return h.TotalCount()
}

// TestAMissingOrCorruptChunkIsAnInvalidResultNamingIt: a chunk deleted
// from one shard and a chunk altered in the other are each refused with
// ResultInvalid naming the shard, the chunk and its ConfigMap; with no
// shard left the run fails so.
func TestAMissingOrCorruptChunkIsAnInvalidResultNamingIt(t *testing.T) {
	s := newStoreScenario(t, "broken", 2, 5*time.Minute)
	for i, stored := range s.storeShards(shardtest.NewDensePool(8)) {
		if len(stored.Chunks) < 2 {
			t.Fatalf("shard %d was stored in %d chunks; the test needs two or more", i, len(stored.Chunks))
		}
	}
	missing := protocol.ShardChunkNames(s.run.Name, 0)[1]
	if err := s.c.Delete(bounded(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.run.Namespace, Name: missing}}); err != nil {
		t.Fatal(err)
	}
	corrupt := &corev1.ConfigMap{}
	if err := s.c.Get(bounded(t), client.ObjectKey{Namespace: s.run.Namespace, Name: protocol.ShardChunkNames(s.run.Name, 1)[0]}, corrupt); err != nil {
		t.Fatal(err)
	}
	b := bytes.Clone(corrupt.BinaryData[chunks.KeyChunk])
	b[len(b)/2] ^= 0x40
	corrupt.BinaryData[chunks.KeyChunk] = b
	if err := s.c.Update(bounded(t), corrupt); err != nil {
		t.Fatal(err)
	}

	events := s.aggregate()
	failed := meta.FindStatusCondition(s.run.Status.Conditions, v1alpha1.ConditionSucceeded)
	if s.run.Status.Phase != v1alpha1.PhaseFailed || failed == nil || failed.Reason != v1alpha1.ReasonResultInvalid {
		t.Fatalf("the run is %s, condition %+v; want Failed with %s", s.run.Status.Phase, failed, v1alpha1.ReasonResultInvalid)
	}
	for _, want := range []string{
		"shard 0: invalid result: chunk 1 (ConfigMap " + missing + ") is missing",
		"shard 1: invalid result: chunk 0 (ConfigMap " + corrupt.Name + ") has sha256",
	} {
		if !strings.Contains(failed.Message, want) {
			t.Errorf("the condition says %q; want it to say %q", failed.Message, want)
		}
		if !slices.ContainsFunc(events, func(e string) bool {
			return strings.HasPrefix(e, "Warning "+v1alpha1.ReasonResultInvalid+": ") && strings.Contains(e, want)
		}) {
			t.Errorf("no %s warning says %q (events %q)", v1alpha1.ReasonResultInvalid, want, events)
		}
	}
}

// TestTheRunnerWritesOnlyItsOwnRunsChunkNames: the runners' Role lets
// them store a chunk under their own run's chunk names alone, and only
// by server-side apply: not another run's names, not a name past the
// bound, not by a plain create, and not a read of any chunk.
func TestTheRunnerWritesOnlyItsOwnRunsChunkNames(t *testing.T) {
	s := newStoreScenario(t, "mine", 1, 5*time.Minute)
	other := newStoreScenario(t, "theirs", 1, 5*time.Minute)
	rc := s.runnerClient()
	chunk := func(ns, name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, BinaryData: map[string][]byte{chunks.KeyChunk: {1, 2, 3}}}
	}
	own := protocol.ShardChunkNames(s.run.Name, 0)
	if err := protocol.ApplyChunk(bounded(t), rc, chunk(s.run.Namespace, own[len(own)-1]), "test"); err != nil {
		t.Fatalf("the runner could not store its own last chunk name %s: %v", own[len(own)-1], err)
	}
	forbidden := map[string]func(context.Context) error{
		"store another run's chunk (in its namespace)": func(ctx context.Context) error {
			return protocol.ApplyChunk(ctx, rc, chunk(other.run.Namespace, protocol.ShardChunkNames(other.run.Name, 0)[0]), "test")
		},
		"store another run's chunk name in its own namespace": func(ctx context.Context) error {
			return protocol.ApplyChunk(ctx, rc, chunk(s.run.Namespace, protocol.ShardChunkNames("theirs", 0)[0]), "test")
		},
		"store a chunk past the bound": func(ctx context.Context) error {
			return protocol.ApplyChunk(ctx, rc, chunk(s.run.Namespace, chunks.Name(protocol.ShardConfigMapName(s.run.Name, 0), chunks.MaxShardChunks)), "test")
		},
		"store a chunk of a shard the run has not": func(ctx context.Context) error {
			return protocol.ApplyChunk(ctx, rc, chunk(s.run.Namespace, protocol.ShardChunkNames(s.run.Name, 1)[0]), "test")
		},
		"create its own chunk name by a plain create": func(ctx context.Context) error {
			return rc.Create(ctx, chunk(s.run.Namespace, own[0]))
		},
		"read its own chunk": func(ctx context.Context) error {
			return rc.Get(ctx, client.ObjectKey{Namespace: s.run.Namespace, Name: own[len(own)-1]}, &corev1.ConfigMap{})
		},
	}
	for what, call := range forbidden {
		if err := call(bounded(t)); !apierrors.IsForbidden(err) {
			t.Errorf("the runner's service account could %s: %v; want Forbidden", what, err)
		}
	}
}

// checkDenseReport fails unless report, the merged result of run's two
// dense shards drawn from pool, keeps every 10 s interval uncoarsened and
// its histograms (each operation's and the overall) are each one histogram
// of all the latencies pool drew, and run's status counts them all.
func checkDenseReport(t *testing.T, report *result.Document, run *v1alpha1.BenchmarkRun, pool shardtest.DensePool) {
	t.Helper()
	if n := int(shardtest.DenseDuration / (10 * time.Second)); len(report.Intervals) != n || report.IntervalSeconds != 10 || len(report.Notes) > 0 {
		t.Errorf("the report has %d intervals of %gs, notes %q; want all %d of 10s, uncoarsened", len(report.Intervals), report.IntervalSeconds, report.Notes, n)
	}
	truth := pool.Truth(run.Spec.Workload.Resolved(), 2)
	got := map[string]string{"overall": report.Overall.LatencyHistogram}
	for _, op := range report.Totals {
		got[op.Name] = op.LatencyHistogram
	}
	for name, want := range truth {
		h, err := histogram.Decode(got[name])
		if err != nil || !h.Equals(want) {
			t.Errorf("%s: the merged histogram (err %v, %d latencies) is not one histogram of all %d latencies", name, err, totalCount(h), want.TotalCount())
		}
	}
	if run.Status.Overall == nil || run.Status.Overall.Count != truth["overall"].TotalCount() {
		t.Errorf("status.overall %+v; want a count of %d", run.Status.Overall, truth["overall"].TotalCount())
	}
}
