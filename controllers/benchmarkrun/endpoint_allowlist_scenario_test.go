package benchmarkrun_test

import (
	"context"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/target"
)

// countingListener is a TCP server on loopback that counts the
// connections made to it: the stand-in for what a hostile run names as its
// emulator (the cloud metadata server, the Kubernetes API).
type countingListener struct {
	net.Listener
	accepted atomic.Int32
}

func listenCounting(t *testing.T) *countingListener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &countingListener{Listener: l}
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			c.accepted.Add(1)
			_ = conn.Close()
		}
	}()
	t.Cleanup(func() { _ = l.Close() })
	return c
}

// TestManagerNeverDialsAnEmulatorOutsideItsAllowlist: a run whose
// emulatorHost is not on the manager's allowlist fails with reason
// EndpointNotAllowed and a message that says so, nothing else: the address
// is never dialed (no connection reaches it, before or at deletion), so
// the run's conditions cannot tell an open port from a closed one. A run
// on the allowed emulator is served by the same manager.
func TestManagerNeverDialsAnEmulatorOutsideItsAllowlist(t *testing.T) {
	h := newHarness(t)
	allowed, err := endpoint.AllowEmulators(h.emu.Host())
	if err != nil {
		t.Fatal(err)
	}
	h.startManager(benchmarkrun.SpannerPreparer{Emulators: allowed})
	probe := listenCounting(t)

	open := h.ephemeralSpec("open-port", 1)
	open.Spec.Target.EmulatorHost = probe.Addr().String()
	closed := h.runSpec("closed-port", 1)
	closed.Spec.Target.EmulatorHost = "127.0.0.1:1"
	fine := h.runSpec("fine", 1)
	for _, r := range []*v1alpha1.BenchmarkRun{open, closed, fine} {
		h.create(r)
	}

	var messages []string
	for _, r := range []*v1alpha1.BenchmarkRun{open, closed} {
		got := h.finished(r, 30*time.Second)
		c := h.condition(got, v1alpha1.ConditionSucceeded)
		if c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonEndpointNotAllowed {
			t.Fatalf("run %s ended %s/%s (%s); want False/%s", r.Name, c.Status, c.Reason, c.Message, v1alpha1.ReasonEndpointNotAllowed)
		}
		if !strings.Contains(c.Message, "not allowed by the manager's allowlist") || !strings.Contains(c.Message, r.Spec.Target.EmulatorHost) {
			t.Errorf("run %s: message %q does not say its emulator is not allowed by the manager's allowlist", r.Name, c.Message)
		}
		for _, leak := range []string{"refused", "dial", "connect", "timeout", "EOF", "Unavailable"} {
			if strings.Contains(c.Message, leak) {
				t.Errorf("run %s: message %q carries a dial outcome (%q)", r.Name, c.Message, leak)
			}
		}
		messages = append(messages, strings.ReplaceAll(c.Message, r.Spec.Target.EmulatorHost, "HOST"))
	}
	if messages[0] != messages[1] {
		t.Errorf("an open and a closed port read differently:\n%s\n%s", messages[0], messages[1])
	}
	h.eventually("the run on the allowed emulator gets its target ready", 30*time.Second, func() bool {
		c := h.condition(h.current(fine), v1alpha1.ConditionTargetReady)
		return c != nil && c.Status == metav1.ConditionTrue
	})

	// Deleting the refused Ephemeral run does not dial it either: there is
	// nothing the manager could have created there.
	if err := h.c.Delete(context.Background(), open); err != nil {
		t.Fatal(err)
	}
	h.eventually("the refused run is released", 30*time.Second, func() bool { return h.current(open) == nil })
	if n := probe.accepted.Load(); n != 0 {
		t.Errorf("the manager made %d connections to %s, which its allowlist refuses", n, probe.Addr())
	}
}

// TestSweepSkipsEmulatorsOutsideTheAllowlist: the orphan sweep visits the
// emulators that runs name, but never one its allowlist refuses.
func TestSweepSkipsEmulatorsOutsideTheAllowlist(t *testing.T) {
	h := newHarness(t)
	probe := listenCounting(t)
	refused := h.ephemeralSpec("refused", 1)
	refused.Spec.Target.EmulatorHost = probe.Addr().String()
	allowed := h.ephemeralSpec("allowed", 1)
	h.create(refused)
	h.create(allowed)

	list, err := endpoint.AllowEmulators(h.emu.Host())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var opened []string
	sweeper := &benchmarkrun.InstanceSweeper{Client: h.c, APIReader: h.c, Emulators: list, CallTimeout: 5 * time.Second,
		OpenInstanceAdmin: func(ctx context.Context, ep endpoint.Endpoint) (target.InstanceAdmin, error) {
			mu.Lock()
			defer mu.Unlock()
			opened = append(opened, ep.EmulatorHost())
			return target.OpenInstanceAdmin(ctx, ep)
		}}
	sweeper.Sweep(context.Background())
	mu.Lock()
	defer mu.Unlock()
	if slices.Contains(opened, probe.Addr().String()) {
		t.Errorf("the sweep opened %s, which its allowlist refuses (opened %v)", probe.Addr(), opened)
	}
	if !slices.Contains(opened, h.emu.Host()) {
		t.Errorf("the sweep did not visit the allowed emulator %s (opened %v)", h.emu.Host(), opened)
	}
	if n := probe.accepted.Load(); n != 0 {
		t.Errorf("%d connections reached %s, which the allowlist refuses", n, probe.Addr())
	}
}
