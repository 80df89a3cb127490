package benchmarkrun_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/internal/runtest"
)

// currentGrants are the Role and RoleBinding this release gives run.
func currentGrants(t *testing.T, run *v1alpha1.BenchmarkRun) (*rbacv1.Role, *rbacv1.RoleBinding) {
	t.Helper()
	var role *rbacv1.Role
	var binding *rbacv1.RoleBinding
	for _, o := range benchmarkrun.RunnerObjectsForTest(run) {
		switch o := o.(type) {
		case *rbacv1.Role:
			role = o
		case *rbacv1.RoleBinding:
			binding = o
		}
	}
	if role == nil || binding == nil {
		t.Fatal("the controller builds no Role or RoleBinding for a run")
	}
	return role, binding
}

// previousRelease is role as the release before result chunks built it
// (commit 50246ee^): the rule that lets a runner create its result's
// chunk ConfigMaps is missing.
func previousRelease(role *rbacv1.Role) *rbacv1.Role {
	old := role.DeepCopy()
	old.Rules = slices.DeleteFunc(old.Rules, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Verbs, "create") })
	return old
}

// owned makes run the controller of o.
func owned(t *testing.T, run *v1alpha1.BenchmarkRun, o client.Object) client.Object {
	t.Helper()
	if err := controllerutil.SetControllerReference(run, o, scheme); err != nil {
		t.Fatal(err)
	}
	return o
}

// TestReconcileGivesAnActiveRunsRoleThisReleasesGrants: a run started
// before an upgrade has the previous release's Role (no rule for result
// chunks) and a RoleBinding whose subjects were changed; the next
// reconcile, in every phase in which pods run (loading, at the barrier,
// running), updates both in place to this release's grants, keeping the
// objects (same UID: no pod loses its access meanwhile).
func TestReconcileGivesAnActiveRunsRoleThisReleasesGrants(t *testing.T) {
	for name, run := range map[string]*v1alpha1.BenchmarkRun{
		"loading":            runLoading(),
		"at the barrier":     runAtBarrier(),
		"running":            runtest.Run("r").Created(t0).RunnersReady(t0).Obj(),
		"adopted, unowned":   runAtBarrier(),
		"user's own account": runtest.Run("r").Created(t0).DatasetLoaded(t0).ServiceAccount("spanner-wi").Obj(),
	} {
		t.Run(name, func(t *testing.T) {
			role, binding := currentGrants(t, run)
			oldRole := previousRelease(role)
			oldBinding := binding.DeepCopy()
			oldBinding.Subjects = append(oldBinding.Subjects, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: run.Namespace})
			stored := []client.Object{run, oldRole, oldBinding}
			if name != "adopted, unowned" {
				stored = []client.Object{run, owned(t, run, oldRole), owned(t, run, oldBinding)}
			}
			f := newFakeReconcile(t, interceptor.Funcs{}, stored...)
			oldUID := f.storedUID(oldRole)
			if _, err := f.reconcile(run); err != nil {
				t.Fatal(err)
			}
			got := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: role.Namespace}}
			if !f.exists(got) {
				t.Fatal("the run's Role is gone")
			}
			if d := cmp.Diff(role.Rules, got.Rules); d != "" {
				t.Errorf("the run's Role after a reconcile (-this release +stored):\n%s", d)
			}
			if string(got.UID) != oldUID || !metav1.IsControlledBy(got, run) {
				t.Errorf("the Role was replaced (uid %s, was %s) or is not the run's (owners %+v); want it updated in place", got.UID, oldUID, got.OwnerReferences)
			}
			gotBinding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: binding.Name, Namespace: binding.Namespace}}
			if !f.exists(gotBinding) {
				t.Fatal("the run's RoleBinding is gone")
			}
			if d := cmp.Diff(binding.Subjects, gotBinding.Subjects); d != "" {
				t.Errorf("the run's RoleBinding subjects after a reconcile (-this release +stored):\n%s", d)
			}
			if c := condition(f.run(run), v1alpha1.ConditionSucceeded); c != nil {
				t.Errorf("the run ended (%s: %s) instead of updating its grants", c.Reason, c.Message)
			}
		})
	}
}

// storedUID is the UID of o as stored.
func (f *fakeReconcile) storedUID(o client.Object) string {
	f.t.Helper()
	cp := o.DeepCopyObject().(client.Object)
	if !f.exists(cp) {
		f.t.Fatalf("%T %s is not stored", o, o.GetName())
	}
	return string(cp.GetUID())
}

// TestReconcileLeavesARoleThatIsNotTheRunsAlone: a Role named like the
// run's that somebody else controls keeps its rules: while the run loads
// or waits for its runners the run fails with NameConflict (adopt or
// refuse), and while it runs the Role is not touched either.
func TestReconcileLeavesARoleThatIsNotTheRunsAlone(t *testing.T) {
	for name, run := range map[string]*v1alpha1.BenchmarkRun{
		"at the barrier": runAtBarrier(),
		"running":        runtest.Run("r").Created(t0).RunnersReady(t0).Obj(),
	} {
		t.Run(name, func(t *testing.T) {
			role, _ := currentGrants(t, run)
			theirs := previousRelease(role)
			other := runtest.Run("other").Obj()
			owned(t, other, theirs)
			f := newFakeReconcile(t, interceptor.Funcs{}, run, theirs)
			if _, err := f.reconcile(run); err != nil {
				t.Fatal(err)
			}
			got := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: role.Namespace}}
			if !f.exists(got) || !cmp.Equal(got.Rules, theirs.Rules) || !metav1.IsControlledBy(got, other) {
				t.Errorf("somebody else's Role was changed: rules %+v, owners %+v", got.Rules, got.OwnerReferences)
			}
			if name == "at the barrier" {
				wantCondition(t, f.run(run), v1alpha1.ConditionSucceeded, metav1.ConditionFalse, v1alpha1.ReasonNameConflict)
			}
		})
	}
}

// TestReconcileGrantUpdateThatConflictsIsARequeue: the Role changed between
// the cache read and the update (optimistic lock): a quick requeue, and
// the next pass updates it.
func TestReconcileGrantUpdateThatConflictsIsARequeue(t *testing.T) {
	run := runAtBarrier()
	role, _ := currentGrants(t, run)
	fl := &failing{obj: &rbacv1.Role{}, times: 1, err: apierrors.NewConflict(schema.GroupResource{Group: rbacv1.GroupName, Resource: "roles"}, role.Name, errors.New("stale (injected)"))}
	f := newFakeReconcile(t, patchingFails(fl), run, owned(t, run, previousRelease(role)))
	res, err := f.reconcile(run)
	wantResult(t, res, err, true, false)
	if _, err := f.reconcile(run); err != nil {
		t.Fatal(err)
	}
	got := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: role.Namespace}}
	if !f.exists(got) || !cmp.Equal(got.Rules, role.Rules) {
		t.Errorf("the Role after the conflict and a second pass: %+v; want this release's rules", got.Rules)
	}
}
