package benchmarkcampaign

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

// iterationSlots are the iteration's runs in the order its spec says.
func iterationSlots(campaign string, ip *iterationPlan, it *v1alpha1.IterationStatus) []runSlot {
	s := ip.spec
	order := plan.Order(s.RunOrder(), s.OrderSeed(), len(ip.cells), s.RepetitionCount())
	out := make([]runSlot, len(order))
	for i, o := range order {
		out[i] = runSlot{cell: o.Cell, repetition: o.Repetition,
			name: plan.RunName(campaign, it.ScheduledTime.Time, &ip.cells[o.Cell], o.Repetition)}
	}
	return out
}

// databaseKey identifies the database a run uses.
func databaseKey(spec *v1alpha1.BenchmarkRunSpec) string {
	t := &spec.Target
	return t.EmulatorHost + "|" + t.Project + "|" + t.Instance.Name + "|" + t.Database
}

// startRuns creates the iteration's next runs in order, as far as
// maxParallel (the campaign's current one: a scheduling setting, not part
// of what the iteration runs) and the one-database rule allow.
func (r *BenchmarkCampaignReconciler) startRuns(ctx context.Context, p *pass, ip *iterationPlan, it *v1alpha1.IterationStatus, slots []runSlot) error {
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
		db := databaseKey(&ip.cells[s.cell].Spec)
		if active >= p.c.Spec.Parallelism() || busy[db] {
			return nil
		}
		run := newCampaignRun(p.c, ip, it, s)
		if ok, err := r.mayCreate(ctx, p, run); !ok || err != nil { // tenancy.go
			return err
		}
		run, err := r.ensureCampaignRun(ctx, p, run)
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

// newCampaignRun builds the run of slot s from the iteration's spec: the
// cell's spec, the template's labels and annotations less GitOps tracking
// ones, the campaign's labels.
func newCampaignRun(c *v1alpha1.BenchmarkCampaign, ip *iterationPlan, it *v1alpha1.IterationStatus, s runSlot) *v1alpha1.BenchmarkRun {
	return &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: c.Namespace, Labels: campaignRunLabels(c, ip, it, s),
			Annotations: withoutTracking(ip.spec.Template.Metadata.Annotations)},
		Spec: *ip.cells[s.cell].Spec.DeepCopy(),
	}
}

// ensureCampaignRun creates run, or takes the run of its name if it is
// the campaign's (claim).
func (r *BenchmarkCampaignReconciler) ensureCampaignRun(ctx context.Context, p *pass, run *v1alpha1.BenchmarkRun) (*v1alpha1.BenchmarkRun, error) {
	err := r.createOwned(ctx, p, run)
	if err == nil {
		p.outbox.Normal(reasonRunCreated, "created run "+run.Name)
		return run, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	existing := &v1alpha1.BenchmarkRun{}
	if err := r.Get(ctx, client.ObjectKeyFromObject(run), existing); err != nil {
		return nil, err
	}
	if ok, err := r.claim(ctx, p, existing, run.Labels[v1alpha1.LabelIteration]); !ok || err != nil {
		return nil, err
	}
	return existing, nil
}
