package benchmarkrun

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/statuswrite"
)

// One run at a time uses a database, cluster-wide: two runs on one
// database skew each other's figures, whichever namespace or campaign
// they come from. A run claims its database before anything is prepared
// for it, with a Lease in ClaimNamespace whose name is derived from the
// database (claimLeaseName): the API server lets one Create of a name
// succeed, and one Update of a resource version, so two reconciles, two
// managers or a restarted one never both hold it. The Lease names the
// holding run and its UID; the run lets go of it (deletes it) once it has
// ended and let go of its instance. A claim whose holder is gone (deleted,
// or deleted and created again under its name) or has ended and let go of
// its instance is stale, and the next run on the database takes it over.
//
// A run that finds its database held waits in Pending, DatabaseClaimed
// False with reason DatabaseInUse and a message naming the holder, and
// looks again every databaseClaimRetry. A run no campaign controls waits
// until spec.deadlines.prepare (counted from its creation) and then fails
// with reason DatabaseInUse: it is refused, in time a user chose, rather
// than started beside the other run. A campaign's run is queued: it waits
// as long as the holder runs, since the campaign runs it in its order and
// compares it with its siblings. Either way the prepare deadline of a run
// that waited counts from when it got its database.

// databaseClaimRetry is how often a run waiting for its database looks
// again: the Leases are read, not watched, so that the manager does not
// cache every Lease of the cluster (nodes renew theirs every 10 s).
const databaseClaimRetry = 5 * time.Second

// Names of a database claim's Lease.
const (
	// claimLeasePrefix starts the name of every claim's Lease.
	claimLeasePrefix = "spanbench-database-"
	// annotationClaimDatabase records the database a claim is for, as
	// DatabaseIdentity names it; the Lease's name is only its hash.
	annotationClaimDatabase = "bench.spanbench.io/database"
	// annotationClaimRunUID is the holding run's UID: a run deleted and
	// created again under its name does not hold its predecessor's claim.
	annotationClaimRunUID = "bench.spanbench.io/run-uid"
	// LabelDatabaseClaim marks the Leases that claim a database.
	LabelDatabaseClaim = "bench.spanbench.io/database-claim"
)

// DatabaseIdentity names the database a run uses, the same for every run
// that uses it: the project, instance and database, after the emulator's
// address for an emulator run. An Ephemeral instance is named by its id
// as an Existing one is: two runs that name the same Ephemeral instance
// would share it.
func DatabaseIdentity(t *v1alpha1.TargetSpec) string {
	id := "projects/" + t.Project + "/instances/" + t.Instance.Name + "/databases/" + t.Database
	if t.EmulatorHost != "" {
		return "emulator " + strings.ToLower(t.EmulatorHost) + " " + id
	}
	return id
}

// ClaimLeaseName is the name of the Lease that claims the database
// identity names: 32 hex digits of its SHA-256, so that every name fits
// and none can be chosen to collide.
func ClaimLeaseName(identity string) string {
	sum := sha256.Sum256([]byte(identity))
	return claimLeasePrefix + hex.EncodeToString(sum[:16])
}

// newClaimLease is the Lease by which run claims its database.
func newClaimLease(namespace string, run *v1alpha1.BenchmarkRun) *coordinationv1.Lease {
	id := DatabaseIdentity(&run.Spec.Target)
	holder := run.Namespace + "/" + run.Name
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: ClaimLeaseName(id), Namespace: namespace,
			Labels:      map[string]string{LabelDatabaseClaim: "true", "app.kubernetes.io/managed-by": "spanbench"},
			Annotations: map[string]string{annotationClaimDatabase: id, annotationClaimRunUID: string(run.UID)}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder},
	}
}

// claimHolder is the run a claim names: namespace/name and UID.
func claimHolder(l *coordinationv1.Lease) (key types.NamespacedName, uid string) {
	if h := l.Spec.HolderIdentity; h != nil {
		if ns, name, ok := strings.Cut(*h, "/"); ok {
			key = types.NamespacedName{Namespace: ns, Name: name}
		}
	}
	return key, l.Annotations[annotationClaimRunUID]
}

// holds reports whether claim l names run.
func holds(l *coordinationv1.Lease, run *v1alpha1.BenchmarkRun) bool {
	key, uid := claimHolder(l)
	return key == client.ObjectKeyFromObject(run) && uid == string(run.UID)
}

// claimDatabase makes run the holder of its database, or says who holds
// it. held is true once run holds it (DatabaseClaimed True); otherwise res
// is when to look again, or run failed (a run no campaign controls, past
// its prepare deadline). A reconciler without a ClaimNamespace (one built
// by hand in a test, not by SetupWithManager) claims nothing.
func (r *BenchmarkRunReconciler) claimDatabase(ctx context.Context, run *v1alpha1.BenchmarkRun, outbox *statuswrite.Outbox) (res ctrl.Result, held bool, err error) {
	if r.ClaimNamespace == "" || meta.IsStatusConditionTrue(run.Status.Conditions, v1alpha1.ConditionDatabaseClaimed) {
		return ctrl.Result{}, true, nil
	}
	id := DatabaseIdentity(&run.Spec.Target)
	holder, err := r.takeClaim(ctx, run)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	if holder == "" {
		run.SetCondition(v1alpha1.ConditionDatabaseClaimed, metav1.ConditionTrue, v1alpha1.ReasonDatabaseClaimed,
			"the run holds database "+id+": no other run starts on it until this one ends", r.now())
		return ctrl.Result{}, true, nil
	}
	retry := databaseClaimRetry
	if !controlledByCampaign(run) {
		deadline := r.stageDeadline(run)
		if deadline.late {
			r.fail(run, outbox, v1alpha1.ReasonDatabaseInUse, fmt.Sprintf("database %s was still in use by run %s when spec.deadlines.%s passed; "+
				"nothing was created for this run", id, holder, deadline.field))
			return ctrl.Result{}, false, nil
		}
		retry = min(retry, deadline.requeue)
	}
	msg := fmt.Sprintf("database %s is in use by run %s: this run starts when that one ends", id, holder)
	if run.SetCondition(v1alpha1.ConditionDatabaseClaimed, metav1.ConditionFalse, v1alpha1.ReasonDatabaseInUse, msg, r.now()) {
		outbox.Normal(v1alpha1.ReasonDatabaseInUse, msg)
	}
	return ctrl.Result{RequeueAfter: retry}, false, nil
}

// controlledByCampaign reports whether a campaign made run (and so queues
// it rather than letting it fail while it waits for its database).
func controlledByCampaign(run *v1alpha1.BenchmarkRun) bool {
	owner := metav1.GetControllerOf(run)
	return owner != nil && owner.Kind == "BenchmarkCampaign" && strings.HasPrefix(owner.APIVersion, v1alpha1.GroupVersion.Group+"/")
}

// takeClaim creates run's claim, or takes over a stale one. holder is ""
// when run holds its database, else the holding run as namespace/name. A
// claim another reconcile changed meanwhile is a Conflict, which the
// caller's reconcile retries at once.
func (r *BenchmarkRunReconciler) takeClaim(ctx context.Context, run *v1alpha1.BenchmarkRun) (holder string, err error) {
	want := newClaimLease(r.ClaimNamespace, run)
	err = r.Create(ctx, want)
	if err == nil || !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	// Read past the cache: the manager caches no Leases, and a claim is
	// decided on the API server's latest.
	cur := &coordinationv1.Lease{}
	if err := r.uncached().Get(ctx, client.ObjectKeyFromObject(want), cur); err != nil {
		if apierrors.IsNotFound(err) {
			// Released between the Create and the Get: try again.
			return "", apierrors.NewConflict(coordinationv1.Resource("leases"), want.Name, err)
		}
		return "", err
	}
	if holds(cur, run) {
		return "", nil
	}
	key, live, err := r.claimLive(ctx, cur)
	if err != nil || live {
		return key.String(), err
	}
	// Stale: take it over on the resource version just read, so that of
	// two runs taking it over at once one succeeds and the other gets a
	// Conflict.
	cur.Labels, cur.Annotations, cur.Spec = want.Labels, want.Annotations, want.Spec
	if err := r.Update(ctx, cur); apierrors.IsNotFound(err) {
		// Released meanwhile: the next reconcile creates it.
		return "", apierrors.NewConflict(coordinationv1.Resource("leases"), want.Name, err)
	} else if err != nil {
		return "", err
	}
	return "", nil
}

// claimLive reports whether the run claim l names still uses its
// database: it exists with the claim's UID and has not both ended and let
// go of its instance.
func (r *BenchmarkRunReconciler) claimLive(ctx context.Context, l *coordinationv1.Lease) (types.NamespacedName, bool, error) {
	key, uid := claimHolder(l)
	if key.Name == "" {
		return key, false, nil
	}
	holder := &v1alpha1.BenchmarkRun{}
	if err := r.uncached().Get(ctx, key, holder); err != nil {
		if apierrors.IsNotFound(err) {
			return key, false, nil
		}
		return key, false, err
	}
	if string(holder.UID) != uid {
		return key, false, nil
	}
	return key, !holder.IsFinished() || controllerutil.ContainsFinalizer(holder, v1alpha1.FinalizerInstance), nil
}

// releaseDatabase lets go of an ended run's database once its instance is
// let go of too (an Ephemeral instance deleted): the claim is deleted, if
// it is still the run's, and DatabaseClaimed turns False.
func (r *BenchmarkRunReconciler) releaseDatabase(ctx context.Context, run *v1alpha1.BenchmarkRun) error {
	if r.ClaimNamespace == "" || !meta.IsStatusConditionTrue(run.Status.Conditions, v1alpha1.ConditionDatabaseClaimed) ||
		controllerutil.ContainsFinalizer(run, v1alpha1.FinalizerInstance) {
		return nil
	}
	id := DatabaseIdentity(&run.Spec.Target)
	cur := &coordinationv1.Lease{}
	err := r.uncached().Get(ctx, client.ObjectKey{Namespace: r.ClaimNamespace, Name: ClaimLeaseName(id)}, cur)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return err
	case holds(cur, run):
		// Deleted only as read: a claim another run took over meanwhile
		// stays its.
		err := r.Delete(ctx, cur, client.Preconditions{UID: &cur.UID, ResourceVersion: &cur.ResourceVersion})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	run.SetCondition(v1alpha1.ConditionDatabaseClaimed, metav1.ConditionFalse, v1alpha1.ReasonDatabaseReleased,
		"the run ended and let go of database "+id, r.now())
	return nil
}
