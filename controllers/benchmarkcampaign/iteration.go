package benchmarkcampaign

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/comparison"
	"github.com/spanbench/spanbench/campaign/plan"
)

// An iteration is recorded in the status (its name, scheduled time and
// template hash) before any of its runs exists; its runs are then named
// from that record alone, so a restarted manager finds them by name and
// never creates one twice. What they run comes from the iteration's
// snapshot (snapshot.go), taken before the first of them.

// startDue starts an iteration when one is due: on a new runNow token;
// without a schedule, on a new spec generation too (one iteration for
// both); with one, at its times (schedule.go). A due iteration
// that is not scheduled waits while another runs, unless
// concurrencyPolicy is Allow.
func (r *BenchmarkCampaignReconciler) startDue(ctx context.Context, p *pass) (ctrl.Result, error) {
	r.startRequested(p)
	if p.c.Spec.Schedule == "" {
		p.c.Status.NextScheduleTime = nil
		return ctrl.Result{}, nil
	}
	return r.startScheduled(ctx, p)
}

// startRequested starts the iteration a user asked for, by runNow or, for
// a campaign without a schedule, by changing the spec.
func (r *BenchmarkCampaignReconciler) startRequested(p *pass) {
	c := p.c
	newRunNow := c.Spec.RunNow != "" && c.Spec.RunNow != c.Status.LastRunNow
	newGeneration := c.Spec.Schedule == "" && c.Generation != c.Status.ObservedGeneration
	if !newRunNow && !newGeneration || c.Spec.Suspend != nil && *c.Spec.Suspend {
		// Suspended: the generation is observed and nothing starts; a new
		// runNow stays pending until the campaign is resumed.
		c.Status.ObservedGeneration = c.Generation
		return
	}
	if runningIterations(c) > 0 && c.Spec.ConcurrencyPolicy != v1alpha1.ConcurrencyAllow {
		return // queued: observedGeneration stays behind, so kstatus sees progress pending
	}
	r.recordIteration(p, p.now)
	c.Status.ObservedGeneration = c.Generation
	c.Status.LastRunNow = c.Spec.RunNow
}

// recordIteration adds a Running iteration scheduled at t (to the second,
// later than any recorded one, so that its name is new).
func (r *BenchmarkCampaignReconciler) recordIteration(p *pass, t time.Time) {
	c := p.c
	if reason, msg := r.refuseIteration(p); reason != "" {
		recordMissed(p, t.Truncate(time.Second), msg)
		p.stall = stalledBy(reason, msg)
		return
	}
	t = t.Truncate(time.Second)
	if n := len(c.Status.Iterations); n > 0 {
		if last := c.Status.Iterations[n-1].ScheduledTime.Time; !t.After(last) {
			t = last.Add(time.Second)
		}
	}
	it := v1alpha1.IterationStatus{
		Name: plan.IterationName(c.Name, t), ScheduledTime: metav1.NewTime(t), TemplateHash: templateHash(&c.Spec),
		Outcome: v1alpha1.IterationRunning, Runs: int32(len(p.current.cells) * c.Spec.RepetitionCount()),
	}
	appendIteration(c, it)
	p.started = true
	p.outbox.Normal(reasonIterationStarted, fmt.Sprintf("iteration %s: %d runs", it.Name, it.Runs))
}

// appendIteration records it as the newest iteration and the last
// scheduled, keeping at most MaxStatusIterations.
func appendIteration(c *v1alpha1.BenchmarkCampaign, it v1alpha1.IterationStatus) {
	c.Status.Iterations = append(c.Status.Iterations, it)
	if over := len(c.Status.Iterations) - v1alpha1.MaxStatusIterations; over > 0 {
		c.Status.Iterations = c.Status.Iterations[over:]
	}
	t := it.ScheduledTime
	c.Status.LastScheduleTime = &t
}

// templateHash identifies what an iteration runs: template, matrix,
// baseline, repetitions, order and comparison; 16 hex digits of SHA-256.
func templateHash(s *v1alpha1.BenchmarkCampaignSpec) string {
	data, _ := json.Marshal([]any{s.Template, s.Matrix, s.Baseline, s.Repetitions, s.Order, s.Seed, s.Comparison})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// campaignRuns lists the campaign's runs: those it controls, by name.
func (r *BenchmarkCampaignReconciler) campaignRuns(ctx context.Context, c *v1alpha1.BenchmarkCampaign) (map[string]*v1alpha1.BenchmarkRun, error) {
	list := &v1alpha1.BenchmarkRunList{}
	if err := r.List(ctx, list, client.InNamespace(c.Namespace), client.MatchingLabels{v1alpha1.LabelCampaign: c.Name}); err != nil {
		return nil, err
	}
	out := make(map[string]*v1alpha1.BenchmarkRun, len(list.Items))
	for i := range list.Items {
		if metav1.IsControlledBy(&list.Items[i], c) {
			out[list.Items[i].Name] = &list.Items[i]
		}
	}
	return out, nil
}

// activeNames are the runs not yet finished, sorted, at most MaxActiveRuns.
func activeNames(runs map[string]*v1alpha1.BenchmarkRun) []string {
	var out []string
	for name, run := range runs {
		if !run.IsFinished() {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	if len(out) > v1alpha1.MaxActiveRuns {
		out = out[:v1alpha1.MaxActiveRuns]
	}
	return out
}

// advanceIterations moves every running iteration forward: it starts the
// runs their turn allows and, once all have ended, compares them.
func (r *BenchmarkCampaignReconciler) advanceIterations(ctx context.Context, p *pass) error {
	for i := range p.c.Status.Iterations {
		it := &p.c.Status.Iterations[i]
		if it.Outcome != v1alpha1.IterationRunning {
			continue
		}
		if err := r.advance(ctx, p, it); err != nil || p.stall != nil {
			return err
		}
	}
	return nil
}

// advance starts the iteration's next runs, from its snapshot, and counts
// its ended ones; when every run has ended it completes the iteration.
func (r *BenchmarkCampaignReconciler) advance(ctx context.Context, p *pass, it *v1alpha1.IterationStatus) error {
	ip, err := r.iterationPlanOf(ctx, p, it)
	if ip == nil || err != nil || p.stall != nil {
		return err
	}
	slots := iterationSlots(p.c.Name, ip, it)
	if err := r.startRuns(ctx, p, ip, it, slots); err != nil || p.stall != nil {
		return err
	}
	it.Runs, it.Succeeded, it.Failed = int32(len(slots)), 0, 0
	started := int32(0)
	for _, s := range slots {
		run, ok := p.runs[s.name]
		if ok {
			started++
		}
		switch {
		case !ok || !run.IsFinished() || awaitsServerStats(&ip.spec.Comparison, run):
		case run.Status.Phase == v1alpha1.PhaseSucceeded:
			it.Succeeded++
		default:
			it.Failed++
		}
	}
	p.c.Status.Progress = campaignProgress(it, started)
	if it.Succeeded+it.Failed < it.Runs {
		return nil
	}
	return r.complete(ctx, p, ip, it, slots)
}

// iterationEnd is how an iteration that ran ended and what it left.
type iterationEnd struct {
	outcome v1alpha1.IterationOutcome
	// reason and why are the event's reason (default IterationFailed) and
	// what failed; empty when the iteration succeeded.
	reason, why string
	// results are the cells' results and table their comparison; nil when
	// the runs were not compared.
	results []comparison.Cell
	table   *comparison.Table
}

// endIteration is where every iteration that started ends: compared
// (complete), replaced (replaceRunning) or without a usable snapshot. It
// writes a compared iteration's report, then records the outcome, the
// latest comparison and verdict, the Ready message and the event. Steps
// that follow an ended iteration (history summaries, pruning) belong
// here, after the report: this is their one call site. Until the report
// is written the iteration stays Running, so a failed write is retried.
func (r *BenchmarkCampaignReconciler) endIteration(ctx context.Context, p *pass, it *v1alpha1.IterationStatus, end iterationEnd) error {
	if end.table != nil {
		if ok, err := r.writeReport(ctx, p, it, end.table); !ok || err != nil {
			return err
		}
		it.Report = plan.ReportName(it.Name)
		status := end.table.Status(it.Name)
		it.Verdict = status.Verdict
		p.c.Status.Comparison = &status
		p.c.Status.Verdict = status.Verdict
	}
	it.Outcome = end.outcome
	// The history, the trend and pruning (history.go) come first:
	// a summary that could not be saved yet puts the iteration back to
	// Running, and the next pass ends it again.
	if err := r.iterationEnded(ctx, p, it, end.results); err != nil || it.Outcome == v1alpha1.IterationRunning {
		return err
	}
	if end.outcome != v1alpha1.IterationSucceeded {
		msg := fmt.Sprintf("iteration %s: %s", it.Name, end.why)
		readyFailed(p.c, msg, p.now)
		reason := end.reason
		if reason == "" {
			reason = reasonIterationFailed
		}
		p.outbox.Warning(reason, msg)
		return nil
	}
	t := metav1.NewTime(p.now)
	p.c.Status.LastSuccessfulTime = &t
	p.outbox.Normal(reasonIterationDone, fmt.Sprintf("iteration %s: verdict %s", it.Name, it.Verdict))
	return nil
}

// campaignRunLabels are the labels of an iteration's run: its template's,
// less GitOps tracking labels (Argo CD would prune a child carrying its
// parent's), and the spanbench.io/ ones.
func campaignRunLabels(c *v1alpha1.BenchmarkCampaign, ip *iterationPlan, it *v1alpha1.IterationStatus, s runSlot) map[string]string {
	out := withoutTracking(ip.spec.Template.Metadata.Labels)
	out[v1alpha1.LabelCampaign] = c.Name
	out[v1alpha1.LabelIteration] = it.Name
	out[v1alpha1.LabelVariant] = variantLabel(&ip.cells[s.cell])
	out[v1alpha1.LabelRepetition] = fmt.Sprint(s.repetition)
	return out
}

// trackingPrefixes are the label and annotation keys by which GitOps
// tools recognise the objects they manage.
var trackingPrefixes = []string{"argocd.argoproj.io/", "kustomize.toolkit.fluxcd.io/", "helm.toolkit.fluxcd.io/",
	"app.kubernetes.io/instance", "kubectl.kubernetes.io/last-applied-configuration"}

// withoutTracking copies m without GitOps tracking keys.
func withoutTracking(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		tracked := false
		for _, p := range trackingPrefixes {
			tracked = tracked || strings.HasPrefix(k, p)
		}
		if !tracked {
			out[k] = v
		}
	}
	return out
}
