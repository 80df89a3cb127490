package benchmarkcampaign

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/robfig/cron/v3"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/plan"
)

// Schedules use CronJob's vocabulary and, like Kubernetes' CronJob
// controller, robfig/cron's standard parser (five fields or a macro). The
// controller never polls: after each pass it asks to be woken at the next
// scheduled time, read from the injected clock.

const (
	reasonInvalidSchedule = "InvalidSchedule"
	reasonIterationMissed = "IterationMissed"
	reasonReplaced        = "IterationReplaced"
)

// maxScheduleSteps bounds the walk from the last scheduled time to now: a
// campaign asleep for longer (a stopped manager, an every-minute schedule)
// walks no further, like CronJob, and acts on the latest time found.
const maxScheduleSteps = 10000

// startScheduled starts the iteration a schedule made due, or records it
// as Missed (too late for startingDeadlineSeconds, or Forbid while one
// runs), and asks to be woken at the next scheduled time.
func (r *BenchmarkCampaignReconciler) startScheduled(ctx context.Context, p *pass) (ctrl.Result, error) {
	c := p.c
	sched, loc, err := plan.ParseSchedule(&c.Spec)
	if err != nil {
		p.stall = stalledBy(reasonInvalidSchedule, err.Error())
		c.Status.NextScheduleTime = nil
		return ctrl.Result{}, nil
	}
	if c.Spec.Suspend != nil && *c.Spec.Suspend {
		c.Status.NextScheduleTime = nil
		return ctrl.Result{}, nil
	}
	now := p.now.In(loc)
	if due, ok := latestDue(sched, scheduleFrom(c).In(loc), now); ok {
		if err := r.actOnDue(ctx, p, due); err != nil {
			return ctrl.Result{}, err
		}
	}
	next := sched.Next(now)
	t := metav1.NewTime(next)
	c.Status.NextScheduleTime = &t
	return ctrl.Result{RequeueAfter: next.Sub(now)}, nil
}

// scheduleFrom is where the walk to now starts: the last scheduled time,
// else the campaign's creation.
func scheduleFrom(c *v1alpha1.BenchmarkCampaign) time.Time {
	if c.Status.LastScheduleTime != nil {
		return c.Status.LastScheduleTime.Time
	}
	return c.CreationTimestamp.Time
}

// latestDue is the latest scheduled time in (from, now], if any.
func latestDue(sched cron.Schedule, from, now time.Time) (time.Time, bool) {
	var due time.Time
	found := false
	for t, i := sched.Next(from), 0; !t.After(now) && !t.IsZero() && i < maxScheduleSteps; t, i = sched.Next(t), i+1 {
		due, found = t, true
	}
	return due, found
}

// actOnDue decides about the iteration due at t.
func (r *BenchmarkCampaignReconciler) actOnDue(ctx context.Context, p *pass, t time.Time) error {
	c := p.c
	if d := c.Spec.StartingDeadlineSeconds; d != nil && p.now.Sub(t) > time.Duration(*d)*time.Second {
		recordMissed(p, t, fmt.Sprintf("%s late, more than startingDeadlineSeconds %d", p.now.Sub(t).Round(time.Second), *d))
		return nil
	}
	if runningIterations(c) > 0 {
		switch c.Spec.ConcurrencyPolicy {
		case v1alpha1.ConcurrencyAllow:
		case v1alpha1.ConcurrencyReplace:
			if err := r.replaceRunning(ctx, p); err != nil {
				return err
			}
		default:
			recordMissed(p, t, "the previous iteration still runs (concurrencyPolicy Forbid)")
			return nil
		}
	}
	r.recordIteration(p, t)
	return nil
}

// recordMissed records the iteration due at t as Missed.
func recordMissed(p *pass, t time.Time, why string) {
	if n := len(p.c.Status.Iterations); n > 0 && !t.After(p.c.Status.Iterations[n-1].ScheduledTime.Time) {
		return // a runNow took this second: its name is taken
	}
	it := v1alpha1.IterationStatus{Name: plan.IterationName(p.c.Name, t), ScheduledTime: metav1.NewTime(t),
		TemplateHash: templateHash(&p.c.Spec), Outcome: v1alpha1.IterationMissed}
	appendIteration(p.c, it)
	p.outbox.Warning(reasonIterationMissed, fmt.Sprintf("iteration %s missed: %s", it.Name, why))
}

// replaceRunning ends the running iterations as Failed and deletes their
// unfinished runs (runs are deleted, never edited).
func (r *BenchmarkCampaignReconciler) replaceRunning(ctx context.Context, p *pass) error {
	for i := range p.c.Status.Iterations {
		it := &p.c.Status.Iterations[i]
		if it.Outcome != v1alpha1.IterationRunning {
			continue
		}
		for name, run := range p.runs {
			if run.Labels[v1alpha1.LabelIteration] != it.Name || run.IsFinished() {
				continue
			}
			if err := r.Delete(ctx, run, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
				return err
			}
			delete(p.runs, name)
		}
		if err := r.endIteration(ctx, p, it, iterationEnd{outcome: v1alpha1.IterationFailed, reason: reasonReplaced,
			why: "replaced by a newer iteration (concurrencyPolicy Replace)"}); err != nil {
			return err
		}
	}
	return nil
}
