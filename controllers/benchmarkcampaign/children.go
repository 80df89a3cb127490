package benchmarkcampaign

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// A campaign's children (runs, and each iteration's snapshot and report
// ConfigMaps) have deterministic names. A name already taken is adopted
// only when the object is uncontrolled and carries the campaign's and the
// iteration's labels (left by a campaign deleted with --cascade=orphan);
// anything else stalls the campaign and is left alone.

// createOwned creates obj controlled by the campaign.
func (r *BenchmarkCampaignReconciler) createOwned(ctx context.Context, p *pass, obj client.Object) error {
	if err := controllerutil.SetControllerReference(p.c, obj, r.Scheme); err != nil {
		return err
	}
	return r.Create(ctx, obj)
}

// claim says whether existing, found under the name of a child of the
// iteration, is the campaign's: controlled by it, or adopted now. Any
// other object stalls the campaign (p.stall, NameConflict).
func (r *BenchmarkCampaignReconciler) claim(ctx context.Context, p *pass, existing client.Object, iteration string) (bool, error) {
	if metav1.IsControlledBy(existing, p.c) {
		return true, nil
	}
	l := existing.GetLabels()
	if metav1.GetControllerOf(existing) == nil && l[v1alpha1.LabelCampaign] == p.c.Name && l[v1alpha1.LabelIteration] == iteration {
		before := existing.DeepCopyObject().(client.Object)
		if err := controllerutil.SetControllerReference(p.c, existing, r.Scheme); err != nil {
			return false, err
		}
		return true, r.Patch(ctx, existing, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	}
	kind := "object"
	if gvk, err := apiutil.GVKForObject(existing, r.Scheme); err == nil {
		kind = gvk.Kind
	}
	p.stall = stalledBy(v1alpha1.ReasonNameConflict, fmt.Sprintf(
		"%s %s already exists and does not belong to this campaign; spanbench will not take it over: delete or rename it", kind, existing.GetName()))
	return false, nil
}
