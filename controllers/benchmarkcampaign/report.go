package benchmarkcampaign

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/comparison"
	"github.com/spanbench/spanbench/campaign/plan"
)

// When an iteration's runs have been compared, its whole table (the
// status holds at most v1alpha1.MaxComparisonRows rows) goes into a
// ConfigMap of its own, <iteration>-report, as benchstat-style text and
// as JSON (comparison.Report), and status.iterations[].report names it.
// It is written once, immutable, owned by the campaign and labelled with
// the campaign and the iteration. A pass that finds it written (its
// status write was lost) keeps it: the table would be the same, from the
// same runs and seed. Like the snapshot, it is read through APIReader.

// newIterationReport builds the report ConfigMap of iteration it.
func newIterationReport(c *v1alpha1.BenchmarkCampaign, it *v1alpha1.IterationStatus, table *comparison.Table) (*corev1.ConfigMap, error) {
	data, binary, err := table.ReportData(it.Name, it.TemplateHash)
	if err != nil {
		return nil, err
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: plan.ReportName(it.Name), Namespace: c.Namespace, Labels: iterationLabels(c, it.Name)},
		Data:       data, BinaryData: binary, Immutable: ptr.To(true),
	}, nil
}

// writeReport writes the iteration's report, or finds it written, and says
// whether the iteration has it; false with p.stall set when its name is
// taken by an object that is not the campaign's.
func (r *BenchmarkCampaignReconciler) writeReport(ctx context.Context, p *pass, it *v1alpha1.IterationStatus, table *comparison.Table) (bool, error) {
	cm, err := newIterationReport(p.c, it, table)
	if err != nil {
		return false, err
	}
	err = r.createOwned(ctx, p, cm)
	if !apierrors.IsAlreadyExists(err) {
		return err == nil, err
	}
	existing := &corev1.ConfigMap{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(cm), existing); err != nil {
		return false, err
	}
	return r.claim(ctx, p, existing, it.Name)
}
