package benchmarkrun_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/runner/protocol"
)

// TestChildrenAreAdoptedOrRefusedNeverTakenOver: an object named like a
// run's child that carries the run's label and no owner (what a manager
// that died between create and own would leave) is adopted; one that is
// somebody else's fails the run with NameConflict and is left as it was.
func TestChildrenAreAdoptedOrRefusedNeverTakenOver(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})

	adopted := h.runSpec("adopts", 1)
	orphan := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: protocol.LoaderConfigMapName(adopted.Name, 0),
		Labels: map[string]string{v1alpha1.LabelRun: adopted.Name}}}
	if err := h.c.Create(context.Background(), orphan); err != nil {
		t.Fatal(err)
	}
	h.create(adopted)
	h.kubelet(adopted, 0)
	got := h.finished(adopted, 90*time.Second)
	if c := h.condition(got, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionTrue {
		t.Fatalf("the run with an orphaned child of its own ended %s/%s: %s", c.Status, c.Reason, c.Message)
	}
	if cm := h.configMap(orphan.Name); cm == nil || !metav1.IsControlledBy(cm, got) {
		t.Errorf("the orphaned loader map was not adopted: %+v", cm)
	}

	refused := h.runSpec("refuses", 1)
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: protocol.ControlConfigMapName(refused.Name)},
		Data: map[string]string{"owner": "someone else"}}
	if err := h.c.Create(context.Background(), theirs); err != nil {
		t.Fatal(err)
	}
	h.create(refused)
	got = h.finished(refused, 30*time.Second)
	c := h.condition(got, v1alpha1.ConditionSucceeded)
	if c.Reason != v1alpha1.ReasonNameConflict || !strings.Contains(c.Message, theirs.Name) || !strings.Contains(c.Message, "does not belong to this run") {
		t.Fatalf("run ended %s %q; want NameConflict naming %s", c.Reason, c.Message, theirs.Name)
	}
	cm := h.configMap(theirs.Name)
	if cm == nil || len(cm.OwnerReferences) > 0 || cm.Data["owner"] != "someone else" || len(cm.Data) != 1 {
		t.Errorf("somebody else's ConfigMap was changed: %+v", cm)
	}
}
