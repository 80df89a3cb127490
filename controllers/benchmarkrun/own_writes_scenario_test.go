package benchmarkrun_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/internal/await"
	"github.com/spanbench/spanbench/runner/protocol"
)

// verdicts records, for every event an informer of the real API server
// hands over, whether the children's filters queue the run.
type verdicts struct {
	mu  sync.Mutex
	got []string
}

func (v *verdicts) add(what string, obj any, queued bool) {
	o, ok := obj.(client.Object)
	if !ok {
		return
	}
	verdict := "dropped"
	if queued {
		verdict = "queued"
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.got = append(v.got, fmt.Sprintf("%s %s: %s", what, o.GetName(), verdict))
}

func (v *verdicts) list() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.got)
}

// filtered hands the events of an informer on the real API server to
// filter, as the run controller's watches do.
func filtered(t *testing.T, c cache.Cache, obj client.Object, filter predicate.Predicate, v *verdicts) {
	t.Helper()
	inf, err := c.GetInformer(context.Background(), obj)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj any) {
			v.add("update", obj, filter.Update(ctrlevent.UpdateEvent{ObjectOld: old.(client.Object), ObjectNew: obj.(client.Object)}))
		},
		DeleteFunc: func(obj any) {
			if o, ok := obj.(client.Object); ok {
				v.add("delete", obj, filter.Delete(ctrlevent.DeleteEvent{Object: o}))
			}
		},
	}); err != nil {
		t.Fatal(err)
	}
}

// TestOwnWritesAreTheirEventsOnTheRealAPIServer: against the real API
// server and an informer, the start barrier's patch and the wrap-up's Job
// deletions are dropped; another writer's update of the same ConfigMap,
// and the deletion of a Job by the same name it created, queue the run.
// (The fake-client tests check the same decisions; this one checks that
// the API server's own versions and UIDs match what the manager expects.)
func TestOwnWritesAreTheirEventsOnTheRealAPIServer(t *testing.T) {
	ctx := context.Background()
	c, err := client.New(restConfig, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := fmt.Sprintf("own-%d", time.Now().UnixNano()%1_000_000_000)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	run := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "r"}}
	job := func(name string) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "spanbench:test"}}}}}}
	}
	control := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: protocol.ControlConfigMapName(run.Name)}, Data: map[string]string{}}
	for _, o := range []client.Object{control, job(v1alpha1.LoaderJobName(run)), job(v1alpha1.RunnerJobName(run))} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	informers, err := cache.New(restConfig, cache.Options{Scheme: scheme, DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		t.Fatal(err)
	}
	r := &benchmarkrun.BenchmarkRunReconciler{Client: c, Scheme: scheme, Clock: clock.RealClock{}}
	filter := r.ChildEventFiltersForTest()
	v := &verdicts{}
	filtered(t, informers, &corev1.ConfigMap{}, filter, v)
	filtered(t, informers, &batchv1.Job{}, filter, v)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = informers.Start(cctx) }()
	if !informers.WaitForCacheSync(cctx) {
		t.Fatal("the informers did not sync")
	}

	if err := benchmarkrun.PublishStartForTest(ctx, r, run); err != nil {
		t.Fatal(err)
	}
	if err := benchmarkrun.CleanupRunnersForTest(ctx, r, run); err != nil {
		t.Fatal(err)
	}
	want := []string{"update r-control: dropped", "delete r-loader: dropped", "delete r-runners: dropped"}
	if ok, state := await.Until(ctx, await.Poll{Within: 10 * time.Second, Every: 20 * time.Millisecond}, func() (bool, string) {
		return len(v.list()) >= len(want), fmt.Sprint(v.list())
	}); !ok {
		t.Fatalf("the manager's own writes' events did not all come within 10 s: %s", state)
	}

	edit := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(control), edit); err != nil {
		t.Fatal(err)
	}
	edit.Data["edited-by"] = "somebody"
	if err := c.Update(ctx, edit); err != nil {
		t.Fatal(err)
	}
	again := job(v1alpha1.RunnerJobName(run))
	if err := c.Create(ctx, again); err != nil {
		t.Fatal(err)
	}
	// Background, as the manager deletes: the API server's default for
	// Jobs orphans the pods, with a finalizer that only the garbage
	// collector (not in envtest) removes.
	if err := c.Delete(ctx, again, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	want = append(want, "update r-control: queued", "delete r-runners: queued")
	ok, _ := await.Until(ctx, await.Poll{Within: 10 * time.Second, Every: 20 * time.Millisecond}, func() (bool, string) {
		return len(v.list()) >= len(want), ""
	})
	if got := v.list(); !ok || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the children's events on the real API server:\n got %q\nwant %q", got, want)
	}
}
