package pod

// The runner is tested against a real kube-apiserver (envtest, one per test
// package, started in TestMain) and the real Cloud Spanner emulator, with
// the test playing the controller's part of the protocol.
//
// Run with: KUBEBUILDER_ASSETS=$(hack/envtest-assets.sh) go test ./pod/

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/internal/await"
	"github.com/spanbench/spanbench/internal/testenv"
	"github.com/spanbench/spanbench/runner/protocol"
)

// requestTimeout bounds every call the test makes to the API server.
const requestTimeout = testenv.RequestTimeout

var (
	cfg       *rest.Config
	k8sClient client.Client
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	return testenv.Run(m, "shard", nil, func(c *rest.Config) (err error) {
		cfg = c
		k8sClient, err = client.New(cfg, client.Options{})
		return err
	})
}

// bounded is a context for one API call.
func bounded(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	t.Cleanup(cancel)
	return ctx
}

// newNamespace creates a namespace of the test's own.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "shard-"}}
	if err := k8sClient.Create(bounded(t), ns); err != nil {
		t.Fatalf("creating a namespace: %v", err)
	}
	return ns.Name
}

// createControlRaw creates a run's control ConfigMap with the given data.
func createControlRaw(t *testing.T, ns, run string, data map[string]string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: protocol.ControlConfigMapName(run)}, Data: data}
	if err := k8sClient.Create(bounded(t), cm); err != nil {
		t.Fatalf("creating the control ConfigMap: %v", err)
	}
}

// createControl creates a run's control ConfigMap the way the controller
// does: protocol.Control as JSON.
func createControl(t *testing.T, ns string, c protocol.Control) {
	t.Helper()
	b, err := protocol.EncodeControl(c)
	if err != nil {
		t.Fatal(err)
	}
	createControlRaw(t, ns, c.Run, map[string]string{protocol.KeyControl: b})
}

// createShardMaps creates the empty shard ConfigMaps, as the controller does.
func createShardMaps(t *testing.T, ns, run string, shards int) {
	t.Helper()
	for i := range shards {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: protocol.ShardConfigMapName(run, i),
			Labels: map[string]string{protocol.LabelShard: fmt.Sprint(i)}}}
		if err := k8sClient.Create(bounded(t), cm); err != nil {
			t.Fatalf("creating shard ConfigMap %d: %v", i, err)
		}
	}
}

// shardMap reads shard i's ConfigMap.
func shardMap(t *testing.T, ns, run string, i int) *corev1.ConfigMap {
	t.Helper()
	var cm corev1.ConfigMap
	if err := k8sClient.Get(bounded(t), client.ObjectKey{Namespace: ns, Name: protocol.ShardConfigMapName(run, i)}, &cm); err != nil {
		t.Fatalf("reading shard ConfigMap %d: %v", i, err)
	}
	return &cm
}

// shardReport reads shard i's report, which must decode.
func shardReport(t *testing.T, ns, run string, i int) protocol.ShardReport {
	t.Helper()
	cm := shardMap(t, ns, run, i)
	rep, err := protocol.DecodeShardReport(cm.Data, cm.BinaryData)
	if err != nil {
		t.Fatalf("shard ConfigMap %d holds %v, which does not decode: %v", i, cm.Data, err)
	}
	return rep
}

// publishStart writes the start time into the control map, as the
// controller does once every shard is ready.
func publishStart(t *testing.T, ns, run string, at time.Time) {
	t.Helper()
	patch, err := json.Marshal(protocol.Maps{Data: protocol.EncodeStart(at)})
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: protocol.ControlConfigMapName(run)}}
	if err := k8sClient.Patch(bounded(t), cm, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("publishing the start time: %v", err)
	}
}

// testLog is a logger writing to the test's log.
func testLog(t *testing.T) logr.Logger { return testr.New(t) }

// runnerHandle is a runner running in a goroutine.
type runnerHandle struct {
	index int
	done  chan struct{}
	err   error
}

func (h *runnerHandle) finished() bool {
	select {
	case <-h.done:
		return true
	default:
		return false
	}
}

// wait waits for the runner to return, failing the test after timeout.
func (h *runnerHandle) wait(t *testing.T, timeout time.Duration) error {
	t.Helper()
	select {
	case <-h.done:
		return h.err
	case <-time.After(timeout):
		t.Fatalf("runner %d did not return within %s", h.index, timeout)
		return nil
	}
}

// startRunners runs shards 0..n-1 of a run in goroutines, with c as their
// client and opts adjusting their options. The test's cleanup cancels
// them and waits for them, so none outlives its emulator.
func startRunners(t *testing.T, c client.Client, ns, run string, n int, opts func(i int, o *Options)) []*runnerHandle {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	handles := make([]*runnerHandle, n)
	for i := range n {
		o := Options{Namespace: ns, Run: run, Index: i, Log: testLog(t).WithName(fmt.Sprintf("shard-%d", i))}
		if opts != nil {
			opts(i, &o)
		}
		h := &runnerHandle{index: i, done: make(chan struct{})}
		handles[i] = h
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(h.done)
			h.err = Run(ctx, c, o)
		}()
	}
	return handles
}

// waitReady waits until every shard reports ready, failing early with the
// runner's own error when one gives up instead.
func waitReady(t *testing.T, ns, run string, handles []*runnerHandle, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, "every shard reporting ready", func() (bool, string) {
		var notReady []string
		for i, h := range handles {
			if h.finished() {
				t.Fatalf("runner %d returned before the start time was published: %v", i, h.err)
			}
			if shardReport(t, ns, run, i).Ready.IsZero() {
				notReady = append(notReady, fmt.Sprint(i))
			}
		}
		return len(notReady) == 0, "not ready: shards " + strings.Join(notReady, ", ")
	})
}

// eventually polls cond until it holds, failing the test after timeout with
// what it was waiting for and cond's last word on why not.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	await.Eventually(t, await.Poll{Within: timeout, Every: 50 * time.Millisecond}, what, cond)
}
