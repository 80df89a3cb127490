//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/await"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/protocol"
)

// kubectl runs kubectl for a test, failing it on error.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := kubectlCtx(t.Context(), time.Minute, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// kustomizePassOnly skips t in the Helm pass: hack/e2e.sh runs the suite
// once per install method, and what t tests does not depend on the
// method. The Helm pass keeps what the chart installs its own way: the
// install, upgrade (TestHelmUpgrade) and uninstall checks, the admission
// webhook and policy (TestCampaignWebhookRefusesInvalidCells,
// TestRunAuthorCannotBorrowAnAccountOrSecret), and one run end to end
// under the chart's RBAC, service accounts and manager flags
// (TestDemoRun). A run's live progress and its cost are the manager's,
// from the same image and flags either way (the chart sets no price
// catalog by default): kustomize pass only, like the fault tests. The
// Helm pass takes about a minute and a half instead of five.
func kustomizePassOnly(t *testing.T) {
	t.Helper()
	if suite.install != installKustomize {
		t.Skipf("runs in the %s pass only: it does not depend on how spanbench is installed", installKustomize)
	}
}

// newNamespace creates a namespace for one test that enforces the
// restricted Pod Security Standard: a runner pod that is not restricted
// (root, privilege escalation, capabilities, no seccomp profile) is refused
// by the API server. On failure the namespace's state is logged first; the
// namespace goes with the test.
func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: prefix + "-" + utilrand.String(5),
		Labels: map[string]string{
			"pod-security.kubernetes.io/enforce": "restricted",
			"pod-security.kubernetes.io/warn":    "restricted",
			"spanbench.io/e2e":                   "true",
		},
	}}
	if err := suite.c.Create(t.Context(), ns); err != nil {
		t.Fatalf("creating namespace %s: %v", ns.Name, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			dumpNamespace(t, ns.Name)
		}
		if os.Getenv("SPANBENCH_E2E_KEEP_NAMESPACES") != "" {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = suite.c.Delete(ctx, ns)
	})
	return ns.Name
}

// dumpNamespace logs what a failing test left, for the reader of the log.
func dumpNamespace(t *testing.T, ns string) {
	ctx := context.Background()
	for _, args := range [][]string{
		{"-n", ns, "get", "benchmarkruns,jobs,pods,configmaps", "-o", "wide"},
		{"-n", ns, "get", "benchmarkruns", "-o", "yaml"},
		{"-n", ns, "get", "events", "--sort-by=.lastTimestamp"},
		{"-n", ns, "logs", "-l", v1alpha1.LabelRun, "--tail=20", "--prefix"},
		{"-n", managerNamespace, "logs", "-l", managerSelector, "--tail=40"},
	} {
		out, _ := kubectlCtx(ctx, 20*time.Second, args...)
		t.Logf("kubectl %s:\n%s", strings.Join(args, " "), out)
	}
}

// demoRun is the demo sample, renamed into ns, pointed at the suite's
// emulator, with its own database (runs of different tests never share
// one), changed by the options.
func demoRun(t *testing.T, ns, name string, opts ...func(*v1alpha1.BenchmarkRun)) *v1alpha1.BenchmarkRun {
	t.Helper()
	run, err := readSample()
	if err != nil {
		t.Fatal(err)
	}
	run.Name, run.Namespace = name, ns
	run.Spec.Target.EmulatorHost = suite.emulatorHost
	run.Spec.Target.Database = strings.ReplaceAll(ns, "-", "_")
	for _, o := range opts {
		o(run)
	}
	return run
}

// withLoad sets the load's duration and total rate.
func withLoad(d time.Duration, rate int32) func(*v1alpha1.BenchmarkRun) {
	return func(r *v1alpha1.BenchmarkRun) {
		r.Spec.Workload.Duration = &metav1.Duration{Duration: d}
		r.Spec.Workload.Load.Rate = ptr.To(rate)
	}
}

// withReplicas sets the number of runners.
func withReplicas(n int32) func(*v1alpha1.BenchmarkRun) {
	return func(r *v1alpha1.BenchmarkRun) { r.Spec.Runners.Replicas = ptr.To(n) }
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := suite.c.Create(t.Context(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

func getRun(ctx context.Context, ns, name string) (*v1alpha1.BenchmarkRun, error) {
	run := &v1alpha1.BenchmarkRun{}
	return run, suite.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, run)
}

// eventually polls cond every half second until it is true, failing the
// test with cond's last explanation after timeout; each look gets 15 s.
// Progress is logged as it changes: e2e waits are long.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	await.Eventually(t, await.Poll{Within: timeout, Every: 500 * time.Millisecond, LogProgress: true}, what, func() (bool, string) {
		ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
		defer cancel()
		return cond(ctx)
	})
}

// waitRun waits until the run satisfies cond and returns it; progress
// (phase, latest condition) is logged as it changes.
func waitRun(t *testing.T, ns, name string, timeout time.Duration, what string, cond func(*v1alpha1.BenchmarkRun) bool) *v1alpha1.BenchmarkRun {
	t.Helper()
	var run *v1alpha1.BenchmarkRun
	eventually(t, timeout, fmt.Sprintf("run %s/%s %s", ns, name, what), func(ctx context.Context) (bool, string) {
		r, err := getRun(ctx, ns, name)
		if err != nil {
			return false, err.Error()
		}
		run = r
		return cond(r), describeRun(r)
	})
	return run
}

// waitFinished waits until the run succeeded or failed.
func waitFinished(t *testing.T, ns, name string, timeout time.Duration) *v1alpha1.BenchmarkRun {
	t.Helper()
	return waitRun(t, ns, name, timeout, "to finish", (*v1alpha1.BenchmarkRun).IsFinished)
}

// isRunning: the start barrier has released the runners.
func isRunning(r *v1alpha1.BenchmarkRun) bool {
	return meta.IsStatusConditionTrue(r.Status.Conditions, v1alpha1.ConditionRunnersReady) && !r.IsFinished()
}

// describeRun is a run's phase and its most recent condition.
func describeRun(r *v1alpha1.BenchmarkRun) string {
	var latest *metav1.Condition
	for i := range r.Status.Conditions {
		c := &r.Status.Conditions[i]
		if latest == nil || !c.LastTransitionTime.Before(&latest.LastTransitionTime) {
			latest = c
		}
	}
	if latest == nil {
		return "phase " + string(r.Status.Phase)
	}
	return fmt.Sprintf("phase %s; %s=%s %s: %s", r.Status.Phase, latest.Type, latest.Status, latest.Reason, latest.Message)
}

// requireSucceeded fails unless the run's Succeeded condition is True with
// the given reason.
func requireSucceeded(t *testing.T, run *v1alpha1.BenchmarkRun, reason string) {
	t.Helper()
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionSucceeded)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != reason {
		t.Fatalf("run %s: want Succeeded=True reason %s, got %+v (%s)", run.Name, reason, c, describeRun(run))
	}
	if got, want := run.Status.Partial, reason == v1alpha1.ReasonPartialResults; got != want {
		t.Errorf("run %s: status.partial = %v, want %v", run.Name, got, want)
	}
}

// runConfigMap reads one of the run's ConfigMaps.
func runConfigMap(t *testing.T, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := suite.c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
		t.Fatalf("reading ConfigMap %s/%s: %v", ns, name, err)
	}
	return cm
}

// requireExactMerge checks the heart of the product: the run's status
// figures and its report are exactly the merge of the shard results that
// the runners wrote (want: the indexes expected to have succeeded; the
// others must not have). The merge is recomputed here with result.Merge
// from the shard ConfigMaps, independently of the controller.
func requireExactMerge(t *testing.T, run *v1alpha1.BenchmarkRun, want ...int) *result.Document {
	t.Helper()
	succeeded := map[int]bool{}
	for _, i := range want {
		succeeded[i] = true
	}
	var docs []*result.Document
	for i := range int(run.Replicas()) {
		cm := runConfigMap(t, run.Namespace, protocol.ShardConfigMapName(run.Name, i))
		rep, err := protocol.DecodeShardReport(cm.Data, cm.BinaryData)
		if err != nil {
			t.Fatalf("shard %d: its report does not decode: %v", i, err)
		}
		if !succeeded[i] {
			if rep.State == protocol.StateSucceeded {
				t.Errorf("shard %d: state Succeeded, want it to have failed or stayed silent", i)
			}
			continue
		}
		if rep.State != protocol.StateSucceeded {
			t.Fatalf("shard %d: state %q (%s), want Succeeded", i, rep.State, rep.Message)
		}
		doc, err := protocol.LoadResult(t.Context(), suite.c, nil, cm, protocol.KeyResult, protocol.ShardLimits()) // inline or chunked
		if err != nil {
			t.Fatalf("shard %d: decoding its result: %v", i, err)
		}
		docs = append(docs, doc)
	}
	merged, err := result.Merge(docs...)
	if err != nil {
		t.Fatalf("merging the shard results: %v", err)
	}

	st := run.Status
	if st.Environment == nil || int(st.Environment.Runners) != len(docs) {
		t.Errorf("status.environment.runners: got %+v, want %d merged runners", st.Environment, len(docs))
	}
	if len(st.Operations) != len(merged.Totals) {
		t.Errorf("status has %d operations, the merge %d", len(st.Operations), len(merged.Totals))
	}
	for _, op := range merged.Totals {
		var got *v1alpha1.ResultFigures
		for i := range st.Operations {
			if st.Operations[i].Name == op.Name {
				got = &st.Operations[i].ResultFigures
			}
		}
		if got == nil {
			t.Errorf("operation %s: in the merge, not in the status", op.Name)
			continue
		}
		compareFigures(t, "operation "+op.Name, got, op, oracleLatency(t, docs, op.Name))
	}
	if st.Overall == nil {
		t.Fatalf("status.overall is empty")
	}
	compareFigures(t, "overall", st.Overall, merged.Overall, oracleLatency(t, docs, ""))

	// The report ConfigMap holds the controller's merge, byte for byte the
	// same figures and histograms.
	if st.Report == nil {
		t.Fatalf("status.report is empty")
	}
	cm := runConfigMap(t, run.Namespace, st.Report.ConfigMapName)
	report, err := protocol.LoadResult(t.Context(), suite.c, nil, cm, st.Report.Key, protocol.ReportLimits())
	if err != nil {
		t.Fatalf("decoding the report %s/%s: %v", cm.Name, st.Report.Key, err)
	}
	if d := cmp.Diff(merged.Totals, report.Totals); d != "" {
		t.Errorf("report totals differ from the merge of the shards (-merge +report):\n%s", d)
	}
	if d := cmp.Diff(merged.Overall, report.Overall); d != "" {
		t.Errorf("report overall differs from the merge of the shards (-merge +report):\n%s", d)
	}
	if len(report.Shards) != len(docs) {
		t.Errorf("report merges %d shards, want %d", len(report.Shards), len(docs))
	}
	return merged
}

// oracleLatency is expectedLatency, failing the test on a shard
// histogram it cannot read.
func oracleLatency(t *testing.T, docs []*result.Document, name string) *v1alpha1.LatencySummary {
	t.Helper()
	want, err := expectedLatency(docs, name)
	if err != nil {
		t.Fatalf("computing the expected latency: %v", err)
	}
	return want
}

// compareFigures compares status figures with the merged operation they
// must have been computed from: equal, not close. The latency is compared
// with wantLatency, computed from the shards' raw histograms (see
// expectedLatency), not with the product's own summary.
func compareFigures(t *testing.T, what string, got *v1alpha1.ResultFigures, op result.Operation, wantLatency *v1alpha1.LatencySummary) {
	t.Helper()
	if got.Count != int64(op.OK) {
		t.Errorf("%s: status count %d, merge %d", what, got.Count, op.OK)
	}
	if want := v1alpha1.FormatThroughput(op.Throughput); got.Throughput != want {
		t.Errorf("%s: status throughput %s, merge %s", what, got.Throughput, want)
	}
	if got.Errors != int64(op.ErrorCount()) {
		t.Errorf("%s: status errors %d, merge %d", what, got.Errors, op.ErrorCount())
	}
	if d := cmp.Diff(wantLatency, got.Latency); d != "" {
		t.Errorf("%s: status latency differs from the shards' raw histograms (-expected +status):\n%s", what, d)
	}
}

// runnerPods lists the run's runner pods (the runner Job's), by index.
func runnerPods(ctx context.Context, ns, run string) (map[int]corev1.Pod, error) {
	return podsOf(ctx, ns, run, "runner")
}

// loaderPods lists the run's loader pods (the loader Job's), by index.
func loaderPods(ctx context.Context, ns, run string) (map[int]corev1.Pod, error) {
	return podsOf(ctx, ns, run, "loader")
}

// podsOf lists the run's pods of one component, by index.
func podsOf(ctx context.Context, ns, run, component string) (map[int]corev1.Pod, error) {
	pods := &corev1.PodList{}
	labels := client.MatchingLabels{v1alpha1.LabelRun: run, "app.kubernetes.io/component": component}
	if err := suite.c.List(ctx, pods, client.InNamespace(ns), labels); err != nil {
		return nil, err
	}
	out := map[int]corev1.Pod{}
	for _, p := range pods.Items {
		i, err := strconv.Atoi(p.Labels["batch.kubernetes.io/job-completion-index"])
		if err != nil {
			return nil, fmt.Errorf("pod %s has no completion index", p.Name)
		}
		if _, dup := out[i]; dup {
			return nil, fmt.Errorf("two %s pods for index %d (%s and %s)", component, i, out[i].Name, p.Name)
		}
		out[i] = p
	}
	return out, nil
}

// runningContainers waits until every runner pod of the run has its
// container running and returns the containerd IDs by index.
func runningContainers(t *testing.T, ns, run string, n int) map[int]string {
	t.Helper()
	ids := map[int]string{}
	eventually(t, 2*time.Minute, "runner containers running", func(ctx context.Context) (bool, string) {
		pods, err := runnerPods(ctx, ns, run)
		if err != nil {
			return false, err.Error()
		}
		for i := range n {
			p, ok := pods[i]
			if !ok {
				return false, fmt.Sprintf("no pod for runner %d", i)
			}
			if len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].State.Running == nil {
				return false, fmt.Sprintf("pod %s: %s", p.Name, p.Status.Phase)
			}
			ids[i] = strings.TrimPrefix(p.Status.ContainerStatuses[0].ContainerID, "containerd://")
		}
		return true, ""
	})
	return ids
}

// process is what the kernel says about a container's main process.
type process struct {
	pid                          int
	uid, gid                     string // real, effective, saved, fs
	capEff, noNewPrivs, seccomp  string
	rootMountOptions, rootSource string
}

// inspectContainer reads /proc of a running container's main process on
// this node: what the pod spec asked for, as the kernel applied it.
func inspectContainer(t *testing.T, id string) process {
	t.Helper()
	p := process{pid: taskPID(t, id)}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid))
	if err != nil {
		t.Fatalf("reading the runner's /proc status: %v", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, _ := strings.Cut(line, ":")
		v = strings.Join(strings.Fields(v), " ")
		switch k {
		case "Uid":
			p.uid = v
		case "Gid":
			p.gid = v
		case "CapEff":
			p.capEff = v
		case "NoNewPrivs":
			p.noNewPrivs = v
		case "Seccomp":
			p.seccomp = v
		}
	}
	mounts, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", p.pid))
	if err != nil {
		t.Fatalf("reading the runner's mountinfo: %v", err)
	}
	// mountinfo: id parent major:minor root mountpoint options ... - fstype source superoptions
	for _, line := range strings.Split(string(mounts), "\n") {
		f := strings.Fields(line)
		if len(f) > 5 && f[4] == "/" {
			p.rootMountOptions = f[5]
			if i := indexOf(f, "-"); i > 0 && i+2 < len(f) {
				p.rootSource = f[i+1]
			}
		}
	}
	return p
}

// taskPID is the host PID of a running container's main process, as
// containerd reports it.
func taskPID(t *testing.T, id string) int {
	t.Helper()
	out, err := ctr(t.Context(), "task", "ls")
	if err != nil {
		t.Fatalf("ctr task ls: %v: %s", err, out)
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == id {
			if pid, err := strconv.Atoi(f[1]); err == nil && pid > 0 {
				return pid
			}
		}
	}
	t.Fatalf("container %s has no running task:\n%s", id, out)
	return 0
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// gone reports whether an object no longer exists.
func gone(ctx context.Context, obj client.Object) (bool, string) {
	err := suite.c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	switch {
	case apierrors.IsNotFound(err):
		return true, ""
	case err != nil:
		return false, err.Error()
	}
	return false, fmt.Sprintf("%T %s still exists", obj, obj.GetName())
}
