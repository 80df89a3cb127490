package benchmarkrun_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/controllers/collectors"
	"github.com/spanbench/spanbench/controllers/runreport"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/pod"
	"github.com/spanbench/spanbench/runner/protocol"
)

// shardResults decodes the shard results the runners wrote.
func (h *harness) shardResults(run *v1alpha1.BenchmarkRun) []*result.Document {
	h.t.Helper()
	var docs []*result.Document
	for i := range int(*run.Spec.Runners.Replicas) {
		cm := h.configMap(protocol.ShardConfigMapName(run.Name, i))
		if cm == nil {
			continue
		}
		rep, err := protocol.DecodeShardReport(cm.Data, cm.BinaryData)
		if err != nil {
			h.t.Fatalf("shard %d's report: %v", i, err)
		}
		if rep.State != protocol.StateSucceeded {
			continue
		}
		d, err := protocol.DecodeResult(rep.Result)
		if err != nil {
			h.t.Fatalf("shard %d: %v", i, err)
		}
		docs = append(docs, d)
	}
	return docs
}

// checkStatusEqualsMerge asserts the status percentiles are exactly those
// of the merged shard histograms.
func (h *harness) checkStatusEqualsMerge(got *v1alpha1.BenchmarkRun, shards int) {
	h.t.Helper()
	docs := h.shardResults(got)
	if len(docs) != shards {
		h.t.Fatalf("%d shard results, want %d", len(docs), shards)
	}
	merged, err := result.Merge(docs...)
	if err != nil {
		h.t.Fatal(err)
	}
	o, l := got.Status.Overall, merged.Overall.Latency
	if o == nil || o.Latency == nil {
		h.t.Fatalf("status has no overall latency: %+v", got.Status)
	}
	if o.Count != int64(merged.Overall.OK) || o.Latency.P50.Duration != time.Duration(l.P50)*time.Microsecond ||
		o.Latency.P99.Duration != time.Duration(l.P99)*time.Microsecond || o.Latency.P999.Duration != time.Duration(l.P999)*time.Microsecond {
		h.t.Fatalf("status overall %d ops p50 %s p99 %s p99.9 %s; the merged shards say %d ops p50 %dµs p99 %dµs p99.9 %dµs",
			o.Count, o.Latency.P50.Duration, o.Latency.P99.Duration, o.Latency.P999.Duration, merged.Overall.OK, l.P50, l.P99, l.P999)
	}
}

// TestRunSucceedsWithTheExactMergeOfItsShards is the whole path: the
// controller prepares the database, creates the runners, starts them
// together, and writes the exact merge of their results to the status and
// a report.
func TestRunSucceedsWithTheExactMergeOfItsShards(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	run := h.runSpec("happy", 2)
	if err := h.c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	runners := h.kubelet(run, 0, 1)
	got := h.finished(run, 90*time.Second)
	runners.Wait()
	if c := h.condition(got, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionTrue || got.Status.Partial {
		t.Fatalf("run ended %s/%s: %s (partial %v)", c.Status, c.Reason, c.Message, got.Status.Partial)
	}
	h.checkStatusEqualsMerge(got, 2)
	if c := h.condition(got, v1alpha1.ConditionServerStatsCollected); c == nil || c.Reason != v1alpha1.ReasonNotAvailableOnEmulator {
		t.Errorf("ServerStatsCollected on the emulator is %+v; want NotAvailableOnEmulator", c)
	}
	if got.Status.StartSkew == nil || got.Status.StartSkew.Duration > 200*time.Millisecond {
		t.Errorf("start skew %v; two runners released by one start time should start within 200ms", got.Status.StartSkew)
	}
	if got.Status.Phase != v1alpha1.PhaseSucceeded || got.Status.Environment.Runners != 2 || got.Status.Environment.Endpoint != v1alpha1.EndpointEmulator {
		t.Errorf("phase %s, environment %+v", got.Status.Phase, got.Status.Environment)
	}
	report, err := runreport.ReadReport(context.Background(), h.c, client.ObjectKeyFromObject(run), pod.RunArrivals)
	if err != nil || len(report.Intervals) == 0 || report.Overall.OK != uint64(got.Status.Overall.Count) {
		t.Fatalf("the report (err %v) does not hold the merged result and time series of the status", err)
	}
	if report.Monitoring != nil {
		t.Errorf("the report of an emulator run has Cloud Monitoring figures %+v; want none", report.Monitoring)
	}
	h.readReportJoinsServerMetrics(run)
	h.eventually("the runner Job is cleaned up", 10*time.Second, func() bool {
		job := &batchv1.Job{}
		err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: v1alpha1.RunnerJobName(run)}, job)
		return err != nil || job.DeletionTimestamp != nil
	})
}

// TestRunnerThatNeverGetsReadyFailsTheRunAfterItsDeadline starts only one
// of two runners.
func TestRunnerThatNeverGetsReadyFailsTheRunAfterItsDeadline(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	run := h.runSpec("lonely", 2)
	run.Spec.Deadlines.RunnersReady = &metav1.Duration{Duration: 4 * time.Second}
	if err := h.c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	h.kubelet(run, 0)
	got := h.finished(run, 60*time.Second)
	c := h.condition(got, v1alpha1.ConditionSucceeded)
	if c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonRunnersNotReady || !strings.Contains(c.Message, "1 of 2 runners ready within spec.deadlines.runnersReady") {
		t.Fatalf("run ended %s/%s %q; want False/RunnersNotReady saying 1 of 2 runners were ready", c.Status, c.Reason, c.Message)
	}
}

// TestRunnerThatFailsMidRunGivesPartialResults: one runner's failure keeps
// the others' results, marked partial.
func TestRunnerThatFailsMidRunGivesPartialResults(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	run := h.runSpec("partial", 2)
	if err := h.c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	h.kubelet(run, 0)
	// Runner 1 reports ready, then dies during the run without a result:
	// the Job records its index as failed.
	h.eventually("the shard maps exist", 20*time.Second, func() bool { return h.configMap(protocol.ShardConfigMapName(run.Name, 1)) != nil })
	h.patchShard(run, 1, protocol.ShardReport{Ready: time.Now()})
	h.eventually("the run starts", 30*time.Second, func() bool {
		cur := &v1alpha1.BenchmarkRun{}
		_ = h.c.Get(context.Background(), client.ObjectKeyFromObject(run), cur)
		return cur.Status.StartTime != nil
	})
	h.failJobIndex(v1alpha1.RunnerJobName(run), "1")
	got := h.finished(run, 60*time.Second)
	c := h.condition(got, v1alpha1.ConditionSucceeded)
	if c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonPartialResults || !got.Status.Partial {
		t.Fatalf("run ended %s/%s %q partial=%v; want True/PartialResults", c.Status, c.Reason, c.Message, got.Status.Partial)
	}
	h.checkStatusEqualsMerge(got, 1)
}

// TestManagerRestartedMidRunNeitherDuplicatesNorLoses stops the manager
// after the runners were released and starts a new one.
func TestManagerRestartedMidRunNeitherDuplicatesNorLoses(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	run := h.runSpec("restart", 2)
	if err := h.c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	runners := h.kubelet(run, 0, 1)
	job := &batchv1.Job{}
	h.eventually("the run starts", 30*time.Second, func() bool {
		cur := &v1alpha1.BenchmarkRun{}
		_ = h.c.Get(context.Background(), client.ObjectKeyFromObject(run), cur)
		return cur.Status.StartTime != nil
	})
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: v1alpha1.RunnerJobName(run)}, job); err != nil {
		t.Fatal(err)
	}
	h.stopManager()
	h.startManager(benchmarkrun.SpannerPreparer{})
	got := h.finished(run, 60*time.Second)
	runners.Wait()
	if c := h.condition(got, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionTrue || got.Status.Partial {
		t.Fatalf("after a restart the run ended %s/%s: %s", c.Status, c.Reason, c.Message)
	}
	h.checkStatusEqualsMerge(got, 2)
	jobs := &batchv1.JobList{}
	if err := h.c.List(context.Background(), jobs, client.InNamespace(h.ns)); err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs.Items {
		if j.UID != job.UID && j.DeletionTimestamp == nil {
			t.Errorf("a second runner Job %s was created after the restart", j.Name)
		}
	}
}

// TestUntrustedShardDataBecomesAConditionNotAPanic feeds the controller
// garbage, a foreign schema version and an oversized result.
func TestUntrustedShardDataBecomesAConditionNotAPanic(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	run := h.runSpec("garbage", 3)
	if err := h.c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	h.loadDataset(run)
	h.eventually("the shard maps exist", 20*time.Second, func() bool { return h.configMap(protocol.ShardConfigMapName(run.Name, 2)) != nil })
	for i := range 3 {
		h.patchShard(run, i, protocol.ShardReport{Ready: time.Now()})
	}
	h.eventually("the run starts", 30*time.Second, func() bool {
		cur := &v1alpha1.BenchmarkRun{}
		_ = h.c.Get(context.Background(), client.ObjectKeyFromObject(run), cur)
		return cur.Status.StartTime != nil
	})
	foreign, _ := protocol.EncodeResult(&result.Document{SchemaVersion: "spanbench.io/result/v0", Run: run.Name})
	for i, data := range [][]byte{[]byte("not gzip at all"), foreign, make([]byte, protocol.MaxResultBytes+1)} {
		h.patchShard(run, i, protocol.ShardReport{Ready: time.Now(), State: protocol.StateSucceeded, Result: data})
	}
	got := h.finished(run, 60*time.Second)
	c := h.condition(got, v1alpha1.ConditionSucceeded)
	if c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonResultInvalid {
		t.Fatalf("run ended %s/%s %q; want False/ResultInvalid", c.Status, c.Reason, c.Message)
	}
	for _, want := range []string{"shard 0", "not gzip", "shard 1", "schema version", "shard 2", "more than"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("the condition message %q does not mention %q", c.Message, want)
		}
	}
}

// TestGuardrailsRefuseARunBeforeAnythingIsCreated asks for more runners
// than the operator allows.
func TestGuardrailsRefuseARunBeforeAnythingIsCreated(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	run := h.runSpec("greedy", 11)
	if err := h.c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := h.finished(run, 20*time.Second)
	if c := h.condition(got, v1alpha1.ConditionSucceeded); c.Reason != v1alpha1.ReasonLimitExceeded || !strings.Contains(c.Message, "--max-runners") {
		t.Fatalf("run ended %s %q; want LimitExceeded naming --max-runners", c.Reason, c.Message)
	}
	if cm := h.configMap(protocol.ControlConfigMapName(run.Name)); cm != nil {
		t.Fatalf("a refused run created %s", cm.Name)
	}
}

// patchShard writes rep into shard i's map, as that runner would.
func (h *harness) patchShard(run *v1alpha1.BenchmarkRun, i int, rep protocol.ShardReport) {
	h.t.Helper()
	h.patchMap(protocol.ShardConfigMapName(run.Name, i), protocol.EncodeShardReport(rep))
}

// patchMap merges m into the ConfigMap name of the scenario's namespace,
// as a pod writing its map would (a JSON merge patch).
func (h *harness) patchMap(name string, m protocol.Maps) {
	h.t.Helper()
	body, err := json.Marshal(m)
	if err != nil {
		h.t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: name}}
	if err := h.c.Patch(context.Background(), cm, client.RawPatch(types.MergePatchType, body)); err != nil {
		h.t.Fatalf("patching ConfigMap %s: %v", name, err)
	}
}

// failJobIndex records failed indexes in a Job's status, as the Job
// controller would once an index has used up its retries.
func (h *harness) failJobIndex(jobName, indexes string) {
	h.t.Helper()
	job := &batchv1.Job{}
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: jobName}, job); err != nil {
		h.t.Fatal(err)
	}
	before := job.DeepCopy()
	job.Status.FailedIndexes = &indexes
	job.Status.Failed = 1
	if err := h.c.Status().Patch(context.Background(), job, client.MergeFrom(before)); err != nil {
		h.t.Fatal(err)
	}
}

// TestDeletedRunLeavesNothingUnowned deletes a run mid-run: every object
// the controller made for it is controlled by the run, so the garbage
// collector (which envtest lacks) removes the Job, its pods and the
// ConfigMaps with it. That a pass of a run that is gone creates nothing
// is TestReconcileOfAGoneRunDoesNothing's.
func TestDeletedRunLeavesNothingUnowned(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	run := h.runSpec("deleted", 2)
	if err := h.c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	h.kubelet(run, 0, 1)
	h.eventually("the run starts", 30*time.Second, func() bool {
		_ = h.c.Get(context.Background(), client.ObjectKeyFromObject(run), run)
		return run.Status.StartTime != nil
	})
	if err := h.c.Delete(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	children := []client.ObjectList{&batchv1.JobList{}, &corev1.ConfigMapList{}, &corev1.ServiceAccountList{}, &rbacv1.RoleList{}, &rbacv1.RoleBindingList{}}
	for _, list := range children {
		if err := h.c.List(context.Background(), list, client.InNamespace(h.ns), client.MatchingLabels{v1alpha1.LabelRun: run.Name}); err != nil {
			t.Fatal(err)
		}
		items, _ := meta.ExtractList(list)
		if len(items) == 0 {
			t.Errorf("no %T of the run: the controller did not create it", list)
		}
		for _, o := range items {
			obj := o.(client.Object)
			owner := metav1.GetControllerOf(obj)
			if owner == nil || owner.UID != run.UID || owner.BlockOwnerDeletion == nil || !*owner.BlockOwnerDeletion {
				t.Errorf("%T %s is not controlled by the run (owner %+v): deleting the run would leave it behind", obj, obj.GetName(), owner)
			}
		}
	}
}

// TestResultsCollectorServesFinishedRunsFromTheCache scrapes the results
// collector for a finished run, then after its deletion.
func TestResultsCollectorServesFinishedRunsFromTheCache(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	run := h.runSpec("scraped", 1)
	run.Labels = map[string]string{collectors.LabelVariant: "tokyo"}
	if err := h.c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	h.kubelet(run, 0)
	got := h.finished(run, 90*time.Second)
	reg := prometheus.NewRegistry()
	reg.MustRegister(&collectors.ResultsCollector{Reader: h.c})
	p99 := gauge(t, reg, "spanbench_run_latency_seconds", map[string]string{"run": run.Name, "operation": "overall", "quantile": "0.99"})
	if want := got.Status.Overall.Latency.P99.Seconds(); p99 != want {
		t.Errorf("scraped overall p99 %v s, the status says %v s", p99, want)
	}
	if info := gauge(t, reg, "spanbench_run_info", map[string]string{"run": run.Name, "variant": "tokyo", "instance_config": "regional-asia-northeast1",
		"dialect": "GoogleSQL", "endpoint": "Emulator"}); info != 1 {
		t.Errorf("spanbench_run_info with the run's variant, config and dialect = %v, want 1", info)
	}
	for state, want := range map[string]float64{"total": 300, "loaded": 300} {
		if got := gauge(t, reg, "spanbench_run_dataset_rows", map[string]string{"run": run.Name, "state": state}); got != want {
			t.Errorf("spanbench_run_dataset_rows{state=%q} = %v, want %v", state, got, want)
		}
	}
	if err := h.c.Delete(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	h.eventually("the deleted run's series disappear", 10*time.Second, func() bool {
		return gauge(t, reg, "spanbench_run_info", map[string]string{"run": run.Name}) == -1
	})
}

// gauge returns the value of the series of name whose labels include want,
// or -1 when there is none.
func gauge(t *testing.T, reg *prometheus.Registry, name string, want map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			matched := 0
			for _, l := range m.GetLabel() {
				if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
					matched++
				}
			}
			if matched == len(want) {
				return m.GetGauge().GetValue()
			}
		}
	}
	return -1
}
