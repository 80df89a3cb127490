package session_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/spanner"
	"cloud.google.com/go/spanner/admin/instance/apiv1/instancepb"
	"golang.org/x/oauth2"
	"google.golang.org/api/option"
	"google.golang.org/grpc"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/emulatortest"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/session"
	"github.com/spanbench/spanbench/spanner/target"
	"github.com/spanbench/spanbench/spanner/workload"
)

// TestCloudClientsAfterAnEmulatorSessionDoNotDialTheEmulator guards the
// paid-instance leak of issue 9: once a process had opened an emulator
// session, every Cloud Spanner client it built afterwards dialled the
// emulator, so an Ephemeral instance's deletion went there. Here the
// emulator sits behind a proxy that counts connections, and the Cloud
// clients get a dialer that records the address and refuses, and a static
// token, so nothing leaves the machine.
func TestCloudClientsAfterAnEmulatorSessionDoNotDialTheEmulator(t *testing.T) {
	emulatortest.NoMetadataServer(t)
	emu := emulatortest.Start(t)
	proxy := startConnCounter(t, emu.Host())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	emuTarget := v1alpha1.TargetSpec{Project: "spanbench-test", Database: "bench",
		Instance: v1alpha1.InstanceSpec{Name: "test", Config: target.EmulatorConfig, Nodes: new(int32(1))}}
	emuEndpoint := endpoint.Emulator(proxy.addr)
	spec := v1alpha1.WorkloadSpec{Type: v1alpha1.WorkloadYCSB}
	spec = spec.Resolved()
	schema, err := workload.SchemaFor(&spec, v1alpha1.DialectGoogleSQL)
	if err != nil {
		t.Fatal(err)
	}
	if err := session.EnsureDatabase(ctx, emuEndpoint, emuTarget, schema, true); err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(ctx, emuEndpoint, emuTarget)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Client.Single().Query(ctx, spanner.Statement{SQL: "SELECT 1"}).Next(); err != nil {
		t.Fatalf("the emulator session does not answer: %v", err)
	}
	if h := os.Getenv(endpoint.EmulatorHostEnv); h != "" {
		t.Errorf("opening an emulator session set %s=%s: process state that redirects every later client", endpoint.EmulatorHostEnv, h)
	}
	before := proxy.count()
	if before == 0 {
		t.Fatal("the emulator session did not go through the proxy; the test proves nothing")
	}

	cloudCalls(ctx, t)
	if after := proxy.count(); after != before {
		t.Errorf("the Cloud Spanner clients opened %d connections to the emulator; want none", after-before)
	}
}

// cloudCalls builds a Cloud Spanner admin client and data client, makes a
// call with each, and checks that each dialled Cloud Spanner's endpoint.
func cloudCalls(ctx context.Context, t *testing.T) {
	t.Helper()
	token := option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "static-token-of-a-test"}))
	adminDials, dataDials := &refusingDialer{}, &refusingDialer{}
	actx, acancel := context.WithTimeout(ctx, 2*time.Second)
	defer acancel()
	ia, da, err := target.AdminClients(actx, endpoint.Cloud("", option.WithGRPCDialOption(grpc.WithContextDialer(adminDials.dial)), token))
	if err != nil {
		t.Fatal(err)
	}
	defer ia.Close()
	defer da.Close()
	if _, err := ia.GetInstance(actx, &instancepb.GetInstanceRequest{Name: "projects/some-project/instances/paid"}); err == nil {
		t.Error("a Cloud Spanner GetInstance succeeded, though its dialer refuses every connection: it was answered elsewhere")
	}

	dctx, dcancel := context.WithTimeout(ctx, 2*time.Second)
	defer dcancel()
	cloudTarget := v1alpha1.TargetSpec{Project: "some-project", Database: "db", Instance: v1alpha1.InstanceSpec{Name: "paid"}}
	cs, err := session.Open(dctx, endpoint.Cloud("", option.WithGRPCDialOption(grpc.WithContextDialer(dataDials.dial)), token), cloudTarget)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.Client.Single().ReadRow(dctx, "usertable", spanner.Key{"k"}, []string{"field0"}); err == nil {
		t.Error("a Cloud Spanner read succeeded, though its dialer refuses every connection: it was answered elsewhere")
	}
	for client, d := range map[string]*refusingDialer{"admin": adminDials, "data": dataDials} {
		got := d.addresses()
		if len(got) == 0 {
			t.Errorf("the Cloud Spanner %s client dialled nothing through its dialer", client)
		}
		for _, a := range got {
			if a != endpoint.CloudDefault {
				t.Errorf("the Cloud Spanner %s client dialled %q; want %q", client, a, endpoint.CloudDefault)
			}
		}
	}
}

// refusingDialer records the addresses gRPC dials and refuses them all.
type refusingDialer struct {
	mu    sync.Mutex
	addrs []string
}

func (d *refusingDialer) dial(_ context.Context, addr string) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !slices.Contains(d.addrs, addr) {
		d.addrs = append(d.addrs, addr)
	}
	return nil, errors.New("this test lets no connection leave the machine")
}

func (d *refusingDialer) addresses() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.addrs)
}

// connCounter is a loopback TCP proxy to one address that counts the
// connections it accepts.
type connCounter struct {
	addr  string
	mu    sync.Mutex
	conns int
}

// startConnCounter proxies a loopback port to upstream until the test ends.
func startConnCounter(t *testing.T, upstream string) *connCounter {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &connCounter{addr: l.Addr().String()}
	var wg sync.WaitGroup
	var open sync.Map // net.Conn -> struct{}, closed at cleanup
	t.Cleanup(func() {
		_ = l.Close()
		open.Range(func(c, _ any) bool { _ = c.(net.Conn).Close(); return true })
		wg.Wait()
	})
	wg.Go(func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return // closed at cleanup
			}
			p.mu.Lock()
			p.conns++
			p.mu.Unlock()
			out, err := net.Dial("tcp", upstream)
			if err != nil {
				_ = in.Close()
				continue
			}
			open.Store(in, struct{}{})
			open.Store(out, struct{}{})
			wg.Go(func() { _, _ = io.Copy(out, in); _ = out.Close() })
			wg.Go(func() { _, _ = io.Copy(in, out); _ = in.Close() })
		}
	})
	return p
}

func (p *connCounter) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conns
}
