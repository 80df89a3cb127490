package benchmarkrun

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun/children"
)

// A run's pods can do what its Role allows, and the Role is written by the
// release that created it. A run started before an upgrade keeps a Role
// of the previous release: if the pods the upgraded manager starts for it
// (or the pods of an image tag that now names the new release) need a
// rule the old Role lacks, they are refused half-way, after the load ran
// (a result too large for its shard ConfigMap was stored in chunks the
// previous Role did not name). So the grants of an active run converge on
// the current release's: whenever the controller ensures the pods'
// access, and on every pass while the runners run, a Role or RoleBinding
// the run controls whose grants differ is updated in place. Only objects
// the run controls are touched; adopt-or-refuse (ensure) decides that
// first.

// convergeGrants copies into existing, the run's stored Role or
// RoleBinding, the grants the current release gives it (want, from the
// builders) and says whether they differed. Labels and owners are left
// as they are. Other kinds have no grants: nothing changes.
//
// A RoleBinding's roleRef is immutable; every release so far binds the
// run's Role of the same name, so only its subjects can differ.
func convergeGrants(existing, want client.Object) bool {
	switch e := existing.(type) {
	case *rbacv1.Role:
		return replaceIfDifferent(&e.Rules, want.(*rbacv1.Role).Rules)
	case *rbacv1.RoleBinding:
		return replaceIfDifferent(&e.Subjects, want.(*rbacv1.RoleBinding).Subjects)
	}
	return false
}

// replaceIfDifferent sets *have to want unless they are semantically
// equal, and says whether it did.
func replaceIfDifferent[T any](have *T, want T) bool {
	if equality.Semantic.DeepEqual(*have, want) {
		return false
	}
	*have = want
	return true
}

// converge brings existing, which the run controls, to the grants of
// want. The patch is locked on the version read: a Role changed meanwhile
// is judged again on the next pass (a conflict is a requeue).
func (r *BenchmarkRunReconciler) converge(ctx context.Context, existing, want client.Object) error {
	before := existing.DeepCopyObject().(client.Object)
	if !convergeGrants(existing, want) {
		return nil
	}
	if err := r.Patch(ctx, existing, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("updating %T %s to this release's grants: %w", existing, existing.GetName(), err)
	}
	return nil
}

// convergeAccess converges the run's Role and RoleBinding, if they exist
// and the run controls them, while its runners run: no child is created
// here (ensure did, before the runners), and one that is not the run's
// is left alone.
func (r *BenchmarkRunReconciler) convergeAccess(ctx context.Context, run *v1alpha1.BenchmarkRun) error {
	for _, want := range []client.Object{children.NewRunnerRole(run), children.NewRunnerRoleBinding(run, children.RunnerServiceAccountName(run))} {
		existing := want.DeepCopyObject().(client.Object)
		err := r.Get(ctx, client.ObjectKeyFromObject(want), existing)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		if !metav1.IsControlledBy(existing, run) {
			continue
		}
		if err := r.converge(ctx, existing, want); err != nil {
			return err
		}
	}
	return nil
}
