package controllers

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/plan"
)

// Runs start in the campaign's order, one pass at a time: a run is created
// when it is the next one in order, fewer than maxParallel of the
// iteration's runs are active, and no active run of the campaign uses its
// database. Creating a run is what starts it, so the creation order is the
// run order; a run that cannot start yet holds back the ones after it.

// runSlot is one run of an iteration: its cell, repetition and name.
type runSlot struct {
	cell, repetition int
	name             string
}

// iterationSlots are the iteration's runs in the campaign's order.
func iterationSlots(p *pass, it *v1alpha1.IterationStatus) []runSlot {
	s := &p.c.Spec
	order := plan.Order(s.RunOrder(), s.OrderSeed(), len(p.cells), s.RepetitionCount())
	out := make([]runSlot, len(order))
	for i, o := range order {
		out[i] = runSlot{cell: o.Cell, repetition: o.Repetition,
			name: plan.RunName(p.c.Name, it.ScheduledTime.Time, &p.cells[o.Cell], o.Repetition)}
	}
	return out
}

// databaseKey identifies the database a run uses.
func databaseKey(spec *v1alpha1.BenchmarkRunSpec) string {
	t := &spec.Target
	return t.EmulatorHost + "|" + t.Project + "|" + t.Instance.Name + "|" + t.Database
}

// startRuns creates the iteration's next runs in order, as far as
// maxParallel and the one-database rule allow.
func (r *BenchmarkCampaignReconciler) startRuns(ctx context.Context, p *pass, it *v1alpha1.IterationStatus, slots []runSlot) error {
	busy := map[string]bool{}
	for _, run := range p.runs {
		if !run.IsFinished() {
			busy[databaseKey(&run.Spec)] = true
		}
	}
	active := 0
	for _, s := range slots {
		if run, ok := p.runs[s.name]; ok && !run.IsFinished() {
			active++
		}
	}
	for _, s := range slots {
		if _, ok := p.runs[s.name]; ok {
			continue
		}
		db := databaseKey(&p.cells[s.cell].Spec)
		if active >= p.c.Spec.Parallelism() || busy[db] {
			return nil
		}
		run, err := r.ensureCampaignRun(ctx, p, newCampaignRun(p, it, s))
		if err != nil || p.stall != nil {
			return err
		}
		p.runs[s.name] = run
		busy[db] = true
		active++
	}
	return nil
}

// variantLabel is the cell's name, or its hash when the name is too long
// for a label value.
func variantLabel(cell *plan.Cell) string {
	if len(cell.Name) <= 63 {
		return cell.Name
	}
	return cell.Hash
}

// newCampaignRun builds the run of slot s: the cell's spec, the template's
// labels and annotations less GitOps tracking ones, the campaign's labels.
func newCampaignRun(p *pass, it *v1alpha1.IterationStatus, s runSlot) *v1alpha1.BenchmarkRun {
	return &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: p.c.Namespace, Labels: campaignRunLabels(p, it, s),
			Annotations: withoutTracking(p.c.Spec.Template.Metadata.Annotations)},
		Spec: *p.cells[s.cell].Spec.DeepCopy(),
	}
}

// ensureCampaignRun creates run, or adopts the run of its name when it is
// ours: controlled by the campaign, or uncontrolled and carrying the
// campaign's and iteration's labels. Any other object of that name is
// refused, stalling the campaign: spanbench never takes over a run it
// did not make.
func (r *BenchmarkCampaignReconciler) ensureCampaignRun(ctx context.Context, p *pass, run *v1alpha1.BenchmarkRun) (*v1alpha1.BenchmarkRun, error) {
	if err := controllerutil.SetControllerReference(p.c, run, r.Scheme); err != nil {
		return nil, err
	}
	err := r.Create(ctx, run)
	if err == nil {
		p.outbox.normal(reasonRunCreated, "created run "+run.Name)
		return run, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	existing := &v1alpha1.BenchmarkRun{}
	if err := r.Get(ctx, client.ObjectKeyFromObject(run), existing); err != nil {
		return nil, err
	}
	if metav1.IsControlledBy(existing, p.c) {
		return existing, nil
	}
	l := existing.Labels
	if metav1.GetControllerOf(existing) == nil && l[v1alpha1.LabelCampaign] == p.c.Name &&
		l[v1alpha1.LabelIteration] == run.Labels[v1alpha1.LabelIteration] {
		before := existing.DeepCopy()
		if err := controllerutil.SetControllerReference(p.c, existing, r.Scheme); err != nil {
			return nil, err
		}
		return existing, r.Patch(ctx, existing, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	}
	p.stall = stalledBy(v1alpha1.ReasonNameConflict, fmt.Sprintf(
		"BenchmarkRun %s already exists and does not belong to this campaign; spanbench will not take it over: delete or rename it", run.Name))
	return nil, nil
}
