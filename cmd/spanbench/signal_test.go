package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spanbench/spanbench/internal/await"
	"github.com/spanbench/spanbench/internal/syncbuffer"
	"github.com/spanbench/spanbench/spanner/endpoint"
)

// asMainEnv makes the test binary run main() with the arguments after
// "--": the tests below send real signals to a real process.
const asMainEnv = "SPANBENCH_TEST_AS_MAIN"

// hangCommand is a command that ignores its context, as a stage that
// cannot be interrupted (a CPU-bound decode) would. Only the test binary
// has it. It says hangNotice when it starts to block, which is after main
// installed its signal handler.
var hangCommand = command{"test-hang", "block without looking at the context", func(_ context.Context, _ []string, _ io.Writer, stderr io.Writer) error {
	fmt.Fprintln(stderr, hangNotice)
	select {}
}}

// hangNotice is what hangCommand says when it blocks.
const hangNotice = "test-hang: blocking"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		commands = append(commands, hangCommand)
		for i, a := range os.Args {
			if a == "--" {
				os.Args = append([]string{"spanbench"}, os.Args[i+1:]...)
				break
			}
		}
		main()
		return
	}
	// The commands under test refuse or follow an inherited
	// SPANNER_EMULATOR_HOST (endpoint.RefuseInherited, --fresh-emulator):
	// clear the developer's for the whole binary, once, so that the tests
	// that run a command against their own fresh emulator can run in
	// parallel (t.Setenv cannot). The tests that set it (the refusal's)
	// are sequential, and sequential tests end before parallel ones start.
	if err := os.Unsetenv(endpoint.EmulatorHostEnv); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// process is a spanbench process; done closes when it ended, with err.
type process struct {
	cmd    *exec.Cmd
	stderr syncbuffer.Buffer
	done   chan struct{}
	err    error
}

// exited waits up to d for the process to end.
func (p *process) exited(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// spanbenchProcess starts spanbench (this test binary as main) with args;
// the test's end kills it if it still runs.
func spanbenchProcess(t *testing.T, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(os.Args[0], append([]string{"--"}, args...)...), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), asMainEnv+"=1", "SPANNER_EMULATOR_HOST=")
	p.cmd.Stderr = &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// TestRunStopsCleanlyOnSIGTERM: spanbench run, waiting on an endpoint that
// accepts connections and never answers, gets SIGTERM and ends within
// seconds, saying it was interrupted, exit code 1.
func TestRunStopsCleanlyOnSIGTERM(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	connected := make(chan struct{})
	go func() { // accept and hold every connection: calls hang
		for i := 0; ; i++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
			if i == 0 {
				close(connected)
			}
		}
	}()
	wl := filepath.Join(t.TempDir(), "tiny.yaml")
	if err := os.WriteFile(wl, []byte(tinyWorkload), 0o644); err != nil {
		t.Fatal(err)
	}
	p := spanbenchProcess(t, "run", "-f", wl, "--endpoint", ln.Addr().String(), "--progress", "never")
	select { // into the probe of the endpoint, which main reaches after installing its signal handler
	case <-connected:
	case <-p.done:
		t.Fatalf("spanbench run ended (%v) before it connected to the endpoint:\n%s", p.err, &p.stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("spanbench run did not connect to the endpoint within 30 s:\n%s", &p.stderr)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !p.exited(10 * time.Second) {
		t.Fatalf("spanbench run still runs 10 s after SIGTERM:\n%s", &p.stderr)
	}
	var exit *exec.ExitError
	if !errors.As(p.err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("spanbench run ended with %v after SIGTERM, want exit code 1:\n%s", p.err, &p.stderr)
	}
	if !strings.Contains(p.stderr.String(), "terminated signal received; stopping") {
		t.Errorf("stderr does not say that the signal stopped the run:\n%s", &p.stderr)
	}
}

// TestSecondSignalQuitsAtOnce: a command that does not stop on the first
// SIGTERM (it ignores its context) ends at once on the second, by the
// signal, instead of having it swallowed.
func TestSecondSignalQuitsAtOnce(t *testing.T) {
	p := spanbenchProcess(t, hangCommand.name)
	await.Eventually(t, await.Poll{Within: 30 * time.Second, Every: 10 * time.Millisecond}, "the hanging command to block (after main installed its signal handler)",
		func() (bool, string) {
			return strings.Contains(p.stderr.String(), hangNotice), "stderr: " + p.stderr.String()
		})
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The notice is written once the first signal has been taken and the
	// default effect restored: a second signal sent before that (a fixed
	// wait on a loaded host) would be swallowed like any after the first.
	await.Eventually(t, await.Poll{Within: 30 * time.Second, Every: 10 * time.Millisecond}, "the notice of the first SIGTERM",
		func() (bool, string) {
			return strings.Contains(p.stderr.String(), "send it again to quit at once"), "stderr: " + p.stderr.String()
		})
	if p.exited(time.Second) {
		t.Fatalf("the hanging command ended on the first SIGTERM (%v); the test needs it to ignore it:\n%s", p.err, &p.stderr)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !p.exited(5 * time.Second) {
		t.Fatalf("spanbench ignored a second SIGTERM:\n%s", &p.stderr)
	}
	var exit *exec.ExitError
	if !errors.As(p.err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Fatalf("spanbench ended with %v after the second SIGTERM, want killed by it:\n%s", p.err, &p.stderr)
	}
}
