package statuswrite

import (
	"strings"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
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
