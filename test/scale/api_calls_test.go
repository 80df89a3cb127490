package scale_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// apiCalls times the calls a reconciler makes through its client, by
// verb and kind: the breakdown of where a reconcile's time goes (a Get or
// List of a cached kind is served by the informer cache; every write, and
// every read through the API reader, is a round trip).
type apiCalls struct {
	mu    sync.Mutex
	calls map[string]*callStat
}

// callStat sums the calls of one verb and kind.
type callStat struct {
	count, over100ms int
	sum, max         time.Duration
}

func newAPICalls() *apiCalls { return &apiCalls{calls: map[string]*callStat{}} }

func (a *apiCalls) observe(verb string, obj any, began time.Time) {
	d := time.Since(began)
	key := fmt.Sprintf("%s %T", verb, obj)
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.calls[key]
	if s == nil {
		s = &callStat{}
		a.calls[key] = s
	}
	s.count++
	s.sum += d
	s.max = max(s.max, d)
	if d > 100*time.Millisecond {
		s.over100ms++
	}
}

// String lists the calls by their total time, longest first.
func (a *apiCalls) String() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	keys := slices.SortedFunc(maps.Keys(a.calls), func(x, y string) int { return int(a.calls[y].sum - a.calls[x].sum) })
	var b strings.Builder
	for _, k := range keys {
		s := a.calls[k]
		fmt.Fprintf(&b, "\n  %-50s %5d calls, total %7.2f s, mean %6.1f ms, max %6.0f ms, %d over 100 ms",
			k, s.count, s.sum.Seconds(), float64(s.sum.Milliseconds())/float64(s.count), float64(s.max.Milliseconds()), s.over100ms)
	}
	return b.String()
}

// timedClient is a client whose calls an apiCalls times.
type timedClient struct {
	client.Client
	calls *apiCalls
}

func (c timedClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return timedReader{c.Client, c.calls, ""}.Get(ctx, key, obj, opts...)
}

func (c timedClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return timedReader{c.Client, c.calls, ""}.List(ctx, list, opts...)
}

func (c timedClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	defer c.calls.observe("create", obj, time.Now())
	return c.Client.Create(ctx, obj, opts...)
}

func (c timedClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	defer c.calls.observe("update", obj, time.Now())
	return c.Client.Update(ctx, obj, opts...)
}

func (c timedClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	defer c.calls.observe("patch "+string(patch.Type()), obj, time.Now())
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c timedClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	defer c.calls.observe("delete", obj, time.Now())
	return c.Client.Delete(ctx, obj, opts...)
}

func (c timedClient) Status() client.SubResourceWriter {
	return timedStatus{c.Client.Status(), c.calls}
}

// timedStatus times the status writes of a timedClient.
type timedStatus struct {
	client.SubResourceWriter
	calls *apiCalls
}

func (s timedStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	defer s.calls.observe("status update", obj, time.Now())
	return s.SubResourceWriter.Update(ctx, obj, opts...)
}

func (s timedStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	began := time.Now()
	err := s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
	verb := "status patch "
	if apierrors.IsConflict(err) {
		verb = "status patch (conflict) "
	}
	s.calls.observe(verb+string(patch.Type()), obj, began)
	return err
}

// timedReader is a reader timed by an apiCalls, its calls' verbs after
// prefix ("apireader " for the API reader, which is uncached).
type timedReader struct {
	client.Reader
	calls  *apiCalls
	prefix string
}

func (r timedReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	defer r.calls.observe(r.prefix+"get", obj, time.Now())
	return r.Reader.Get(ctx, key, obj, opts...)
}

func (r timedReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	defer r.calls.observe(r.prefix+"list", list, time.Now())
	return r.Reader.List(ctx, list, opts...)
}
