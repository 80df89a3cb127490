//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// created records every object of one kind ever created in a namespace
// while it watches, by UID: an object deleted and created again under the
// same name counts twice, and one created and deleted between two looks
// counts too, which a List at the end would miss.
type created struct {
	mu   sync.Mutex
	uids map[types.UID]client.Object
	stop context.CancelFunc
	done chan struct{}
}

// watchCreated starts recording the objects of list's kind in ns that carry
// the run's label. Start it before the run is created. The watch is
// restarted if the API server ends it (a restart sends the objects that
// exist as added again, so nothing of what is still there is missed).
func watchCreated(t *testing.T, ns, run string, list client.ObjectList) *created {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	c := &created{uids: map[types.UID]client.Object{}, stop: cancel, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		defer close(c.done)
		first := true
		for ctx.Err() == nil {
			w, err := suite.c.Watch(ctx, list, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelRun: run})
			if first {
				started <- err
				first = false
			}
			if err != nil {
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
				continue
			}
			for ev := range w.ResultChan() {
				if o, ok := ev.Object.(client.Object); ok && o.GetUID() != "" {
					c.mu.Lock()
					c.uids[o.GetUID()] = o
					c.mu.Unlock()
				}
			}
		}
	}()
	if err := <-started; err != nil {
		cancel()
		t.Fatalf("watching %T in %s: %v", list, ns, err)
	}
	t.Cleanup(c.end)
	return c
}

// end stops the watch.
func (c *created) end() {
	c.stop()
	<-c.done
}

// named are the recorded objects that pass keep, as "name (uid)", sorted.
func (c *created) named(keep func(client.Object) bool) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for uid, o := range c.uids {
		if keep(o) {
			out = append(out, fmt.Sprintf("%s (%s)", o.GetName(), uid))
		}
	}
	sort.Strings(out)
	return out
}

// requireEachChildOnce checks, after the run ended, that it made exactly
// one loader Job with exactly dataset.loaderPods pods, and one runner Job
// with exactly runners.replicas pods: no Job deleted and created again, no
// pod started twice for one index.
func requireEachChildOnce(t *testing.T, run *v1alpha1.BenchmarkRun, jobs, pods *created) {
	t.Helper()
	jobs.end()
	pods.end()
	job := func(name string) func(client.Object) bool {
		return func(o client.Object) bool { return o.GetName() == name }
	}
	component := func(name string) func(client.Object) bool {
		return func(o client.Object) bool { return o.GetLabels()["app.kubernetes.io/component"] == name }
	}
	for _, c := range []struct {
		what string
		got  []string
		want int32
	}{
		{"loader Jobs", jobs.named(job(v1alpha1.LoaderJobName(run))), 1},
		{"runner Jobs", jobs.named(job(v1alpha1.RunnerJobName(run))), 1},
		{"loader pods", pods.named(component("loader")), ptr.Deref(run.Spec.Workload.Dataset.LoaderPods, v1alpha1.DefaultLoaderPods)},
		{"runner pods", pods.named(component("runner")), run.Replicas()},
	} {
		if len(c.got) != int(c.want) {
			t.Errorf("the run created %d %s, want %d: %q", len(c.got), c.what, c.want, c.got)
		}
	}
}

// watchChildren starts recording the run's Jobs and pods (watchCreated).
func watchChildren(t *testing.T, ns, run string) (jobs, pods *created) {
	return watchCreated(t, ns, run, &batchv1.JobList{}), watchCreated(t, ns, run, &corev1.PodList{})
}
