// Package emulator starts and stops the Cloud Spanner emulator as a child
// process, for `spanbench run` without an endpoint and for tests.
//
// Every Start launches a fresh emulator on free loopback ports: the emulator
// keeps no state worth reusing, and one that has run for long serves strong
// reads ever more slowly (its clock runs ahead of real time by about 1 µs per
// RPC and strong reads wait for real time to catch up), so sharing one
// between runs or tests would skew their numbers.
//
// The emulator is two processes: gateway_main, which we start, and the
// emulator_main it spawns to serve gRPC. Stop ends both.
package emulator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	instance "cloud.google.com/go/spanner/admin/instance/apiv1"
	"cloud.google.com/go/spanner/admin/instance/apiv1/instancepb"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/spanbench/spanbench/spanner/endpoint"
)

// DefaultPath is the Google Cloud CLI Debian package's standard location.
const DefaultPath = "/usr/lib/google-cloud-sdk/bin/cloud_spanner_emulator/gateway_main"

// PathEnv names the environment variable that overrides where gateway_main
// is, for installs outside the Debian package's location.
const PathEnv = "SPANBENCH_EMULATOR_PATH"

// DefaultStartTimeout bounds Start when Options.StartTimeout is zero. A
// fresh emulator is ready in about 0.1 s on 2 cores; the margin covers a
// loaded CI machine.
const DefaultStartTimeout = 30 * time.Second

// installHint is appended to every "not found" error so that the reader
// knows how to fix it without searching.
const installHint = "install it with `apt-get install google-cloud-cli-spanner-emulator` " +
	"(Google Cloud CLI Debian package) or `gcloud components install cloud-spanner-emulator`, " +
	"or set $" + PathEnv + " to its gateway_main"

// Options configure Start. The zero value starts the emulator found by
// Find("") with the default timeout and discards its output.
type Options struct {
	// Path is gateway_main; "" looks up $SPANBENCH_EMULATOR_PATH, then
	// DefaultPath, then the copy beside the gcloud on $PATH (see Find).
	Path string
	// StartTimeout bounds the wait until the emulator serves admin calls;
	// zero means DefaultStartTimeout.
	StartTimeout time.Duration
	// Log receives the emulator's stdout and stderr; nil discards them (the
	// last lines still appear in Start's and Stop's errors). Write errors are
	// ignored so that a broken log cannot stall the emulator on a full pipe.
	Log io.Writer
}

// Emulator is a running Cloud Spanner emulator started by Start. Its methods
// are safe for concurrent use.
type Emulator struct {
	path     string
	grpcPort int
	httpPort int
	cmd      *exec.Cmd
	out      *outputTail

	// done is closed once cmd.Wait has returned (the gateway is reaped);
	// waitErr is its result, safe to read after done is closed.
	done    chan struct{}
	waitErr error

	stopOnce sync.Once
	stopErr  error
}

// Find returns the gateway_main to run. A non-empty path is the only
// candidate; otherwise $SPANBENCH_EMULATOR_PATH is, when set (an explicit
// setting that is wrong must fail rather than be silently replaced);
// otherwise DefaultPath and then bin/cloud_spanner_emulator/gateway_main
// beside the gcloud found on $PATH (where `gcloud components install` puts
// it). The error names every path tried and how to install the emulator.
func Find(path string) (string, error) {
	type candidate struct{ path, from string }
	var cands []candidate
	switch env := os.Getenv(PathEnv); {
	case path != "":
		cands = []candidate{{path, "Options.Path"}}
	case env != "":
		cands = []candidate{{env, "$" + PathEnv}}
	default:
		cands = []candidate{{DefaultPath, "default"}}
		if g := gcloudSibling(); g != "" && g != DefaultPath {
			cands = append(cands, candidate{g, "beside gcloud on $PATH"})
		}
	}
	var tried []string
	for _, c := range cands {
		err := checkGateway(c.path)
		if err == nil {
			return c.path, nil
		}
		tried = append(tried, fmt.Sprintf("%s (%s): %v", c.path, c.from, err))
	}
	return "", fmt.Errorf("cloud spanner emulator not found; tried %s; %s",
		strings.Join(tried, "; "), installHint)
}

// gcloudSibling returns where `gcloud components install
// cloud-spanner-emulator` puts gateway_main for the gcloud on $PATH, or "".
func gcloudSibling() string {
	g, err := exec.LookPath("gcloud")
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(g); err == nil {
		g = r
	}
	return filepath.Join(filepath.Dir(g), "cloud_spanner_emulator", "gateway_main")
}

// checkGateway tells why path cannot be run as gateway_main. It also checks
// for emulator_main beside it, because the gateway only notices that it is
// missing after starting, with a less helpful message.
func checkGateway(path string) error {
	for _, p := range []string{path, filepath.Join(filepath.Dir(path), "emulator_main")} {
		info, err := os.Stat(p)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return fmt.Errorf("%s does not exist", p)
		case err != nil:
			return err
		case !info.Mode().IsRegular():
			return fmt.Errorf("%s is not a regular file", p)
		case info.Mode().Perm()&0o111 == 0:
			return fmt.Errorf("%s is not executable", p)
		}
	}
	return nil
}

// Start launches a fresh emulator (`gateway_main --hostname 127.0.0.1
// --grpc_port P --http_port Q` on free loopback ports) and returns once it
// serves admin calls, or fails within Options.StartTimeout. ctx bounds only
// the start: the emulator runs until Stop, which the caller must call. If
// the emulator exits during start (another process took a port between our
// pick and its bind), Start retries twice with new ports.
func Start(ctx context.Context, o Options) (*Emulator, error) {
	if err := checkPlatform(); err != nil {
		return nil, err
	}
	path, err := Find(o.Path)
	if err != nil {
		return nil, err
	}
	timeout := o.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	const attempts = 3
	for attempt := 1; ; attempt++ {
		e, err := launch(path, o.Log)
		if err != nil {
			return nil, err
		}
		err = e.waitReady(ctx, timeout)
		if err == nil {
			return e, nil
		}
		if stopErr := e.Stop(); stopErr != nil && !errors.Is(stopErr, errExited) {
			err = fmt.Errorf("%w (and stopping it: %w)", err, stopErr)
		}
		if !errors.Is(err, errExited) || attempt == attempts || ctx.Err() != nil {
			return nil, err
		}
	}
}

// launch starts gateway_main in its own process group, so that Stop can
// reach the emulator_main it spawns, which keeps running when only the
// gateway is signalled.
func launch(path string, log io.Writer) (*Emulator, error) {
	grpcPort, httpPort, err := freePorts()
	if err != nil {
		return nil, err
	}
	out := &outputTail{log: log}
	cmd := exec.Command(path,
		"--hostname", "127.0.0.1",
		"--grpc_port", strconv.Itoa(grpcPort),
		"--http_port", strconv.Itoa(httpPort))
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = sysProcAttr()
	// emulator_main inherits the output pipe; should it outlive the gateway,
	// Wait would block on the pipe forever without this bound.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	e := &Emulator{
		path:     path,
		grpcPort: grpcPort,
		httpPort: httpPort,
		cmd:      cmd,
		out:      out,
		done:     make(chan struct{}),
	}
	go func() {
		e.waitErr = cmd.Wait()
		close(e.done)
	}()
	return e, nil
}

// freePorts picks two distinct free loopback ports by binding port 0. Both
// listeners are held until both ports are known, so the two differ.
func freePorts() (int, int, error) {
	var ports [2]int
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, 0, fmt.Errorf("pick a free port: %w", err)
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports[0], ports[1], nil
}

// stopGrace is how long each of Stop's steps waits before escalating. The
// emulator exits within about 30 ms of SIGTERM, so 3 s only matters for a
// hung one; tests shorten it.
var stopGrace = 3 * time.Second

// errExited marks a gateway that exited on its own; Start retries on it.
var errExited = errors.New("cloud spanner emulator exited")

// waitReady polls until the gRPC port accepts connections and an admin call
// succeeds: the port opens before the admin service answers.
func (e *Emulator) waitReady(ctx context.Context, timeout time.Duration) error {
	// gRPC's default reconnect backoff starts at 1 s, and the first
	// connection attempts are refused even after a plain TCP dial works (the
	// port seems to be opened briefly before the server listens for good),
	// which would add a second to every start; so back off from 50 ms.
	opts := append(endpoint.Emulator(e.Host()).ClientOptions(), option.WithGRPCDialOption(grpc.WithConnectParams(grpc.ConnectParams{
		Backoff:           backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, MaxDelay: time.Second},
		MinConnectTimeout: time.Second,
	})))
	admin, err := instance.NewInstanceAdminClient(ctx, opts...)
	if err != nil {
		return fmt.Errorf("emulator admin client: %w", err)
	}
	defer admin.Close()

	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		lastErr := e.probe(ctx, admin)
		if lastErr == nil {
			return nil
		}
		select {
		case <-e.done:
			return fmt.Errorf("%w during start (%w)%s", errExited, e.waitErr, e.out.suffix())
		case <-ctx.Done():
			return fmt.Errorf("cloud spanner emulator at %s not ready within %v: %w (last error: %w)%s",
				e.Host(), timeout, ctx.Err(), lastErr, e.out.suffix())
		case <-tick.C:
		}
	}
}

// probe makes one bounded readiness check.
func (e *Emulator) probe(ctx context.Context, admin *instance.InstanceAdminClient) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", e.Host())
	if err != nil {
		return err
	}
	_ = c.Close() // only the dial mattered
	// Any project works: the emulator creates projects on first use.
	// No client-side retries: their backoff would outlast our 50 ms polling.
	it := admin.ListInstanceConfigs(ctx, &instancepb.ListInstanceConfigsRequest{Parent: "projects/spanbench-probe"},
		gax.WithRetry(func() gax.Retryer { return nil }))
	if _, err := it.Next(); err != nil && !errors.Is(err, iterator.Done) {
		return err
	}
	return nil
}

// Host returns "127.0.0.1:P", the emulator's gRPC address, for
// endpoint.Emulator.
func (e *Emulator) Host() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(e.grpcPort))
}

// Stop ends the gateway and the emulator_main it spawned and reaps the
// gateway: it signals emulator_main first, so that the gateway reaps it and
// exits by itself (signalling the gateway first would leave emulator_main
// orphaned), then falls back to SIGTERM and finally SIGKILL to the whole
// process group, each after a bounded grace. It returns within about 10 s
// (30 ms for a healthy emulator).
// Repeated calls return the first call's result. The error is non-nil if a
// process could not be stopped, or if the emulator had already exited
// before Stop (its output's tail is included).
func (e *Emulator) Stop() error {
	e.stopOnce.Do(func() { e.stopErr = e.stop() })
	return e.stopErr
}

func (e *Emulator) stop() error {
	var exitedBefore error
	select {
	case <-e.done:
		exitedBefore = fmt.Errorf("%w before Stop (%w)%s", errExited, e.waitErr, e.out.suffix())
	default:
	}
	pgid := e.cmd.Process.Pid
	grace := stopGrace
	steps := []func(){
		func() {
			// Only the gateway's children: it notices, reaps them and exits.
			children := groupMembers(pgid, pgid)
			if len(children) == 0 {
				signalGroup(pgid, false)
			}
			for _, pid := range children {
				signalPid(pid, false)
			}
		},
		func() { signalGroup(pgid, false) },
		func() {
			// Children first, giving the gateway a moment to reap them:
			// killed together, they would linger as zombies until init
			// reaps them.
			for _, pid := range groupMembers(pgid, pgid) {
				signalPid(pid, true)
			}
			for deadline := time.Now().Add(500 * time.Millisecond); time.Now().Before(deadline) &&
				len(groupMembers(pgid, pgid)) > 0; {
				time.Sleep(20 * time.Millisecond)
			}
			signalGroup(pgid, true)
		},
	}
	for _, step := range steps {
		step()
		if e.waitGone(pgid, grace) {
			return exitedBefore
		}
	}
	return fmt.Errorf("cloud spanner emulator (process group %d) still running after SIGKILL: pids %v",
		pgid, groupMembers(pgid, -1))
}

// waitGone waits up to d for the gateway to be reaped and no live process
// to remain in its group.
func (e *Emulator) waitGone(pgid int, d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-e.done:
			if len(groupMembers(pgid, -1)) == 0 {
				return true
			}
		default:
		}
		select {
		case <-deadline.C:
			return false
		case <-tick.C:
		}
	}
}

// outputTail forwards the emulator's output to an optional log and keeps its
// last lines for error messages.
type outputTail struct {
	mu  sync.Mutex
	log io.Writer
	buf []byte
}

const tailBytes = 4 << 10

func (t *outputTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.log != nil {
		_, _ = t.log.Write(p) // see Options.Log
	}
	t.buf = append(t.buf, p...)
	if n := len(t.buf); n > tailBytes {
		t.buf = append(t.buf[:0], t.buf[n-tailBytes:]...)
	}
	return len(p), nil
}

// suffix returns the last meaningful output lines formatted to end an
// error message, or "" if there are none. The gateway's protobuf
// registration warnings, printed at every start, are left out.
func (t *outputTail) suffix() string {
	t.mu.Lock()
	s := string(t.buf)
	t.mu.Unlock()
	var keep []string
	for _, line := range strings.Split(s, "\n") {
		l := strings.TrimSpace(line)
		if l == "" || strings.HasPrefix(l, "WARNING: proto:") || strings.HasPrefix(l, "previously from:") ||
			strings.HasPrefix(l, "currently from:") || strings.HasPrefix(l, "See https://protobuf.dev/") {
			continue
		}
		keep = append(keep, l)
	}
	if len(keep) > 15 {
		keep = keep[len(keep)-15:]
	}
	if len(keep) == 0 {
		return ""
	}
	return "; emulator output:\n" + strings.Join(keep, "\n")
}
