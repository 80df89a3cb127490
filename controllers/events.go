package controllers

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// eventOutbox collects what one reconcile wants to tell users; the events are
// emitted only after the status write succeeded, so an event never
// announces a transition the status does not show.
type eventOutbox struct {
	events []event
}

type event struct {
	eventType, reason, message string
}

func (s *eventOutbox) normal(reason, message string) {
	s.events = append(s.events, event{corev1.EventTypeNormal, reason, message})
}

func (s *eventOutbox) warning(reason, message string) {
	s.events = append(s.events, event{corev1.EventTypeWarning, reason, message})
}

// emit sends the events about obj (a run or a campaign).
func (s *eventOutbox) emit(rec record.EventRecorder, obj runtime.Object) {
	if rec == nil {
		return
	}
	for _, e := range s.events {
		rec.Event(obj, e.eventType, e.reason, e.message)
	}
}

// fail ends the run with a failure reason and a warning event.
func (r *BenchmarkRunReconciler) fail(run *v1alpha1.BenchmarkRun, outbox *eventOutbox, reason, message string) {
	if run.MarkFailed(reason, message, r.now()) {
		outbox.warning(reason, message)
	}
}
