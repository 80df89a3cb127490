package benchmarkrun

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/api/option"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/statuswrite"
	"github.com/spanbench/spanbench/spanner/preflight"
)

// PreflightConfig is how the manager checks a Cloud Spanner run's access
// before it creates anything (package spanner/preflight). The zero value
// runs no preflight and sets no condition.
type PreflightConfig struct {
	// Enabled runs the preflight as the first stage of every run
	// (--preflight); an emulator run gets the condition, skipped.
	Enabled bool
	// NodeQuota is the project's node limit per instance configuration
	// (--preflight-node-quota); 0 leaves it unchecked.
	NodeQuota int32
	// Credentials gives the manager's own (preflight.DetectCredentials,
	// looked up at the first Cloud Spanner run's preflight and kept), so
	// the condition names whose were checked. A function, not a value:
	// finding credentials may ask the metadata server, which a manager
	// that only ever serves emulator runs must never contact. Nil: none.
	Credentials func() preflight.Credentials
	// ResourceManager is Cloud Resource Manager's address, where the
	// project's permissions are asked; "" is
	// preflight.ResourceManagerDefault. Tests name a stand-in.
	ResourceManager string
	// ResourceManagerOptions are its client options (tests: plaintext,
	// no authentication); none is Application Default Credentials.
	ResourceManagerOptions []option.ClientOption
}

// Bounds of the wait before a preflight Google did not answer is asked
// again: each wait is as long as the retries have lasted so far, so the
// waits double from preflightRetryMin up to preflightRetryMax; the stage's
// deadline ends the retries.
const (
	preflightRetryMin = 5 * time.Second
	preflightRetryMax = time.Minute
)

// preflightMessageMax bounds the condition's message: every permission a
// run needs, each with its resource and role, fits well within it.
const preflightMessageMax = 8192

// checkPreflight runs the preflight of a Cloud Spanner run once, before
// anything is created for it, and records it in the Preflight condition.
// The checks run in the background (spanner_calls.go); until they end,
// done is false and res polls. A preflight Google refused (a missing
// permission or configuration, any answer but "not now") fails the run:
// nothing was created, so there is nothing to wait for. One Google did not
// answer is asked again (preflightRetry) until the stage's deadline, then
// fails the run the same way. Once the condition is True it is not asked
// again, across restarts too.
func (r *BenchmarkRunReconciler) checkPreflight(ctx context.Context, run *v1alpha1.BenchmarkRun, outbox *statuswrite.Outbox) (res ctrl.Result, done bool) {
	if !r.Preflight.Enabled || meta.IsStatusConditionTrue(run.Status.Conditions, v1alpha1.ConditionPreflight) {
		return ctrl.Result{}, true
	}
	ep := r.Preparer.Endpoint(run)
	if ep.IsEmulator() {
		// Nothing to ask: the emulator has no IAM, credentials or quota,
		// and whether it answers is the preparer's first call's to say,
		// under the manager's allowlist of emulators.
		msg := "skipped: emulator (" + ep.EmulatorHost() + ") has no IAM, credentials or quota to check"
		run.SetCondition(v1alpha1.ConditionPreflight, metav1.ConditionTrue, v1alpha1.ReasonPreflightSkippedOnEmulator, msg, r.now())
		return ctrl.Result{}, true
	}
	deadline := r.stageDeadline(run)
	tg := preflight.TargetOf(run.Spec.Target, true, r.ServerMetrics.Client != nil)
	opts := []preflight.Option{
		preflight.Spanner(ep),
		preflight.ResourceManager(r.Preflight.ResourceManager, r.Preflight.ResourceManagerOptions...),
		preflight.NodeQuota(r.Preflight.NodeQuota),
	}
	creds := r.Preflight.Credentials
	report, _, ok := spannerCall(ctx, r, run, "preflight", "", deadline.call, func(ctx context.Context) (preflight.Report, error) {
		var c preflight.Credentials
		if creds != nil {
			c = creds() // in the background: it may wait on the metadata server
		}
		return preflight.Check(ctx, tg, append(opts, preflight.WithCredentials(c))...), nil
	})
	if !ok {
		// A retry in flight keeps the error it retries.
		if c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionPreflight); c == nil || c.Reason != v1alpha1.ReasonPreflightRetrying {
			run.SetCondition(v1alpha1.ConditionPreflight, metav1.ConditionUnknown, v1alpha1.ReasonPreflightChecking,
				"checking the manager's access to "+ep.String()+" before anything is created", r.now())
		}
		return stillCalling(deadline), false
	}
	if !report.OK() {
		failure := preflightFailure(report)
		if report.Transient() {
			if res, retrying := r.preflightRetry(run, failure, deadline); retrying {
				return res, false
			}
			failure = fmt.Sprintf("Google did not answer until spec.deadlines.%s passed: %s", deadline.field, failure)
		}
		msg := statuswrite.Truncate(failure, preflightMessageMax)
		run.SetCondition(v1alpha1.ConditionPreflight, metav1.ConditionFalse, v1alpha1.ReasonPreflightFailed, msg, r.now())
		r.fail(run, outbox, v1alpha1.ReasonPreflightFailed, "nothing was created: "+msg)
		return ctrl.Result{}, false
	}
	msg := statuswrite.Truncate(preflightPassed(report), preflightMessageMax)
	run.SetCondition(v1alpha1.ConditionPreflight, metav1.ConditionTrue, v1alpha1.ReasonPreflightPassed, msg, r.now())
	outbox.Normal(v1alpha1.ReasonPreflightPassed, msg)
	return ctrl.Result{}, true
}

// preflightRetry records a preflight Google did not answer as Retrying,
// with the error, and says when to ask again; retrying is false once the
// stage's deadline has passed. The wait is the time since the preflight
// first ran (the condition's Unknown transition), within
// preflightRetryMin and preflightRetryMax, so it doubles without a count
// kept anywhere, and survives a restart.
func (r *BenchmarkRunReconciler) preflightRetry(run *v1alpha1.BenchmarkRun, failure string, deadline stageDeadline) (res ctrl.Result, retrying bool) {
	if deadline.late {
		return ctrl.Result{}, false
	}
	now := r.now()
	first := now
	if c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionPreflight); c != nil && c.Status == metav1.ConditionUnknown {
		first = c.LastTransitionTime.Time
	}
	wait := min(max(now.Sub(first), preflightRetryMin), preflightRetryMax, deadline.requeue)
	msg := fmt.Sprintf("Google did not answer; asking again in %s, until spec.deadlines.%s: %s", wait.Round(time.Second), deadline.field, failure)
	run.SetCondition(v1alpha1.ConditionPreflight, metav1.ConditionUnknown, v1alpha1.ReasonPreflightRetrying, statuswrite.Truncate(msg, preflightMessageMax), now)
	return ctrl.Result{RequeueAfter: wait}, true
}

// preflightFailure says what failed: each missing permission, where it was
// asked and the role that grants it, then every other failed check. The
// report never holds key material (package preflight), so neither does
// the message.
func preflightFailure(r preflight.Report) string {
	var missing, other []string
	for _, m := range r.Missing() {
		role := m.Role
		if role == "" {
			role = "no predefined role known here"
		}
		missing = append(missing, fmt.Sprintf("%s on %s (to %s): grant %s", m.Name, m.Resource, m.Use, role))
	}
	for _, c := range r.Results {
		if c.Status == preflight.Fail && len(c.Missing) == 0 {
			other = append(other, c.Name+": "+c.Detail)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "preflight against %s failed", r.Endpoint)
	if len(missing) > 0 {
		fmt.Fprintf(&b, "; %d permission(s) missing: %s", len(missing), strings.Join(missing, "; "))
	}
	if len(other) > 0 {
		fmt.Fprintf(&b, "; failed: %s", strings.Join(other, "; "))
	}
	return b.String()
}

// preflightPassed names where and as whom the checks passed.
func preflightPassed(r preflight.Report) string {
	who := ""
	for _, c := range r.Results {
		if c.Name == preflight.CheckCredentials {
			who = " as " + c.Detail
		}
	}
	return fmt.Sprintf("passed against %s%s: %d checks, none failed", r.Endpoint, who, len(r.Results))
}
