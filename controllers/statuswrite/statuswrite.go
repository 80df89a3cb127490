package statuswrite

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Outbox collects what one reconcile wants to tell users; the events are
// emitted only after the status write succeeded, so an event never
// announces a transition the status does not show.
type Outbox struct {
	events []event
}

type event struct {
	eventType, reason, message string
}

// Normal adds an event of type Normal.
func (s *Outbox) Normal(reason, message string) {
	s.events = append(s.events, event{corev1.EventTypeNormal, reason, message})
}

// Warning adds an event of type Warning.
func (s *Outbox) Warning(reason, message string) {
	s.events = append(s.events, event{corev1.EventTypeWarning, reason, message})
}

// Emit sends the events about obj (a run or a campaign).
func (s *Outbox) Emit(rec record.EventRecorder, obj runtime.Object) {
	if rec == nil {
		return
	}
	for _, e := range s.events {
		rec.Event(obj, e.eventType, e.reason, e.message)
	}
}

// Events are the collected events, each as "Type Reason: message".
func (s *Outbox) Events() []string {
	var out []string
	for _, e := range s.events {
		out = append(out, e.eventType+" "+e.reason+": "+e.message)
	}
	return out
}

// FieldOwner is the field manager of every status write of spanbench's
// controllers: managedFields then say which fields the manager owns, and
// a server-side apply by a user or another tool conflicts by name instead
// of silently sharing the fields.
const FieldOwner = "spanbench-manager"

// Patch writes obj's status, as the merge patch from before, if status
// says it changed; written says it did (a caller that tracks its own
// writes needs to know). It writes as FieldOwner, locked on obj's resource
// version: a decision taken on a stale cached object must not overwrite a
// newer status, and the conflict requeues with fresh data. The lock is on
// obj's version, not before's, so that the reconcile's own locked writes
// of obj's metadata (a finalizer) keep the chain unbroken.
func Patch[T client.Object](ctx context.Context, c client.StatusClient, before, obj T, status func(T) any) (written bool, err error) {
	if equality.Semantic.DeepEqual(status(before), status(obj)) {
		return false, nil
	}
	base := before.DeepCopyObject().(T)
	base.SetResourceVersion(obj.GetResourceVersion())
	err = c.Status().Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}), client.FieldOwner(FieldOwner))
	return err == nil, err
}

// RequeueSoon asks for a reconciler's next step right away: the status
// this step wrote says what it is. It replaces the deprecated
// Result.Requeue.
var RequeueSoon = ctrl.Result{RequeueAfter: 100 * time.Millisecond}

// MaxProblemBytes bounds one problem quoted in a condition message or an
// event: the errors quote untrusted data, and a condition's message holds
// at most 32 KiB.
const MaxProblemBytes = 512

// Shorten cuts s to at most n bytes on a rune boundary.
func Shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n-3], "") + "..."
}

// Truncate cuts s to at most n bytes on a rune boundary, without Shorten's
// mark.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Time is t as a status timestamp, nil when t is not known (zero): an
// unknown instant is left out of the status rather than shown as 1970.
func Time(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	mt := metav1.NewTime(t)
	return &mt
}
