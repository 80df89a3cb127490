package benchmarkrun_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/internal/runtest"
	"github.com/spanbench/spanbench/internal/shardtest"
	"github.com/spanbench/spanbench/runner/protocol"
)

// The manager reads through an informer cache: one watch per kind, each
// delivering its kind's changes in order but at its own pace. So a
// reconcile can see a Job it deleted as gone while its own status write
// that said why is not visible yet, or a Job it just created as missing.
// laggingCache stands in for that cache over the fake API server: Gets
// read what each kind's watch has delivered so far, writes go to the API
// server and queue a change for their kind's watch, and the test delivers
// a random number of the queued changes of each kind before each
// reconcile. It also counts every successful create and delete of an
// object, and records the deletes made while the run was active.
type laggingCache struct {
	t      *testing.T
	stored client.WithWatch
	run    client.ObjectKey

	mu sync.Mutex
	// seen is what the cache holds, by kind and key; missing is NotFound.
	seen map[schema.GroupVersionKind]map[client.ObjectKey]client.Object
	// pending are the changes each kind's watch has yet to deliver, in
	// order; nil is a deletion.
	pending map[schema.GroupVersionKind][]cacheChange
	// creates and deletes count the successful writes by "Kind name".
	creates, deletes map[string]int
	// activeDeletes are the deletes made while the stored run had not
	// ended.
	activeDeletes []string
}

type cacheChange struct {
	key client.ObjectKey
	obj client.Object
}

func newLaggingCache(t *testing.T, stored client.WithWatch, run client.ObjectKey) *laggingCache {
	return &laggingCache{t: t, stored: stored, run: run,
		seen:    map[schema.GroupVersionKind]map[client.ObjectKey]client.Object{},
		pending: map[schema.GroupVersionKind][]cacheChange{},
		creates: map[string]int{}, deletes: map[string]int{}}
}

func (c *laggingCache) gvk(obj client.Object) schema.GroupVersionKind {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		c.t.Fatal(err)
	}
	return gvk
}

// typed says whether obj is a typed object the cache holds; metadata-only
// and unstructured reads go to the API server, as the reconciler's
// uncached reads do.
func typed(obj client.Object) bool {
	switch obj.(type) {
	case *metav1.PartialObjectMetadata:
		return false
	}
	_, unstructured := obj.(interface{ UnstructuredContent() map[string]any })
	return !unstructured
}

// funcs are the interceptors that make the fake API server read like the
// lagging cache and count the writes.
func (c *laggingCache) funcs() interceptor.Funcs {
	return interceptor.Funcs{
		Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if !typed(obj) {
				return cl.Get(ctx, key, obj, opts...)
			}
			return c.get(key, obj)
		},
		Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := cl.Create(ctx, obj, opts...); err != nil {
				return err
			}
			c.count(c.creates, obj)
			c.changed(ctx, obj)
			return nil
		},
		Update: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if err := cl.Update(ctx, obj, opts...); err != nil {
				return err
			}
			c.changed(ctx, obj)
			return nil
		},
		Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if err := cl.Patch(ctx, obj, patch, opts...); err != nil {
				return err
			}
			c.changed(ctx, obj)
			return nil
		},
		Delete: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			active := c.runActive(ctx)
			if err := cl.Delete(ctx, obj, opts...); err != nil {
				return err
			}
			name := c.count(c.deletes, obj)
			if active {
				c.mu.Lock()
				c.activeDeletes = append(c.activeDeletes, name)
				c.mu.Unlock()
			}
			c.changed(ctx, obj)
			return nil
		},
		SubResourcePatch: func(ctx context.Context, cl client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if err := cl.SubResource(sub).Patch(ctx, obj, patch, opts...); err != nil {
				return err
			}
			c.changed(ctx, obj)
			return nil
		},
	}
}

func (c *laggingCache) get(key client.ObjectKey, obj client.Object) error {
	gvk := c.gvk(obj)
	c.mu.Lock()
	held, ok := c.seen[gvk][key]
	c.mu.Unlock()
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, key.Name)
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(held.DeepCopyObject()).Elem())
	return nil
}

// count adds one write of obj to counts and returns its "Kind name".
func (c *laggingCache) count(counts map[string]int, obj client.Object) string {
	name := c.gvk(obj).Kind + " " + obj.GetName()
	c.mu.Lock()
	counts[name]++
	c.mu.Unlock()
	return name
}

// runActive says whether the stored run exists and has not ended.
func (c *laggingCache) runActive(ctx context.Context) bool {
	run := &v1alpha1.BenchmarkRun{}
	return c.stored.Get(ctx, c.run, run) == nil && !run.IsFinished()
}

// changed queues obj's stored state (or its deletion) for its kind's watch.
func (c *laggingCache) changed(ctx context.Context, obj client.Object) {
	gvk := c.gvk(obj)
	key := client.ObjectKeyFromObject(obj)
	now := obj.DeepCopyObject().(client.Object)
	switch err := c.stored.Get(ctx, key, now); {
	case apierrors.IsNotFound(err):
		now = nil
	case err != nil:
		c.t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending[gvk] = append(c.pending[gvk], cacheChange{key: key, obj: now})
}

// deliver lets each kind's watch deliver a random number of its queued
// changes, in order (all of them if all is set).
func (c *laggingCache) deliver(rng *rand.Rand, all bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for gvk, queue := range c.pending {
		n := len(queue)
		if !all {
			n = rng.IntN(len(queue) + 1)
		}
		for _, ch := range queue[:n] {
			if c.seen[gvk] == nil {
				c.seen[gvk] = map[client.ObjectKey]client.Object{}
			}
			if ch.obj == nil {
				delete(c.seen[gvk], ch.key)
			} else {
				c.seen[gvk][ch.key] = ch.obj
			}
		}
		c.pending[gvk] = queue[n:]
	}
}

// twice lists the objects created more than once.
func (c *laggingCache) twice() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for name, n := range c.creates {
		if n > 1 {
			out = append(out, fmt.Sprintf("%s created %d times", name, n))
		}
	}
	sort.Strings(out)
	return out
}

// stormPods plays the loader and runner pods against the stored objects:
// a loader reports its slice loaded once its Job exists, a runner reports
// ready once its Job exists, and its result once the start was published
// and the clock passed the run's end.
type stormPods struct {
	t     *testing.T
	f     *fakeReconcile
	cache *laggingCache
	run   *v1alpha1.BenchmarkRun
}

func (p stormPods) job(name string) bool {
	return p.f.exists(&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: p.run.Namespace}})
}

// report applies write to the stored ConfigMap name, if it exists and
// the pod has something new to say.
func (p stormPods) report(name string, write func(cm *corev1.ConfigMap) bool) {
	p.t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: p.run.Namespace}}
	if !p.f.exists(cm) || !write(cm) {
		return
	}
	if err := p.f.stored.Update(context.Background(), cm); err != nil {
		p.t.Fatal(err)
	}
	p.cache.changed(context.Background(), cm)
}

func (p stormPods) play() {
	p.t.Helper()
	run := p.f.run(p.run)
	if p.job(v1alpha1.LoaderJobName(run)) {
		for i := range int(*run.Spec.Workload.Dataset.LoaderPods) {
			p.report(protocol.LoaderConfigMapName(run.Name, i), func(cm *corev1.ConfigMap) bool {
				if cm.Data[protocol.KeyState] == string(protocol.StateSucceeded) {
					return false
				}
				markSucceeded(cm)
				return true
			})
		}
	}
	if !p.job(v1alpha1.RunnerJobName(run)) {
		return
	}
	w := run.Spec.Workload.Resolved()
	for i := range int(run.Replicas()) {
		p.report(protocol.ShardConfigMapName(run.Name, i), func(cm *corev1.ConfigMap) bool {
			switch {
			case cm.Data[protocol.KeyReady] == "":
				markReady(cm)
			case run.Status.StartTime != nil && cm.Data[protocol.KeyState] == "" &&
				p.f.clock.Now().After(run.Status.StartTime.Add(w.TotalDuration())):
				data, err := protocol.EncodeResult(shardtest.Shard(run.Name, w, run.Status.StartTime.Time, i, int(run.Replicas())))
				if err != nil {
					p.t.Fatal(err)
				}
				report := protocol.EncodeShardReport(protocol.ShardReport{Ready: t0, State: protocol.StateSucceeded, Result: data})
				cm.Data, cm.BinaryData = report.Data, report.BinaryData
			default:
				return false
			}
			return true
		})
	}
}

// TestReconcileStormOverAStaleCacheCreatesEachChildOnceAndDeletesNoneWhileTheRunIsActive:
// a run that loads its dataset is driven from creation to Succeeded by a
// storm of reconciles, each over a cache whose kinds lag the API server by
// a random number of changes (seeded, several seeds). Every child the run
// has (service account, Role, RoleBinding, control, loader and shard
// ConfigMaps, loader and runner Jobs) is created exactly once, and none is
// deleted before the stored run has ended: a loader Job deleted and
// created again under the same name runs a second set of loader pods,
// which on Cloud Spanner doubles the load's cost.
func TestReconcileStormOverAStaleCacheCreatesEachChildOnceAndDeletesNoneWhileTheRunIsActive(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 23))
			run := runtest.Run("r").Created(t0).Replicas(2).LoaderPods(2).Obj()
			cache := newLaggingCache(t, nil, client.ObjectKeyFromObject(run))
			f := newFakeReconcile(t, cache.funcs(), run)
			cache.stored = f.stored
			f.r.APIReader = f.stored // the manager's uncached reader
			f.spanner.plan = benchmarkrun.DatasetPlan{Source: v1alpha1.DatasetLoaded}
			cache.changed(context.Background(), run)
			cache.deliver(rng, true)
			pods := stormPods{t: t, f: f, cache: cache, run: run}
			var errs []string
			for step := 0; step < 600; step++ {
				if stored := f.run(run); stored.IsFinished() {
					break
				}
				// One pass in eight sees every change delivered, so the
				// run moves on; the others see a random lag.
				cache.deliver(rng, step%8 == 7)
				if _, err := f.reconcile(run); err != nil && !slices.Contains(errs, err.Error()) {
					errs = append(errs, err.Error())
				}
				pods.play()
				f.clock.Step(100 * time.Millisecond)
			}
			got := f.run(run)
			wantCondition(t, got, v1alpha1.ConditionSucceeded, metav1.ConditionTrue, v1alpha1.ReasonCompleted)
			if dup := cache.twice(); len(dup) > 0 {
				t.Errorf("children created more than once: %s", strings.Join(dup, "; "))
			}
			if len(cache.activeDeletes) > 0 {
				t.Errorf("children deleted while the run was still active: %s", strings.Join(cache.activeDeletes, "; "))
			}
			for _, want := range []string{"ServiceAccount " + v1alpha1.RunnerServiceAccountName(run), "Role " + v1alpha1.RunnerServiceAccountName(run),
				"RoleBinding " + v1alpha1.RunnerServiceAccountName(run), "ConfigMap " + protocol.ControlConfigMapName(run.Name),
				"ConfigMap " + protocol.LoaderConfigMapName(run.Name, 1), "ConfigMap " + protocol.ShardConfigMapName(run.Name, 1),
				"Job " + v1alpha1.LoaderJobName(run), "Job " + v1alpha1.RunnerJobName(run)} {
				if cache.creates[want] != 1 {
					t.Errorf("%s was created %d times, want once", want, cache.creates[want])
				}
			}
			if len(errs) > 0 {
				t.Logf("reconcile errors retried meanwhile: %q", errs)
			}
		})
	}
}
