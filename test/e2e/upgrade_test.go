//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/await"
	"github.com/spanbench/spanbench/runner/protocol"
)

// previousManifestsEnv names the previous release's e2e install, rendered
// on its image (localhost/spanbench/spanbench:previous) by
// hack/previous-release.sh, which hack/e2e.sh runs.
const previousManifestsEnv = "SPANBENCH_E2E_PREVIOUS_MANIFESTS"

// The upgrade run's load: short. Its loader cannot start until the test
// labels the node with upgradeGateLabel (the run's nodeSelector names it,
// and runners' placement is the loaders' too): the run stays loading under
// the previous release, whatever the emulator's speed, until that manager
// is stopped and this release installed. (It used to be held there by
// 100,000 rows for its one loader: 10 s on a quiet host, 85 s and more
// beside the unit stage, every second of it on the suite's sequential
// part.)
//
// A result long enough to need chunks (over protocol.MaxResultBytes, 900
// KiB compressed) is out of the emulator's reach here: 16 operations in 1 s
// intervals need about 800 operations/s for 5 minutes (measured with the HDR
// encoding: 0.17 KiB per operation and interval at 50 latencies), and the
// emulator served 35/s on this machine (2 shared cores) in a first version
// of this test, 99 KB of result in 4 minutes. So the test checks the grant
// itself, on the real API server, as the runner's identity: the chunk
// write a runner makes (a server-side apply of its first chunk's name,
// dry-run) is refused under the previous release's Role and allowed once
// the upgraded manager has reconciled the run; the envtest scenario
// TestARunStartedBeforeAnUpgradeStoresItsChunkedResultAfterIt stores a
// whole chunked result through that path.
const (
	upgradeLoad      = 10 * time.Second
	upgradeRate      = 100
	upgradeGateLabel = "e2e.spanbench.io/upgrade-gate"
)

// TestUpgradeKeepsARunInFlight installs the previous release (its
// manifests and image, built from its commit), starts a run with it, stops
// that manager once the run is loading (its Role, written by the previous
// release, has no rule for result chunks: a runner's chunk write is
// refused), and upgrades to this release (kubectl apply of the suite's
// install, as a user upgrading would), then lets the run's pods onto the
// node (upgradeGateLabel). The upgraded manager takes the run
// on, updates its Role in place (same object) so that the runners of this
// release it starts may write their result's chunks, and the run must
// succeed. Kustomize pass only; not parallel: it replaces the install
// every other test needs, and leaves this release's installed, as the
// suite's setup does.
func TestUpgradeKeepsARunInFlight(t *testing.T) {
	kustomizePassOnly(t)
	previous := os.Getenv(previousManifestsEnv)
	if previous == "" {
		t.Fatalf("$%s is not set: hack/previous-release.sh --import builds the previous release and prints its manifests' path (hack/e2e.sh does)", previousManifestsEnv)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Minute)
	defer cancel()

	// The previous release, installed as a user had it.
	if err := removeAnyInstall(ctx); err != nil {
		t.Fatal(err)
	}
	upgraded := false
	t.Cleanup(func() {
		if !upgraded {
			// Whatever failed, the suite's other tests need this release.
			if err := install(context.Background()); err != nil {
				t.Errorf("reinstalling this release after the failed upgrade test: %v", err)
			}
		}
	})
	if out, err := kubectlCtx(ctx, time.Minute, "apply", "-f", previous); err != nil {
		t.Fatalf("installing the previous release (kubectl apply -f %s): %v: %s", previous, err, out)
	}
	managerReady(ctx, t, "the previous release's")
	if img := managerPod(t).Spec.Containers[0].Image; img != previousImage {
		t.Fatalf("the previous release's manager runs %s, want %s", img, previousImage)
	}

	ns := newNamespace(t, "e2e-upgrade")
	run := demoRun(t, ns, "upgrade", withLoad(upgradeLoad, upgradeRate), withReplicas(1), func(r *v1alpha1.BenchmarkRun) {
		r.Spec.Workload.Operations = upgradeOperations()
		r.Spec.Workload.Dataset.LoaderPods = ptr.To[int32](1)
		r.Spec.Runners.NodeSelector = map[string]v1alpha1.LabelValue{upgradeGateLabel: v1alpha1.LabelValue(ns)}
	})
	create(t, run)

	// The previous release's Role exists once the run loads: stop that
	// manager before it can start any runner (it cannot: the loader waits
	// for the gate).
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: v1alpha1.RunnerServiceAccountName(run)}}
	eventually(t, 2*time.Minute, "the previous release to create the run's Role", func(ctx context.Context) (bool, string) {
		err := suite.c.Get(ctx, client.ObjectKeyFromObject(role), role)
		return err == nil, fmt.Sprint(err)
	})
	if out, err := kubectlCtx(ctx, 30*time.Second, "-n", managerNamespace, "scale", "deployment/"+managerDeployment, "--replicas=0"); err != nil {
		t.Fatalf("stopping the previous release's manager: %v: %s", err, out)
	}
	eventually(t, 2*time.Minute, "the previous release's manager to be gone", func(ctx context.Context) (bool, string) {
		pods := &corev1.PodList{}
		if err := suite.c.List(ctx, pods, client.InNamespace(managerNamespace), client.MatchingLabels(managerLabels)); err != nil {
			return false, err.Error()
		}
		return len(pods.Items) == 0, fmt.Sprintf("%d manager pods", len(pods.Items))
	})
	if err := suite.c.Get(ctx, client.ObjectKeyFromObject(role), role); err != nil {
		t.Fatal(err)
	}
	if chunkRule(role) {
		t.Fatalf("the previous release's Role %s already allows result chunks (rules %+v): this upgrade proves nothing; set hack/previous-release.commit to a release without them", role.Name, role.Rules)
	}
	runnerJob := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: v1alpha1.RunnerJobName(run)}}
	if err := suite.c.Get(ctx, client.ObjectKeyFromObject(runnerJob), runnerJob); !apierrors.IsNotFound(err) {
		t.Fatalf("the previous release created the runner Job before it was stopped (%v): its runners do not need the new rule; the test proves nothing", err)
	}
	oldRole := role.UID
	if err := writeChunkAsRunner(ctx, t, run); !apierrors.IsForbidden(err) {
		t.Fatalf("a runner's chunk write under the previous release's Role: %v; want Forbidden (else this test proves nothing)", err)
	}

	// The upgrade: this release's install applied over the previous one.
	t.Logf("upgrading with the run %s", describeRun(mustGetRun(ctx, t, ns, run.Name)))
	if out, err := kubectlCtx(ctx, time.Minute, "apply", "-k", filepath.Join(suite.root, installDir)); err != nil {
		t.Fatalf("upgrading (kubectl apply -k %s): %v: %s", installDir, err, out)
	}
	openGate(t, upgradeGateLabel, ns)
	managerReady(ctx, t, "the upgraded")
	upgraded = true
	if err := awaitAdmission(ctx); err != nil {
		t.Error(err)
	}
	if err := checkInstall(ctx); err != nil {
		t.Errorf("after the upgrade: %v", err)
	}

	// Once the upgraded manager started the runners, it has reconciled
	// the run's access.
	waitRun(t, ns, run.Name, runTimeout, "to start its runners under the upgraded manager", func(r *v1alpha1.BenchmarkRun) bool {
		return r.IsFinished() || r.Status.Phase == v1alpha1.PhaseWaitingForRunners || isRunning(r)
	})
	if err := suite.c.Get(ctx, client.ObjectKeyFromObject(runnerJob), runnerJob); err == nil {
		if img := runnerJob.Spec.Template.Spec.Containers[0].Image; img != image {
			t.Errorf("the runner Job runs %s, want this release's %s", img, image)
		}
	}
	await.Eventually(t, await.Poll{Within: 30 * time.Second, Every: time.Second}, "a runner's chunk write to be allowed after the upgrade",
		func() (bool, string) {
			err := writeChunkAsRunner(ctx, t, run)
			return err == nil, fmt.Sprint(err)
		})

	run = waitFinished(t, ns, run.Name, runTimeout)
	requireSucceeded(t, run, v1alpha1.ReasonCompleted)
	if err := suite.c.Get(ctx, client.ObjectKeyFromObject(role), role); err != nil {
		t.Fatal(err)
	}
	if !chunkRule(role) || role.UID != oldRole {
		t.Errorf("the run's Role after the upgrade: uid %s (was %s), rules %+v; want the same Role with the rule for result chunks", role.UID, oldRole, role.Rules)
	}
}

// writeChunkAsRunner makes the write a runner makes to store its result's
// first chunk (protocol.ApplyChunk: a server-side apply of that very
// name), as the run's runner service account, dry-run: the API server
// authorizes it as it would the runner's, and stores nothing.
func writeChunkAsRunner(ctx context.Context, t *testing.T, run *v1alpha1.BenchmarkRun) error {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", suite.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + run.Namespace + ":" + v1alpha1.RunnerServiceAccountName(run)}
	c, err := client.New(cfg, client.Options{Scheme: suite.c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: protocol.ShardChunkNames(run.Name, 0)[0]},
		Data:       map[string]string{"e2e": "dry-run"}}
	return protocol.ApplyChunk(ctx, client.NewDryRunClient(c), cm, "spanbench-runner")
}

// openGate labels every node key=value, so that pods selecting that label
// can run, and removes the label when t ends.
func openGate(t *testing.T, key, value string) {
	t.Helper()
	nodes := &corev1.NodeList{}
	if err := suite.c.List(t.Context(), nodes); err != nil || len(nodes.Items) == 0 {
		t.Fatalf("listing the nodes: %d, %v", len(nodes.Items), err)
	}
	for _, n := range nodes.Items {
		kubectl(t, "label", "node", n.Name, key+"="+value)
		t.Cleanup(func() {
			if out, err := kubectlCtx(context.Background(), 30*time.Second, "label", "node", n.Name, key+"-"); err != nil {
				t.Errorf("removing the label %s from node %s: %v: %s", key, n.Name, err, out)
			}
		})
	}
	t.Logf("labelled the nodes %s=%s: the run's pods may start", key, value)
}

// previousImage is the image hack/previous-release.sh builds.
const previousImage = "localhost/spanbench/spanbench:previous"

// managerReady waits for the CRD and one ready manager pod of the
// deployment's current revision.
func managerReady(ctx context.Context, t *testing.T, which string) {
	t.Helper()
	if out, err := kubectlCtx(ctx, 40*time.Second, "wait", "--for=condition=Established", "crd/"+crdName, "--timeout=30s"); err != nil {
		t.Fatalf("%s BenchmarkRun CRD is not established: %v: %s", which, err, out)
	}
	if out, err := kubectlCtx(ctx, 130*time.Second, "-n", managerNamespace, "rollout", "status", "deployment/"+managerDeployment, "--timeout=120s"); err != nil {
		logs, _ := kubectlCtx(ctx, 10*time.Second, "-n", managerNamespace, "logs", "-l", managerSelector, "--tail=30")
		t.Fatalf("%s manager did not become ready: %v: %s\n%s", which, err, out, logs)
	}
}

// chunkRule says whether role lets a runner create result chunks.
func chunkRule(role *rbacv1.Role) bool {
	return slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Verbs, "create") })
}

func mustGetRun(ctx context.Context, t *testing.T, ns, name string) *v1alpha1.BenchmarkRun {
	t.Helper()
	run, err := getRun(ctx, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// upgradeOperations are reads by key of the demo's YCSB table, 15 s
// stale: no SQL, which the emulator answers by scanning the whole table.
func upgradeOperations() []v1alpha1.OperationSpec {
	return []v1alpha1.OperationSpec{{Name: "read", Type: v1alpha1.OpRead, Weight: 1,
		Staleness: &v1alpha1.StalenessSpec{Exact: &metav1.Duration{Duration: 15 * time.Second}}}}
}
