//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/runner/protocol"
)

// runTimeout bounds a run of the suite from creation to its outcome: the
// demo's 24 s of load, the dataset load, pod start and merging take about
// 35 s on 2 cores; the rest is headroom for a loaded CI machine.
const runTimeout = 3 * time.Minute

// TestDemoRun applies the newcomer's sample and checks what a user relies
// on: it succeeds from real pods; the status figures are the exact merge of
// the runners' shard results; the runners started together; and the
// runners ran restricted — as declared in their spec, and as the kernel
// actually applied it to their processes; and it made each Job once, with
// exactly its pods (requireEachChildOnce).
func TestDemoRun(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "e2e-demo")
	run := demoRun(t, ns, "demo")
	childJobs, childPods := watchChildren(t, ns, run.Name)
	create(t, run)

	// While the load runs: the runner processes on this node.
	waitRun(t, ns, run.Name, runTimeout, "to release its runners", isRunning)
	for i, id := range runningContainers(t, ns, run.Name, 2) {
		p := inspectContainer(t, id)
		t.Logf("runner %d: pid %d uid %s root %s", i, p.pid, p.uid, p.rootMountOptions)
		if p.uid != "65532 65532 65532 65532" || p.gid != "65532 65532 65532 65532" {
			t.Errorf("runner %d runs as uid %q gid %q, want 65532 (nonroot) throughout", i, p.uid, p.gid)
		}
		if p.capEff != "0000000000000000" {
			t.Errorf("runner %d has effective capabilities %s, want none", i, p.capEff)
		}
		if p.noNewPrivs != "1" {
			t.Errorf("runner %d: NoNewPrivs %q, want 1 (allowPrivilegeEscalation: false)", i, p.noNewPrivs)
		}
		if p.seccomp != "2" {
			t.Errorf("runner %d: Seccomp mode %q, want 2 (filter: RuntimeDefault)", i, p.seccomp)
		}
		if !strings.HasPrefix(p.rootMountOptions+",", "ro,") {
			t.Errorf("runner %d: / is mounted %q, want read-only", i, p.rootMountOptions)
		}
	}

	run = waitFinished(t, ns, run.Name, runTimeout)
	requireSucceeded(t, run, v1alpha1.ReasonCompleted)
	merged := requireExactMerge(t, run, 0, 1)
	if run.Status.StartSkew == nil || run.Status.StartSkew.Duration >= time.Second || run.Status.StartSkew.Duration < 0 {
		t.Errorf("status.startSkew = %v, want under 1s", run.Status.StartSkew)
	}
	for _, s := range merged.Shards {
		if d := s.Started.Sub(merged.Start); d < -time.Second || d > time.Second {
			t.Errorf("shard %d started %s away from the common start %s", s.Index, d, merged.Start)
		}
	}
	if run.Status.Overall.Count == 0 {
		t.Errorf("no successful operations: %+v", run.Status.Overall)
	}

	// The runner pods, kept by --keep-runners: the spec they ran with and
	// how they ended.
	pods, err := runnerPods(t.Context(), ns, run.Name)
	if err != nil || len(pods) != 2 {
		t.Fatalf("want the 2 runner pods kept, got %d (%v)", len(pods), err)
	}
	for _, p := range pods {
		requireRestricted(t, &p)
	}
	// The loader pods (2, demo.yaml's dataset.loaderPods), also kept: they
	// loaded the dataset before the runners existed, ran restricted and
	// exited 0.
	loaders, err := loaderPods(t.Context(), ns, run.Name)
	if err != nil || len(loaders) != 2 {
		t.Fatalf("want the 2 loader pods kept, got %d (%v)", len(loaders), err)
	}
	for i, p := range loaders {
		requireRestricted(t, &p)
		cs := p.Status.ContainerStatuses
		if p.Status.Phase != corev1.PodSucceeded || len(cs) != 1 || cs[0].State.Terminated == nil || cs[0].State.Terminated.ExitCode != 0 {
			t.Errorf("loader %d (pod %s): phase %s; want it to have exited 0", i, p.Name, p.Status.Phase)
		} else if end, first := cs[0].State.Terminated.FinishedAt.Time, earliestStart(pods); end.After(first) {
			t.Errorf("loader %d finished at %s, after the first runner started (%s); loading must come first", i, end, first)
		}
	}
	if ds := run.Status.Dataset; ds == nil || ds.Loaded != ds.Rows || ds.Rows == 0 {
		t.Errorf("status.dataset = %+v; want every row loaded", ds)
	}
	// Every pod the run ever had, not only those left: one loader Job of
	// exactly loaderPods pods, one runner Job of exactly replicas.
	requireEachChildOnce(t, run, childJobs, childPods)
	// They exit right after storing their results.
	eventually(t, time.Minute, "the runners to exit 0", func(ctx context.Context) (bool, string) {
		pods, err := runnerPods(ctx, ns, run.Name)
		if err != nil {
			return false, err.Error()
		}
		for i, p := range pods {
			cs := p.Status.ContainerStatuses
			if p.Status.Phase != corev1.PodSucceeded || len(cs) != 1 || cs[0].State.Terminated == nil || cs[0].State.Terminated.ExitCode != 0 {
				return false, fmt.Sprintf("runner %d (pod %s): phase %s", i, p.Name, p.Status.Phase)
			}
		}
		return true, ""
	})
}

// requireRestricted checks a runner pod's spec against the restricted Pod
// Security Standard (the namespace enforces it too: the pod would not exist
// otherwise).
func requireRestricted(t *testing.T, p *corev1.Pod) {
	t.Helper()
	psc := p.Spec.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod %s: pod securityContext %+v, want runAsNonRoot and the RuntimeDefault seccomp profile", p.Name, psc)
	}
	for _, c := range p.Spec.Containers {
		sc := c.SecurityContext
		switch {
		case sc == nil:
			t.Errorf("pod %s container %s: no securityContext", p.Name, c.Name)
		case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
			t.Errorf("pod %s container %s: root filesystem not read-only", p.Name, c.Name)
		case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
			t.Errorf("pod %s container %s: privilege escalation allowed", p.Name, c.Name)
		case sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" || len(sc.Capabilities.Add) > 0:
			t.Errorf("pod %s container %s: capabilities %+v, want drop ALL", p.Name, c.Name, sc.Capabilities)
		}
		if c.Image != image {
			t.Errorf("pod %s container %s: image %s, want the manager's %s", p.Name, c.Name, c.Image, image)
		}
	}
}

// TestRunnerKilledMidRun kills one runner's process outright (SIGKILL, as
// an OOM kill or a node failure would) while the load runs. The documented
// outcome: the run still succeeds, with reason PartialResults,
// status.partial set, and figures that are the exact merge of the runner
// that did report.
func TestRunnerKilledMidRun(t *testing.T) {
	kustomizePassOnly(t)
	t.Parallel()
	ns := newNamespace(t, "e2e-kill")
	run := demoRun(t, ns, "killed", withLoad(20*time.Second, 100))
	create(t, run)
	run = waitRun(t, ns, run.Name, runTimeout, "to release its runners", isRunning)
	ids := runningContainers(t, ns, run.Name, 2)
	// A few seconds into the load, so that the killed runner had sent some.
	if wait := time.Until(run.Status.StartTime.Add(4 * time.Second)); wait > 0 {
		time.Sleep(wait)
	}
	if out, err := ctr(t.Context(), "task", "kill", "--signal", "SIGKILL", ids[1]); err != nil {
		t.Fatalf("killing runner 1's container %s: %v: %s", ids[1], err, out)
	}
	t.Logf("killed runner 1 (container %s)", ids[1])

	run = waitFinished(t, ns, run.Name, runTimeout)
	requireSucceeded(t, run, v1alpha1.ReasonPartialResults)
	c := metaCondition(run, v1alpha1.ConditionSucceeded)
	if !strings.Contains(c.Message, "shard 1") {
		t.Errorf("the Succeeded message should name the missing shard 1: %q", c.Message)
	}
	requireExactMerge(t, run, 0)

	// Not retried: a late replacement would skew every merged figure.
	pods, err := runnerPods(t.Context(), ns, run.Name)
	if err != nil || len(pods) != 2 {
		t.Fatalf("want exactly 2 runner pods (the killed one not replaced), got %d (%v)", len(pods), err)
	}
	if p := pods[1]; p.Status.Phase != corev1.PodFailed {
		t.Errorf("killed runner's pod %s: phase %s, want Failed", p.Name, p.Status.Phase)
	}
}

func metaCondition(run *v1alpha1.BenchmarkRun, typ string) metav1.Condition {
	for _, c := range run.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return metav1.Condition{}
}

// TestManagerRestartMidRun deletes the manager pod while the runners send
// load; the Deployment starts a new one, which takes over the lease and
// finishes the run. There must be one correct result: Completed, not
// partial, the exact merge, one start time, one set of runner pods.
//
// Not parallel: it stops the manager that every other test's runs need
// (Go runs the sequential tests first, then the parallel ones together).
func TestManagerRestartMidRun(t *testing.T) {
	kustomizePassOnly(t)
	ns := newNamespace(t, "e2e-restart")
	run := demoRun(t, ns, "restart", withLoad(20*time.Second, 100))
	create(t, run)
	run = waitRun(t, ns, run.Name, runTimeout, "to release its runners", isRunning)
	startTime := run.Status.StartTime.DeepCopy()

	old := managerPod(t)
	if err := suite.c.Delete(t.Context(), &old); err != nil {
		t.Fatalf("deleting the manager pod %s: %v", old.Name, err)
	}
	t.Logf("deleted the manager pod %s during the load", old.Name)

	run = waitFinished(t, ns, run.Name, runTimeout)
	requireSucceeded(t, run, v1alpha1.ReasonCompleted)
	requireExactMerge(t, run, 0, 1)
	if !run.Status.StartTime.Equal(startTime) {
		t.Errorf("the start time changed across the restart: %v, then %v", startTime, run.Status.StartTime)
	}
	control := runConfigMap(t, ns, protocol.ControlConfigMapName(run.Name))
	if _, ok, err := protocol.DecodeStart(control.Data); !ok || err != nil {
		t.Errorf("control ConfigMap has no start time (%v)", err)
	}
	now := managerPod(t)
	if now.Name == old.Name {
		t.Errorf("the manager pod %s was not replaced", old.Name)
	}
	requireOneOutcome(t, run)
}

// requireOneOutcome checks that a finished run ran once and ended once,
// whatever happened on the way: one set of runner pods (none replaced),
// the one runner and one loader Job (kept, like the runners, by
// --keep-runners), one report ConfigMap and one completion event.
func requireOneOutcome(t *testing.T, run *v1alpha1.BenchmarkRun) {
	t.Helper()
	ns := run.Namespace
	pods, err := runnerPods(t.Context(), ns, run.Name)
	if want := int(run.Replicas()); err != nil || len(pods) != want {
		t.Errorf("want the %d runner pods of one Job, got %d (%v)", want, len(pods), err)
	}
	jobs := &batchv1.JobList{}
	if err := suite.c.List(t.Context(), jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, j := range jobs.Items {
		names = append(names, j.Name)
	}
	if want := []string{v1alpha1.LoaderJobName(run), v1alpha1.RunnerJobName(run)}; !slices.Equal(names, want) {
		t.Errorf("the namespace holds Jobs %v; want exactly %v", names, want)
	}
	// One report, one completion event.
	cms := &corev1.ConfigMapList{}
	if err := suite.c.List(t.Context(), cms, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelRun: run.Name}); err != nil {
		t.Fatal(err)
	}
	reports := 0
	for _, cm := range cms.Items {
		if strings.HasSuffix(cm.Name, "-result") {
			reports++
		}
	}
	if reports != 1 {
		t.Errorf("want one report ConfigMap, got %d", reports)
	}
	// The manager's event broadcaster writes the event after the status,
	// asynchronously: on a loaded host it can land after the run was seen
	// finished (a one-shot List once found none, and the event a moment
	// later). Wait for it, then count.
	completed := int32(0)
	eventually(t, 30*time.Second, "the run's completion event", func(ctx context.Context) (bool, string) {
		events := &corev1.EventList{}
		if err := suite.c.List(ctx, events, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		completed = 0
		for _, e := range events.Items {
			if e.InvolvedObject.Name == run.Name && (e.Reason == v1alpha1.ReasonCompleted || e.Reason == v1alpha1.ReasonPartialResults) {
				completed += max(e.Count, 1)
			}
		}
		return completed > 0, fmt.Sprintf("no %s or %s event of run %s yet", v1alpha1.ReasonCompleted, v1alpha1.ReasonPartialResults, run.Name)
	})
	if completed != 1 {
		t.Errorf("want one completion event, got %d", completed)
	}
}

// managerPod returns the one running, ready manager pod.
func managerPod(t *testing.T) corev1.Pod {
	t.Helper()
	var pod corev1.Pod
	eventually(t, 2*time.Minute, "one ready manager pod", func(ctx context.Context) (bool, string) {
		pods := &corev1.PodList{}
		if err := suite.c.List(ctx, pods, client.InNamespace(managerNamespace), client.MatchingLabels(managerLabels)); err != nil {
			return false, err.Error()
		}
		var ready []corev1.Pod
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && podReady(&p) {
				ready = append(ready, p)
			}
		}
		if len(ready) != 1 {
			return false, fmt.Sprintf("%d ready manager pods of %d", len(ready), len(pods.Items))
		}
		pod = ready[0]
		return true, ""
	})
	return pod
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// TestDeleteRunRemovesPods deletes a run while its runners send load: the
// garbage collector, through the owner references, must remove the runner
// Job and pods and every other child, and the pods must actually stop.
func TestDeleteRunRemovesPods(t *testing.T) {
	kustomizePassOnly(t)
	t.Parallel()
	ns := newNamespace(t, "e2e-delete")
	run := demoRun(t, ns, "deleted", withLoad(60*time.Second, 50))
	create(t, run)
	run = waitRun(t, ns, run.Name, runTimeout, "to release its runners", isRunning)
	runningContainers(t, ns, run.Name, 2)

	if err := suite.c.Delete(t.Context(), run); err != nil {
		t.Fatalf("deleting the run: %v", err)
	}
	eventually(t, 90*time.Second, "the run's pods to be gone", func(ctx context.Context) (bool, string) {
		pods, err := runnerPods(ctx, ns, run.Name)
		if err != nil {
			return false, err.Error()
		}
		if len(pods) > 0 {
			names := []string{}
			for _, p := range pods {
				names = append(names, p.Name+"="+string(p.Status.Phase))
			}
			return false, "pods left: " + strings.Join(names, ", ")
		}
		return true, ""
	})
	children := []client.Object{
		&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: v1alpha1.RunnerJobName(run)}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: protocol.ControlConfigMapName(run.Name)}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: protocol.ShardConfigMapName(run.Name, 0)}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: v1alpha1.RunnerServiceAccountName(run)}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: v1alpha1.RunnerServiceAccountName(run)}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: v1alpha1.RunnerServiceAccountName(run)}},
	}
	for _, obj := range children {
		eventually(t, 30*time.Second, fmt.Sprintf("%T %s to be collected", obj, obj.GetName()), func(ctx context.Context) (bool, string) {
			return gone(ctx, obj)
		})
	}
}

// TestRunnerRBAC asks the API server what a run's runner service account
// may do (kubectl auth can-i --as): its own control and shard ConfigMaps,
// nothing else — no Secrets, no other run's objects in the same or another
// namespace, no listing.
func TestRunnerRBAC(t *testing.T) {
	kustomizePassOnly(t)
	t.Parallel()
	ns := newNamespace(t, "e2e-rbac")
	other := newNamespace(t, "e2e-rbac-other")
	// Two short runs in one namespace, one in another: every Role exists
	// for real, so a too-broad one would show.
	short := func(r *v1alpha1.BenchmarkRun) {
		withLoad(4*time.Second, 20)(r)
		withReplicas(1)(r)
		r.Spec.Workload.WarmUp = nil
	}
	for _, r := range []*v1alpha1.BenchmarkRun{demoRun(t, ns, "alpha", short), demoRun(t, ns, "beta", short), demoRun(t, other, "alpha", short)} {
		create(t, r)
	}
	for _, n := range []string{"alpha", "beta"} {
		waitFinished(t, ns, n, runTimeout)
	}
	waitFinished(t, other, "alpha", runTimeout)

	as := "--as=system:serviceaccount:" + ns + ":alpha-runner"
	cases := []struct {
		verb, resource, namespace string
		want                      bool
	}{
		{"get", "configmaps/alpha-control", ns, true},
		{"update", "configmaps/alpha-shard-0", ns, true},
		{"get", "secrets", ns, false},
		{"list", "secrets", ns, false},
		{"get", "configmaps/beta-control", ns, false},
		{"update", "configmaps/beta-shard-0", ns, false},
		{"get", "configmaps/beta-result", ns, false},
		{"get", "configmaps/alpha-result", ns, false},
		{"list", "configmaps", ns, false},
		{"create", "configmaps", ns, false},
		{"delete", "configmaps/alpha-shard-0", ns, false},
		{"get", "configmaps/alpha-control", other, false},
		{"get", "benchmarkruns.bench.spanbench.io", ns, false},
		{"get", "pods", ns, false},
		{"create", "pods", ns, false},
	}
	for _, c := range cases {
		out, err := kubectlCtx(t.Context(), 20*time.Second, "auth", "can-i", c.verb, c.resource, "-n", c.namespace, as)
		got := err == nil && strings.TrimSpace(out) == "yes"
		if !got && strings.TrimSpace(out) != "no" {
			t.Errorf("kubectl auth can-i %s %s -n %s: %v: %s", c.verb, c.resource, c.namespace, err, out)
			continue
		}
		if got != c.want {
			t.Errorf("%s may %s %s in %s: %v, want %v", strings.TrimPrefix(as, "--as="), c.verb, c.resource, c.namespace, got, c.want)
		}
	}
}

// earliestStart is when the first of pods started.
func earliestStart(pods map[int]corev1.Pod) time.Time {
	var first time.Time
	for _, p := range pods {
		if st := p.Status.StartTime; st != nil && (first.IsZero() || st.Time.Before(first)) {
			first = st.Time
		}
	}
	return first
}
