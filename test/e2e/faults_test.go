//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
)

// The fault tests (issue 10, item 7) break one real component of the
// local cluster while a run is under way and require the run to end with
// one correct outcome: no lost result, no leaked Ephemeral instance, no
// run (runner pods, report, completion) twice. They are not parallel:
// each fault hits what every other run of the suite needs (the emulator,
// the API server, the manager). They run in the kustomize pass only: how
// spanbench was installed changes nothing of what they test.
// docs/security.md, "Faults on real pods", has their figures.

// faultLoad is the load of a fault test's run: long enough for a fault in
// its middle, short for the suite's time.
const faultLoad = 16 * time.Second

// faultRun is a demo run in ns with an Ephemeral instance of its own (the
// namespace's name), so that a leaked instance shows in the emulator.
func faultRun(t *testing.T, ns string) *v1alpha1.BenchmarkRun {
	t.Helper()
	return demoRun(t, ns, "fault", withLoad(faultLoad, 100), func(r *v1alpha1.BenchmarkRun) {
		r.Spec.Target.Instance.Name = ns
		r.Spec.Target.Instance.Mode = v1alpha1.InstanceEphemeral
	})
}

// intoLoad waits until the run's runners are released and have sent load
// for a few seconds, so that a fault lands in the middle of the load.
func intoLoad(t *testing.T, run *v1alpha1.BenchmarkRun) *v1alpha1.BenchmarkRun {
	t.Helper()
	run = waitRun(t, run.Namespace, run.Name, runTimeout, "to release its runners", isRunning)
	runningContainers(t, run.Namespace, run.Name, int(run.Replicas()))
	if wait := time.Until(run.Status.StartTime.Add(4 * time.Second)); wait > 0 {
		time.Sleep(wait) // the fault's moment, not a wait for a state
	}
	return run
}

// TestEmulatorPausedMidRun freezes the emulator (gateway and emulator
// processes, SIGSTOP) for 10 s in the middle of the load, then lets it go
// on (SIGCONT). A frozen emulator is a Spanner that stops answering: its
// connections stay open and calls hang, the worst case for a client.
// Stopping it for real (hack/emulator.sh stop, start) would lose every
// instance and database it holds, which Cloud Spanner never does: the run
// would fail on a missing database, not on the outage. The run must end
// with the outage in its figures: every runner's result merged exactly,
// the calls the frozen emulator held answered late (the slowest at least
// 9 s), none lost, nothing left.
func TestEmulatorPausedMidRun(t *testing.T) {
	kustomizePassOnly(t)
	ns := newNamespace(t, "e2e-fault-emu")
	run := faultRun(t, ns)
	create(t, run)
	run = intoLoad(t, run)

	pgid := emulatorProcessGroup(t)
	if err := syscall.Kill(-pgid, syscall.SIGSTOP); err != nil {
		t.Fatalf("pausing the emulator (process group %d): %v", pgid, err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			if err := syscall.Kill(-pgid, syscall.SIGCONT); err != nil {
				t.Errorf("resuming the emulator (process group %d): %v", pgid, err)
			}
		}
	}
	t.Cleanup(resume) // whatever happens, the suite's emulator goes on
	t.Logf("emulator paused (process group %d)", pgid)
	time.Sleep(10 * time.Second) // the outage itself
	resume()
	resumedAt := time.Now()
	t.Logf("emulator resumed after 10 s")

	run, _ = survived(t, run, resumedAt, "after the emulator resumed")
	// The calls the frozen emulator held were answered once it went on:
	// the outage shows as their latency, not as errors, and no operation
	// is lost.
	o := run.Status.Overall
	t.Logf("counted: %d operations, %d errors, %d not found, p99 %s, max %s", o.Count, o.Errors, o.NotFound, p99Of(o), maxOf(o))
	if o.Latency == nil || o.Latency.Max == nil || o.Latency.Max.Duration < 9*time.Second {
		t.Errorf("the emulator did not answer for 10 s, yet the slowest operation took %s: the outage is not in the result", maxOf(o))
	}
	requireNoLostOperation(t, run)
	requireInstanceReleased(t, run)
}

// TestAPIServerRestartedMidRun restarts kube-apiserver
// (hack/cluster-restart.sh) in the middle of the load: the runners' and
// the manager's watches break, and every call fails until it is back. The
// run must still complete with the exact merge of both runners.
func TestAPIServerRestartedMidRun(t *testing.T) {
	kustomizePassOnly(t)
	ns := newNamespace(t, "e2e-fault-api")
	run := faultRun(t, ns)
	create(t, run)
	run = intoLoad(t, run)

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(suite.root, "hack", "cluster-restart.sh"), "kube-apiserver").CombinedOutput()
	if err != nil {
		t.Fatalf("hack/cluster-restart.sh kube-apiserver: %v\n%s", err, out)
	}
	t.Logf("kube-apiserver restarted: %s", lastLine(string(out)))
	back := time.Now()

	run, _ = survived(t, run, back, "after the API server was back")
	requireInstanceReleased(t, run)
}

// TestManagerKilledDuringAggregation kills the manager's process (SIGKILL,
// what the kernel's OOM killer sends) the moment the run's phase turns
// Aggregating, as seen through a watch. The container restarts, the new
// manager takes the lease and aggregates again: one report, one
// Succeeded, the exact merge.
func TestManagerKilledDuringAggregation(t *testing.T) {
	kustomizePassOnly(t)
	ns := newNamespace(t, "e2e-fault-oom")
	run := faultRun(t, ns)
	create(t, run)
	run = waitRun(t, ns, run.Name, runTimeout, "to release its runners", isRunning)

	pod := managerPod(t)
	if len(pod.Status.ContainerStatuses) != 1 {
		t.Fatalf("manager pod %s: want one container, got %d", pod.Name, len(pod.Status.ContainerStatuses))
	}
	restarts := pod.Status.ContainerStatuses[0].RestartCount
	pid := taskPID(t, strings.TrimPrefix(pod.Status.ContainerStatuses[0].ContainerID, "containerd://"))

	seen := awaitPhase(t, ns, run.Name, v1alpha1.PhaseAggregating, runTimeout)
	seenAt := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("killing the manager (pid %d): %v", pid, err)
	}
	killedAt := time.Now()
	report := &corev1.ConfigMap{}
	err := suite.c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: v1alpha1.ResultConfigMapName(seen)}, report)
	t.Logf("killed the manager (pid %d) %s after the watch delivered phase Aggregating; the report ConfigMap existed at the kill: %v",
		pid, killedAt.Sub(seenAt), err == nil)
	if err == nil {
		// The aggregation had ended (its report written) before the kill:
		// what follows would prove a restart after it, not during it.
		t.Fatalf("the run's report %s existed %s after phase Aggregating was seen: the kill came after the aggregation, not during it",
			report.Name, killedAt.Sub(seenAt))
	}

	eventually(t, time.Minute, "the manager container to restart", func(ctx context.Context) (bool, string) {
		p := &corev1.Pod{}
		if err := suite.c.Get(ctx, client.ObjectKeyFromObject(&pod), p); err != nil {
			return false, err.Error()
		}
		if len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].RestartCount <= restarts {
			return false, fmt.Sprintf("pod %s: restart count still %d", p.Name, restarts)
		}
		return true, ""
	})
	run, _ = survived(t, run, killedAt, "after the kill")
	requireInstanceReleased(t, run)
}

// TestRunnerNetworkCut drops every packet in and out of runner 1's network
// namespace for 5 s (iptables DROP inside the pod's own namespace,
// entered with nsenter on its process), then restores it. Its calls to
// the emulator and its watch of the control ConfigMap stall; the run must
// still merge both runners' results exactly.
func TestRunnerNetworkCut(t *testing.T) {
	kustomizePassOnly(t)
	ns := newNamespace(t, "e2e-fault-net")
	run := faultRun(t, ns)
	create(t, run)
	run = intoLoad(t, run)
	ids := runningContainers(t, ns, run.Name, 2)
	pid := strconv.Itoa(taskPID(t, ids[1]))

	rules := [][]string{{"INPUT", "-j", "DROP"}, {"OUTPUT", "-j", "DROP"}}
	iptables := func(op string, rule []string) error {
		args := append([]string{"-t", pid, "-n", "iptables", "-w", op}, rule...)
		if out, err := exec.CommandContext(t.Context(), "nsenter", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("nsenter %s: %w: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	inserted := 0
	restore := func() {
		for ; inserted > 0; inserted-- {
			if err := iptables("-D", rules[inserted-1]); err != nil {
				t.Errorf("restoring runner 1's network: %v", err)
			}
		}
	}
	t.Cleanup(restore)
	for _, r := range rules {
		if err := iptables("-I", r); err != nil {
			t.Fatalf("cutting runner 1's network: %v", err)
		}
		inserted++
	}
	t.Logf("cut runner 1's network (pid %s)", pid)
	time.Sleep(5 * time.Second) // the cut itself
	restore()
	restoredAt := time.Now()

	run, merged := survived(t, run, restoredAt, "after the network came back")
	for _, s := range merged.Shards {
		t.Logf("shard %d: %d sends missed (in-flight cap)", s.Index, s.Missed)
	}
	o := run.Status.Overall
	t.Logf("counted: %d operations, %d errors, p99 %s, max %s", o.Count, o.Errors, p99Of(o), maxOf(o))
	requireNoLostOperation(t, run)
	requireInstanceReleased(t, run)
}

// TestEphemeralRunDeletedWhileManagerDown scales the manager to zero,
// deletes an Ephemeral run while its runners send load, and scales the
// manager back: the finalizer must hold the run until the new manager
// deleted its instance and database, then let it go.
func TestEphemeralRunDeletedWhileManagerDown(t *testing.T) {
	kustomizePassOnly(t)
	ns := newNamespace(t, "e2e-fault-del")
	run := faultRun(t, ns)
	create(t, run)
	run = waitRun(t, ns, run.Name, runTimeout, "to release its runners", isRunning)
	if !controllerutil.ContainsFinalizer(run, v1alpha1.FinalizerInstance) {
		t.Fatalf("an Ephemeral run without the finalizer %s: %v", v1alpha1.FinalizerInstance, run.Finalizers)
	}
	if !slices.Contains(emulatorInstances(t), run.Spec.Target.Instance.Name) {
		t.Fatalf("instance %s is not in the emulator while the run runs", run.Spec.Target.Instance.Name)
	}

	replicas := scaleManager(t, 0)
	t.Cleanup(func() { scaleManager(t, replicas) }) // the suite needs its manager
	eventually(t, time.Minute, "no manager pod", func(ctx context.Context) (bool, string) {
		pods := &corev1.PodList{}
		if err := suite.c.List(ctx, pods, client.InNamespace(managerNamespace), client.MatchingLabels(managerLabels)); err != nil {
			return false, err.Error()
		}
		return len(pods.Items) == 0, fmt.Sprintf("%d manager pods", len(pods.Items))
	})
	if err := suite.c.Delete(t.Context(), run); err != nil {
		t.Fatalf("deleting the run: %v", err)
	}
	held, err := getRun(t.Context(), ns, run.Name)
	if err != nil || held.DeletionTimestamp.IsZero() {
		t.Fatalf("with the manager down the run must stay, marked for deletion, held by its finalizer: %v %+v", err, held.ObjectMeta)
	}
	downAt := time.Now()
	scaleManager(t, replicas)
	t.Logf("deleted the run with the manager down, then scaled the manager back to %d", replicas)

	eventually(t, 2*time.Minute, "the deleted run to be finalized and gone", func(ctx context.Context) (bool, string) {
		return gone(ctx, run)
	})
	t.Logf("run gone %s after the delete", time.Since(downAt).Round(time.Second))
	if name := run.Spec.Target.Instance.Name; slices.Contains(emulatorInstances(t), name) {
		t.Errorf("instance %s leaked: still in the emulator after its run was deleted", name)
	}
	eventually(t, 90*time.Second, "the run's pods to be gone", func(ctx context.Context) (bool, string) {
		pods := &corev1.PodList{}
		if err := suite.c.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelRun: run.Name}); err != nil {
			return false, err.Error()
		}
		return len(pods.Items) == 0, fmt.Sprintf("%d pods of the run left", len(pods.Items))
	})
}

// requireInstanceReleased waits until the finished run's Ephemeral
// instance is deleted (status.target.deletionTime set, finalizer gone)
// and checks with the emulator that it really is.
func requireInstanceReleased(t *testing.T, run *v1alpha1.BenchmarkRun) {
	t.Helper()
	run = waitRun(t, run.Namespace, run.Name, time.Minute, "to release its Ephemeral instance", func(r *v1alpha1.BenchmarkRun) bool {
		return r.Status.Target != nil && r.Status.Target.DeletionTime != nil && !controllerutil.ContainsFinalizer(r, v1alpha1.FinalizerInstance)
	})
	if name := run.Spec.Target.Instance.Name; slices.Contains(emulatorInstances(t), name) {
		t.Errorf("instance %s leaked: status.target says deleted at %s, the emulator still has it", name, run.Status.Target.DeletionTime)
	}
}

// emulatorInstances lists the instances of the suite's project in the
// emulator, by id, through its REST gateway (hack/e2e.sh and demo.sh serve
// REST on the gRPC port + 10).
func emulatorInstances(t *testing.T) []string {
	t.Helper()
	host, port, err := net.SplitHostPort(suite.emulatorHost)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	sample, err := readSample()
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://%s/v1/projects/%s/instances", net.JoinHostPort(host, strconv.Itoa(p+10)), sample.Spec.Target.Project)
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("listing the emulator's instances (%s): %v", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	var list struct {
		Instances []struct {
			Name string `json:"name"`
		} `json:"instances"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("listing the emulator's instances (%s): status %s, %v", url, resp.Status, err)
	}
	var ids []string
	for _, i := range list.Instances {
		ids = append(ids, i.Name[strings.LastIndex(i.Name, "/")+1:])
	}
	return ids
}

// emulatorProcessGroup is the process group of the suite's emulator:
// hack/emulator.sh starts gateway_main as a group leader (setsid) and
// records its pid in bin/emulator.pid; emulator_main is in the group.
func emulatorProcessGroup(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(suite.root, "bin", "emulator.pid"))
	if err != nil {
		t.Fatalf("the emulator's pid (hack/emulator.sh writes bin/emulator.pid): %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("bin/emulator.pid: %v", err)
	}
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil || strings.TrimSpace(string(comm)) != "gateway_main" {
		t.Fatalf("pid %d of bin/emulator.pid is not a running gateway_main (%q, %v)", pid, comm, err)
	}
	if pgid, err := syscall.Getpgid(pid); err != nil || pgid != pid {
		t.Fatalf("gateway_main %d does not lead its process group (pgid %d, %v)", pid, pgid, err)
	}
	return pid
}

// awaitPhase watches the run until its phase is phase and returns it as
// the watch delivered it; a run that finishes first fails the test.
func awaitPhase(t *testing.T, ns, name string, phase v1alpha1.BenchmarkRunPhase, timeout time.Duration) *v1alpha1.BenchmarkRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	for ctx.Err() == nil {
		w, err := suite.c.Watch(ctx, &v1alpha1.BenchmarkRunList{}, client.InNamespace(ns))
		if err != nil {
			t.Logf("watching runs in %s: %v; again", ns, err)
			time.Sleep(time.Second)
			continue
		}
		for ev := range w.ResultChan() {
			r, ok := ev.Object.(*v1alpha1.BenchmarkRun)
			if !ok || r.Name != name {
				continue
			}
			if r.Status.Phase == phase {
				w.Stop()
				return r
			}
			if r.IsFinished() {
				w.Stop()
				t.Fatalf("run %s/%s finished before its phase was seen %s: %s", ns, name, phase, describeRun(r))
			}
		}
	}
	t.Fatalf("run %s/%s: phase %s not seen within %s", ns, name, phase, timeout)
	return nil
}

// scaleManager sets the manager Deployment's replicas and returns the
// number it had.
func scaleManager(t *testing.T, n int32) int32 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dep := &appsv1.Deployment{}
	if err := suite.c.Get(ctx, client.ObjectKey{Namespace: managerNamespace, Name: managerDeployment}, dep); err != nil {
		t.Fatalf("reading the manager Deployment: %v", err)
	}
	was := ptr.Deref(dep.Spec.Replicas, 1)
	patch := client.MergeFrom(dep.DeepCopy())
	dep.Spec.Replicas = ptr.To(n)
	if err := suite.c.Patch(ctx, dep, patch); err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("scaling the manager to %d: %v", n, err)
	}
	return was
}

// requireNoLostOperation checks that every operation the load scheduled
// is in the result, as a success, an error or a send missed: rate times
// the measured time (the duration after the warm-up), within 1%.
func requireNoLostOperation(t *testing.T, run *v1alpha1.BenchmarkRun) {
	t.Helper()
	w := run.Spec.Workload.Resolved()
	measured := w.Duration.Duration
	if w.WarmUp != nil && w.WarmUp.Duration != nil {
		measured -= w.WarmUp.Duration.Duration
	}
	want := int64(*w.Load.Rate) * int64(measured/time.Second)
	o := run.Status.Overall
	got := o.Count + o.Errors + o.Missed
	if d := got - want; d*100 > want || -d*100 > want {
		t.Errorf("the result accounts for %d operations (%d ok, %d errors, %d missed); the load scheduled %d: operations were lost",
			got, o.Count, o.Errors, o.Missed, want)
	}
}

func maxOf(f *v1alpha1.ResultFigures) string {
	if f == nil || f.Latency == nil || f.Latency.Max == nil {
		return "-"
	}
	return f.Latency.Max.Duration.String()
}

func p99Of(f *v1alpha1.ResultFigures) string {
	if f == nil || f.Latency == nil || f.Latency.P99 == nil {
		return "-"
	}
	return f.Latency.P99.Duration.String()
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// survived waits for run to finish after a fault that ended at since
// (what says which), and requires what every fault test requires: the
// run succeeded, its result is the exact merge of both runners, and it
// ended once. It returns the finished run and its merged result.
func survived(t *testing.T, run *v1alpha1.BenchmarkRun, since time.Time, after string) (*v1alpha1.BenchmarkRun, *result.Document) {
	t.Helper()
	run = waitFinished(t, run.Namespace, run.Name, runTimeout)
	t.Logf("run finished %s %s: %s", time.Since(since).Round(time.Second), after, describeRun(run))
	requireSucceeded(t, run, v1alpha1.ReasonCompleted)
	merged := requireExactMerge(t, run, 0, 1)
	requireOneOutcome(t, run)
	return run, merged
}
