package benchmarkcampaign

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// When an iteration ends, the history limits prune older iterations: the
// newest successfulIterationsHistoryLimit succeeded and
// failedIterationsHistoryLimit failed iterations keep their runs and
// per-iteration objects; running iterations keep theirs; every other
// iteration's runs (and with them their children: reports, Jobs) and the
// ConfigMaps labelled spanbench.io/campaign=<c>,spanbench.io/iteration=<it>
// that the campaign owns are deleted. Missed iterations have no runs. The
// history ConfigMaps carry no iteration label and stay: the trend keeps
// reading their summaries.

// pruneIterations deletes the runs and ConfigMaps of iterations beyond
// the history limits, and clears those iterations' report reference.
func (r *BenchmarkCampaignReconciler) pruneIterations(ctx context.Context, p *pass) error {
	keep := keptIterations(p.c)
	for name, run := range p.runs {
		if keep[run.Labels[v1alpha1.LabelIteration]] || !run.IsFinished() || !run.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.Delete(ctx, run, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return err
		}
		delete(p.runs, name)
	}
	if err := r.pruneIterationConfigMaps(ctx, p.c, keep); err != nil {
		return err
	}
	for i := range p.c.Status.Iterations {
		if it := &p.c.Status.Iterations[i]; !keep[it.Name] {
			it.Report = ""
		}
	}
	return nil
}

// keptIterations are the iterations whose runs and objects the history
// limits keep.
func keptIterations(c *v1alpha1.BenchmarkCampaign) map[string]bool {
	keep := map[string]bool{}
	succeeded, failed := c.Spec.SuccessfulHistory(), c.Spec.FailedHistory()
	for i := len(c.Status.Iterations) - 1; i >= 0; i-- {
		it := &c.Status.Iterations[i]
		switch it.Outcome {
		case v1alpha1.IterationSucceeded:
			keep[it.Name] = succeeded > 0
			succeeded--
		case v1alpha1.IterationFailed:
			keep[it.Name] = failed > 0
			failed--
		case v1alpha1.IterationRunning:
			keep[it.Name] = true
		}
	}
	return keep
}

// pruneIterationConfigMaps deletes the campaign's per-iteration
// ConfigMaps of iterations not kept; ConfigMaps it does not own are left
// alone. It lists metadata only: reports may be large.
func (r *BenchmarkCampaignReconciler) pruneIterationConfigMaps(ctx context.Context, c *v1alpha1.BenchmarkCampaign, keep map[string]bool) error {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
	if err := r.APIReader.List(ctx, list, client.InNamespace(c.Namespace), client.MatchingLabels{v1alpha1.LabelCampaign: c.Name},
		client.HasLabels{v1alpha1.LabelIteration}); err != nil {
		return err
	}
	for i := range list.Items {
		cm := &list.Items[i]
		if keep[cm.Labels[v1alpha1.LabelIteration]] || !ownedBy(cm, c) {
			continue
		}
		cm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
		if err := r.Delete(ctx, cm); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}

// ownedBy says whether obj has c among its owners.
func ownedBy(obj metav1.Object, c *v1alpha1.BenchmarkCampaign) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.UID == c.UID {
			return true
		}
	}
	return false
}
