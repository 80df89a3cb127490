package benchmarkcampaign

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/plan"
)

// An iteration runs the spec it started with: an edit of the template,
// matrix or comparison applies from the next iteration. So before the
// first run of an iteration exists, the campaign writes what the
// iteration runs into a ConfigMap of its own, <iteration>-spec, and from
// then on makes that iteration's runs and its comparison from this
// snapshot alone.
//
// Why a ConfigMap: the snapshot must outlive the manager (a restarted one
// must make the remaining runs from it), so it lives in the API; the
// campaign's status cannot hold it (a spec per running iteration would
// double the campaign's size and each status write), and a run cannot
// (it holds its own cell's spec, not the matrix, baseline or comparison,
// and runs are never edited). The ConfigMap is immutable (the API server refuses an edit
// of its data), owned by the campaign and labelled with the campaign and
// the iteration, so it goes with either. It holds the spec's iteration
// fields, not the expanded cells: the cells follow from them through the
// pure plan package (cell names and hashes depend only on axis labels),
// and the snapshot stays the size of the campaign's own spec however
// many cells (up to 64 copies of a run spec) the matrix makes.
//
// When: the pass after the one that records the iteration, before that
// pass creates any run. An edit between the two passes is thus part of
// the iteration, which has not run anything yet; templateHash is set from
// the snapshot. Taking it before the status write instead would leave an
// orphan snapshot whenever that write conflicts.
//
// The manager caches only ConfigMaps carrying a run's label, so snapshots
// are read through APIReader; nothing watches them.

// snapshotKey is the key of the snapshot's data.
const snapshotKey = "spec.json"

// iterationPlan is what an iteration runs: its spec, cells and baseline.
type iterationPlan struct {
	spec     *v1alpha1.BenchmarkCampaignSpec
	cells    []plan.Cell
	baseline int
}

// snapshotSpec is the part of a campaign's spec an iteration runs, the
// part templateHash covers; the scheduling fields (schedule, suspend,
// concurrencyPolicy, maxParallel, ...) stay live.
func snapshotSpec(s *v1alpha1.BenchmarkCampaignSpec) *v1alpha1.BenchmarkCampaignSpec {
	return &v1alpha1.BenchmarkCampaignSpec{Template: *s.Template.DeepCopy(), Matrix: s.Matrix.DeepCopy(),
		Baseline: s.DeepCopy().Baseline, Repetitions: s.Repetitions, Order: s.Order, Seed: s.Seed, Comparison: *s.Comparison.DeepCopy()}
}

// iterationLabels are the labels of every object of an iteration.
func iterationLabels(c *v1alpha1.BenchmarkCampaign, iteration string) map[string]string {
	return map[string]string{v1alpha1.LabelCampaign: c.Name, v1alpha1.LabelIteration: iteration}
}

// newIterationSnapshot builds the snapshot of what iteration runs, from
// the campaign's spec now.
func newIterationSnapshot(c *v1alpha1.BenchmarkCampaign, iteration string) (*corev1.ConfigMap, error) {
	data, err := json.Marshal(snapshotSpec(&c.Spec))
	if err != nil {
		return nil, err
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: plan.SnapshotName(iteration), Namespace: c.Namespace,
			Labels: iterationLabels(c, iteration)},
		Data:      map[string]string{snapshotKey: string(data)},
		Immutable: ptr.To(true),
	}, nil
}

// decodeSnapshot reads and plans a snapshot's spec; a snapshot that is not
// a valid campaign spec (edited by hand, or from an incompatible version)
// is an error naming it.
func decodeSnapshot(cm *corev1.ConfigMap) (*iterationPlan, error) {
	raw, ok := cm.Data[snapshotKey]
	if !ok {
		return nil, fmt.Errorf("ConfigMap %s has no %s", cm.Name, snapshotKey)
	}
	spec := &v1alpha1.BenchmarkCampaignSpec{}
	if err := json.Unmarshal([]byte(raw), spec); err != nil {
		return nil, fmt.Errorf("ConfigMap %s: %w", cm.Name, err)
	}
	ip, err := planCampaign(spec)
	if err != nil {
		return nil, fmt.Errorf("ConfigMap %s: %w", cm.Name, err)
	}
	return ip, nil
}

// iterationPlanOf is what the running iteration it runs: its snapshot's
// spec, the snapshot being taken now if the iteration has none and no run
// yet. It is nil when the iteration cannot go on in this pass: the
// current spec is invalid and no snapshot exists yet (the campaign is
// Stalled until the spec is fixed), the snapshot's name is taken
// (p.stall), or the iteration has just ended for want of a usable
// snapshot.
func (r *BenchmarkCampaignReconciler) iterationPlanOf(ctx context.Context, p *pass, it *v1alpha1.IterationStatus) (*iterationPlan, error) {
	cm := &corev1.ConfigMap{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: p.c.Namespace, Name: plan.SnapshotName(it.Name)}, cm)
	switch {
	case apierrors.IsNotFound(err):
		return r.takeSnapshot(ctx, p, it)
	case err != nil:
		return nil, err
	}
	if ok, err := r.claim(ctx, p, cm, it.Name); !ok || err != nil {
		return nil, err
	}
	ip, err := decodeSnapshot(cm)
	if err != nil {
		return nil, r.endIteration(ctx, p, it, iterationEnd{outcome: v1alpha1.IterationFailed,
			why: "unusable snapshot of its spec: " + err.Error()})
	}
	it.TemplateHash = templateHash(ip.spec)
	return ip, nil
}

// takeSnapshot writes the snapshot of the campaign's current spec for an
// iteration that has none. An iteration that already has runs lost its
// snapshot (deleted by hand): its remaining runs cannot be made from the
// spec it started with, so it fails rather than silently mixing specs.
func (r *BenchmarkCampaignReconciler) takeSnapshot(ctx context.Context, p *pass, it *v1alpha1.IterationStatus) (*iterationPlan, error) {
	for _, run := range p.runs {
		if run.Labels[v1alpha1.LabelIteration] == it.Name {
			return nil, r.endIteration(ctx, p, it, iterationEnd{outcome: v1alpha1.IterationFailed,
				why: fmt.Sprintf("the snapshot of its spec, ConfigMap %s, is gone; its remaining runs cannot be made from the spec it started with",
					plan.SnapshotName(it.Name))})
		}
	}
	if p.current == nil {
		return nil, nil // the spec is invalid (Stalled): the iteration waits for a valid one
	}
	cm, err := newIterationSnapshot(p.c, it.Name)
	if err != nil {
		return nil, err
	}
	switch err := r.createOwned(ctx, p, cm); {
	case apierrors.IsInvalid(err) || apierrors.IsRequestEntityTooLargeError(err):
		return nil, r.endIteration(ctx, p, it, iterationEnd{outcome: v1alpha1.IterationFailed,
			why: "cannot snapshot its spec: " + err.Error()})
	case err != nil:
		// AlreadyExists (a lagging read) requeues: the next pass reads it.
		return nil, err
	}
	it.TemplateHash = templateHash(&p.c.Spec)
	return p.current, nil
}
