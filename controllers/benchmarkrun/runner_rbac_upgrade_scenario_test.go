package benchmarkrun_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/await"
	"github.com/spanbench/spanbench/internal/shardtest"
	"github.com/spanbench/spanbench/runner/pod"
	"github.com/spanbench/spanbench/runner/protocol"
)

// TestARunStartedBeforeAnUpgradeStoresItsChunkedResultAfterIt: on envtest's
// real API server, with RBAC enforced for the runner service account, a
// running run whose Role the previous release created (no rule for result
// chunks). A dense shard result, which must be chunked, is refused to the
// runner under that Role (Forbidden: what made such runs fail after an
// upgrade); one reconcile of the run by this release's controller updates
// the Role in place, and the runner's store then succeeds.
func TestARunStartedBeforeAnUpgradeStoresItsChunkedResultAfterIt(t *testing.T) {
	s := newStoreScenario(t, "upgraded", 1, shardtest.DenseDuration)
	// Building, encoding and storing an 11 MiB result twice is CPU work:
	// 8.4 s for the whole test on an idle host, 77 s with the test's
	// processes held to 7 % of a core, where the minute it had ran out.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	// The run is running, as the previous release's manager left it.
	for _, c := range []string{v1alpha1.ConditionTargetReady, v1alpha1.ConditionDatasetLoaded, v1alpha1.ConditionRunnersReady} {
		meta.SetStatusCondition(&s.run.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue, Reason: "Previous", LastTransitionTime: metav1.Now()})
	}
	s.run.Status.Phase = v1alpha1.PhaseRunning
	if err := s.c.Status().Update(ctx, s.run); err != nil {
		t.Fatalf("recording the run as running: %v", err)
	}
	role, _ := currentGrants(t, s.run)
	stored := &rbacv1.Role{}
	if err := s.c.Get(ctx, client.ObjectKeyFromObject(role), stored); err != nil {
		t.Fatal(err)
	}
	stored.Rules = previousRelease(role).Rules
	if err := s.c.Update(ctx, stored); err != nil {
		t.Fatalf("giving the run the previous release's Role: %v", err)
	}
	uid := stored.UID

	pool := shardtest.NewDensePool(16)
	doc := pool.Shard(s.run.Name, s.run.Spec.Workload.Resolved(), s.start, 0, 1)
	key := client.ObjectKey{Namespace: s.run.Namespace, Name: protocol.ShardConfigMapName(s.run.Name, 0)}
	before, err := pod.StoreShardResult(ctx, s.runnerClient(), key, s.start, doc, nil)
	if !apierrors.IsForbidden(err) {
		t.Fatalf("storing the result (%d chunks) under the previous release's Role: %v; want a chunked result refused Forbidden (else this test proves nothing)",
			len(before.Chunks), err)
	}

	r := s.reconciler()
	r.Recorder = record.NewFakeRecorder(100)
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(s.run)}); err != nil {
		t.Fatalf("reconciling the run: %v", err)
	}
	if err := s.c.Get(ctx, client.ObjectKeyFromObject(role), stored); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(role.Rules, stored.Rules); d != "" || stored.UID != uid {
		t.Fatalf("the run's Role after a reconcile (uid %s, was %s; -this release +stored):\n%s", stored.UID, uid, d)
	}

	// The Role reaches the authorizer at once on a single API server, but
	// the store that follows takes 4 s idle and took 45 s starved as
	// above (10 s failed the test there): the poll allows 2 minutes.
	var afterUpgrade protocol.StoredResult
	await.Eventually(t, await.Poll{Within: 2 * time.Minute, Every: 200 * time.Millisecond}, "the runner to store its chunked result under the updated Role",
		func() (bool, string) {
			res, err := pod.StoreShardResult(ctx, s.runnerClient(), key, s.start, doc, nil)
			if err != nil {
				return false, err.Error()
			}
			afterUpgrade = res
			return true, ""
		})
	if afterUpgrade.Head == nil || len(afterUpgrade.Chunks) < 2 {
		t.Errorf("the result was stored in %d chunks; want a chunked result", len(afterUpgrade.Chunks))
	}
}
