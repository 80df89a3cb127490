package scale_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// waitCauses says which event started each long wait in the run
// controller's work queue. client-go's queue counts a wait from the event
// that marked the run dirty (the first since its last reconcile began)
// to the next reconcile's start; the reconciler's first call, the Get of
// its run, marks that start (apiCalls.reconcileStarted), and the
// manager's own informers, which feed the controller, give the events in
// the order it saw them. A wait with no event before it was a timer (a
// RequeueAfter) or a Spanner call's end, which no informer shows.
//
// The controller's filters (own creates, own writes, finalizer-only
// changes) are not applied here: an event they drop is still listed if
// it came first, so the counts say where events come from, not only
// which ones the controller acted on.
type waitCauses struct {
	mu     sync.Mutex
	starts map[types.NamespacedName][]time.Time
	// read are the run versions the reconciles read.
	read   map[types.NamespacedName]map[string]bool
	events map[types.NamespacedName][]queuedBy
	// patches are each run's status patches: when each began and ended.
	patches map[types.NamespacedName][][2]time.Time
	// calls are the reconciler's API round trips for each run (its
	// children's included): when each began and ended.
	calls map[types.NamespacedName][][2]time.Time
}

// queuedBy is one event that may have queued a run.
type queuedBy struct {
	at    time.Time
	cause string
}

func newWaitCauses() *waitCauses {
	return &waitCauses{starts: map[types.NamespacedName][]time.Time{}, read: map[types.NamespacedName]map[string]bool{}, events: map[types.NamespacedName][]queuedBy{},
		patches: map[types.NamespacedName][][2]time.Time{}, calls: map[types.NamespacedName][][2]time.Time{}}
}

// reconcileStarted records that a reconcile of run began at began, and
// read its version.
func (w *waitCauses) reconcileStarted(run types.NamespacedName, began time.Time, version string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.starts[run] = append(w.starts[run], began)
	if w.read[run] == nil {
		w.read[run] = map[string]bool{}
	}
	w.read[run][version] = true
}

// statusPatched records a status patch of run that began at began.
func (w *waitCauses) statusPatched(run types.NamespacedName, began time.Time) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.patches[run] = append(w.patches[run], [2]time.Time{began, time.Now()})
}

func (w *waitCauses) readAlready(ns, run, version string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.read[types.NamespacedName{Namespace: ns, Name: run}][version]
}

// busy records a round trip of the reconciler for obj's run that began
// at began.
func (w *waitCauses) busy(obj metav1.Object, began time.Time) {
	if w == nil {
		return
	}
	run, _ := runOf(obj)
	if run == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	key := types.NamespacedName{Namespace: obj.GetNamespace(), Name: run}
	w.calls[key] = append(w.calls[key], [2]time.Time{began, time.Now()})
}

func (w *waitCauses) event(run types.NamespacedName, cause string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events[run] = append(w.events[run], queuedBy{time.Now(), cause})
}

// watch adds handlers to mgr's informers of the run and its children.
func (w *waitCauses) watch(tb testing.TB, mgr ctrl.Manager) {
	tb.Helper()
	for _, obj := range []client.Object{&v1alpha1.BenchmarkRun{}, &corev1.ConfigMap{}, &batchv1.Job{}, &corev1.Pod{}} {
		inf, err := mgr.GetCache().GetInformer(context.Background(), obj)
		if err != nil {
			tb.Fatal(err)
		}
		kind := fmt.Sprintf("%T", obj)
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { w.record(kind, "add", nil, o) },
			UpdateFunc: func(old, o any) { w.record(kind, "update", old, o) },
			DeleteFunc: func(o any) { w.record(kind, "delete", nil, o) },
		}); err != nil {
			tb.Fatal(err)
		}
	}
}

func (w *waitCauses) record(kind, verb string, old, o any) {
	m, ok := o.(metav1.Object)
	if !ok {
		return
	}
	run, what := runOf(m)
	if run == "" || verb == "add" && kind != "*v1.Pod" && kind != "*v1alpha1.BenchmarkRun" {
		return // the controller drops its children's creates (ignoreOwnCreates)
	}
	if verb == "delete" && kind == "*v1.Job" {
		return // only the manager deletes Jobs here, and the controller drops its own deletions
	}
	if r, ok := o.(*v1alpha1.BenchmarkRun); ok && verb == "update" {
		if w.readAlready(m.GetNamespace(), run, r.ResourceVersion) {
			return // the controller drops it too (ignoreVersionsRead)
		}
		if o, ok := old.(*v1alpha1.BenchmarkRun); ok && o.Status.Phase != r.Status.Phase {
			what = "phase " + string(o.Status.Phase) + "->" + string(r.Status.Phase)
		} else {
			what = "status in " + string(r.Status.Phase)
		}
	}
	w.event(types.NamespacedName{Namespace: m.GetNamespace(), Name: run}, strings.TrimSpace(fmt.Sprintf("%s %s %s", verb, kind, what)))
}

// runOf is the run an object belongs to and what it is to the run.
func runOf(m metav1.Object) (run, what string) {
	if name, ok := m.GetLabels()[v1alpha1.LabelRun]; ok {
		return name, strings.TrimPrefix(m.GetName(), name)
	}
	for _, ref := range m.GetOwnerReferences() {
		if ref.Kind == "BenchmarkRun" {
			return ref.Name, strings.TrimPrefix(m.GetName(), ref.Name)
		}
	}
	if _, ok := m.(*v1alpha1.BenchmarkRun); ok {
		return m.GetName(), ""
	}
	return "", ""
}

// over counts the waits over bound by the event that started each.
func (w *waitCauses) over(bound time.Duration) (byCause map[string]int, total int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	byCause = map[string]int{}
	for run, starts := range w.starts {
		events := w.events[run]
		for i := range starts {
			var after time.Time
			if i > 0 {
				after = starts[i-1]
			}
			j, _ := slices.BinarySearchFunc(events, after, func(e queuedBy, t time.Time) int { return e.at.Compare(t) })
			cause, wait := "no event (timer or Spanner call)", time.Duration(0)
			if j < len(events) && !events[j].at.After(starts[i]) {
				cause, wait = events[j].cause, starts[i].Sub(events[j].at)
			}
			if j < len(events) && !events[j].at.After(starts[i]) && i > 0 {
				if beyond := starts[i].Sub(later(events[j].at, w.passEnd(run, after, starts[i]))); beyond > bound {
					byCause["(beyond the run's own pass: over 100 ms)"]++
				}
			}
			if wait > bound {
				byCause[cause]++
				total++
				if strings.Contains(cause, "BenchmarkRun") && j < len(events) {
					byCause["  echo timing: "+w.echoTiming(run, after, events[j].at)]++
				}
			}
		}
	}
	return byCause, total
}

// String lists the causes of the waits over 100 ms, most first.
func (w *waitCauses) String() string {
	byCause, total := w.over(100 * time.Millisecond)
	keys := slices.SortedFunc(maps.Keys(byCause), func(x, y string) int { return byCause[y] - byCause[x] })
	var b strings.Builder
	fmt.Fprintf(&b, " %d waits over 100 ms (approximate: from the first event a second informer saw after the previous reconcile's start; "+
		"it also sees events the controller drops, and not the controller's own timers, so it counts more than the queue does)", total)
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %-60s %4d", k, byCause[k])
	}
	return b.String()
}

// echoTiming says where a run's status event fell against the run's own
// status patches: during a patch (the echo of it), or after the patch's
// response (late), and whether a reconcile had started since the patch.
func (w *waitCauses) echoTiming(run types.NamespacedName, prevStart, at time.Time) string {
	for _, p := range slices.Backward(w.patches[run]) {
		if p[0].After(at) {
			continue
		}
		switch {
		case !at.After(p[1]):
			return "during its patch"
		case p[0].Before(prevStart):
			return fmt.Sprintf("after its patch's response, another reconcile since (late by %s)", bucket(at.Sub(p[1])))
		default:
			return fmt.Sprintf("after its patch's response, same reconcile (late by %s)", bucket(at.Sub(p[1])))
		}
	}
	return "no patch before it"
}

func bucket(d time.Duration) string {
	for _, b := range []time.Duration{time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, time.Second} {
		if d < b {
			return "<" + b.String()
		}
	}
	return ">=1s"
}

// passEnd approximates when the pass of run that began at began ended,
// before next began: the end of the last round trip it made, or its
// start if it made none (a pass of cache reads takes milliseconds).
func (w *waitCauses) passEnd(run types.NamespacedName, began, next time.Time) time.Time {
	end := began
	for _, p := range w.calls[run] {
		if !p[0].Before(began) && p[0].Before(next) {
			end = later(end, p[1])
		}
	}
	return end
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
