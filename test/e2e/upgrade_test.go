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
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/protocol"
)

// previousManifestsEnv names the previous release's e2e install, rendered
// on its image (localhost/spanbench/spanbench:previous) by
// hack/previous-release.sh, which hack/e2e.sh runs.
const previousManifestsEnv = "SPANBENCH_E2E_PREVIOUS_MANIFESTS"

// The upgrade run's load: its one shard's result must be longer than a
// ConfigMap holds inline (protocol.MaxResultBytes, 900 KiB compressed), so
// that its runner stores it in chunks, which the previous release's Role
// does not allow. 16 operations (the most a run has) in 1 s intervals, at
// 100 latencies per operation and interval, come to about 280 bytes per
// histogram compressed (measured with the HDR encoding): 4 minutes make
// about 2 MiB of latency and service histograms.
const (
	upgradeOps      = 16
	upgradeDuration = 4 * time.Minute
	upgradeRate     = upgradeOps * 100
)

// TestUpgradeKeepsARunInFlight installs the previous release (its
// manifests and image, built from its commit), starts a run with it, stops
// that manager once the run is loading (its Role, written by the previous
// release, has no rule for result chunks), and upgrades to this release
// (kubectl apply of the suite's install, as a user upgrading would). The
// upgraded manager starts the runners of this release, whose result must
// be stored in chunks; the run must succeed, with the result chunked and
// the run's Role updated in place to this release's grants. Kustomize pass
// only; not parallel: it replaces the install every other test needs, and
// leaves this release's installed, as the suite's setup does.
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
	run := demoRun(t, ns, "upgrade", withLoad(upgradeDuration, upgradeRate), withReplicas(1), func(r *v1alpha1.BenchmarkRun) {
		r.Spec.Workload.Interval = &metav1.Duration{Duration: time.Second}
		r.Spec.Workload.WarmUp = nil
		r.Spec.Workload.Operations = upgradeOperations()
		// A dataset that takes the loader a while: the previous manager
		// is stopped while it loads.
		r.Spec.Workload.Dataset.Rows = ptr.To[int64](20_000)
		r.Spec.Workload.Dataset.LoaderPods = ptr.To[int32](1)
	})
	create(t, run)

	// The previous release's Role exists once the run loads: stop that
	// manager before it can start any runner.
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

	// The upgrade: this release's install applied over the previous one.
	upgraded = true
	t.Logf("upgrading with the run %s", describeRun(mustGetRun(ctx, t, ns, run.Name)))
	if out, err := kubectlCtx(ctx, time.Minute, "apply", "-k", filepath.Join(suite.root, installDir)); err != nil {
		t.Fatalf("upgrading (kubectl apply -k %s): %v: %s", installDir, err, out)
	}
	managerReady(ctx, t, "the upgraded")
	if err := awaitAdmission(ctx); err != nil {
		t.Error(err)
	}
	if err := checkInstall(ctx); err != nil {
		t.Errorf("after the upgrade: %v", err)
	}

	run = waitFinished(t, ns, run.Name, upgradeDuration+2*runTimeout)
	requireSucceeded(t, run, v1alpha1.ReasonCompleted)
	if err := suite.c.Get(ctx, client.ObjectKeyFromObject(role), role); err != nil {
		t.Fatal(err)
	}
	if !chunkRule(role) || role.UID != oldRole {
		t.Errorf("the run's Role after the upgrade: uid %s (was %s), rules %+v; want the same Role with the rule for result chunks", role.UID, oldRole, role.Rules)
	}
	shard := runConfigMap(t, ns, protocol.ShardConfigMapName(run.Name, 0))
	report, err := protocol.DecodeShardReport(shard.Data, shard.BinaryData)
	switch {
	case err != nil:
		t.Errorf("the shard's report: %v", err)
	case report.Chunked == nil:
		t.Errorf("the shard's result was stored inline (%d bytes): the run did not need the chunk rule; raise the upgrade run's load", len(report.Result))
	default:
		t.Logf("the shard's result was stored in chunks: %d compressed bytes", report.Chunked.Bytes)
	}
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

// upgradeOperations are upgradeOps reads of the demo's YCSB table, every
// other one through SQL, all 15 s stale (the emulator's strong reads slow
// down as it ages).
func upgradeOperations() []v1alpha1.OperationSpec {
	ops := make([]v1alpha1.OperationSpec, upgradeOps)
	for i := range ops {
		ops[i] = v1alpha1.OperationSpec{Name: fmt.Sprintf("op-%d", i), Type: v1alpha1.OpRead, Weight: 1,
			Staleness: &v1alpha1.StalenessSpec{Exact: &metav1.Duration{Duration: 15 * time.Second}}}
		if i%2 == 1 {
			ops[i].API = v1alpha1.APISQL
		}
	}
	return ops
}
