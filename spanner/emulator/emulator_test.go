//go:build linux

package emulator

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	instance "cloud.google.com/go/spanner/admin/instance/apiv1"
	"cloud.google.com/go/spanner/admin/instance/apiv1/instancepb"

	"github.com/spanbench/spanbench/internal/await"
	"github.com/spanbench/spanbench/internal/syncbuffer"
	"github.com/spanbench/spanbench/spanner/endpoint"
)

// These tests run the real emulator; each starts its own (a long-running
// emulator slows down, and tests must not depend on each other's state).

func TestFindBogusPath(t *testing.T) {
	bogus := filepath.Join(t.TempDir(), "no", "gateway_main")
	_, err := Find(bogus)
	if err == nil {
		t.Fatal("Find of a missing path succeeded")
	}
	for _, want := range []string{bogus, "Options.Path", "apt-get install google-cloud-cli-spanner-emulator",
		"gcloud components install cloud-spanner-emulator", PathEnv} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}

	// Start fails the same way, at once.
	begin := time.Now()
	if _, err := Start(context.Background(), Options{Path: bogus}); err == nil || !strings.Contains(err.Error(), bogus) {
		t.Errorf("Start with a bogus path: %v", err)
	}
	if d := time.Since(begin); d > time.Second {
		t.Errorf("Start with a bogus path took %v", d)
	}
}

func TestFindEnv(t *testing.T) {
	bogus := filepath.Join(t.TempDir(), "gateway_main")
	t.Setenv(PathEnv, bogus)
	_, err := Find("")
	if err == nil || !strings.Contains(err.Error(), bogus) || !strings.Contains(err.Error(), "$"+PathEnv) {
		t.Fatalf("Find with a bogus $%s: %v", PathEnv, err)
	}

	// A file that exists but is not executable is refused too.
	if err := os.WriteFile(bogus, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Find(""); err == nil || !strings.Contains(err.Error(), "not executable") {
		t.Errorf("Find of a non-executable file: %v", err)
	}

	// An explicit path wins over the variable.
	if got, err := Find(DefaultPath); err != nil || got != DefaultPath {
		t.Errorf("Find(DefaultPath) = %q, %v", got, err)
	}
}

func TestStartStop(t *testing.T) {
	var log syncbuffer.Buffer
	begin := time.Now()
	e, err := Start(context.Background(), Options{Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Start took %v", time.Since(begin))
	defer e.Stop() // in case of an early failure; Stop is idempotent

	host, port, err := net.SplitHostPort(e.Host())
	if p, _ := strconv.Atoi(port); err != nil || host != "127.0.0.1" || p <= 0 {
		t.Fatalf("Host() = %q", e.Host())
	}

	gateway := e.cmd.Process.Pid
	var emulatorMain int
	for _, pid := range groupMembers(gateway, gateway) {
		if comm(pid) == "emulator_main" {
			emulatorMain = pid
		}
	}
	if comm(gateway) != "gateway_main" || emulatorMain == 0 {
		t.Fatalf("gateway pid %d (%q), emulator_main pid %d", gateway, comm(gateway), emulatorMain)
	}

	// The admin API answers through the options a caller would use.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	admin, err := instance.NewInstanceAdminClient(ctx, endpoint.Emulator(e.Host()).ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	cfg, err := admin.ListInstanceConfigs(ctx, &instancepb.ListInstanceConfigsRequest{Parent: "projects/p"}).Next()
	if err != nil || !strings.HasSuffix(cfg.GetName(), "/emulator-config") {
		t.Fatalf("ListInstanceConfigs: %v, %v", cfg, err)
	}
	if !strings.Contains(log.String(), "Server address: "+e.Host()) {
		t.Errorf("Options.Log got no emulator output: %q", log.String())
	}

	begin = time.Now()
	if err := e.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	t.Logf("Stop took %v", time.Since(begin))
	for _, pid := range []int{gateway, emulatorMain} {
		if !gone(pid, 2*time.Second) {
			t.Errorf("pid %d (%s) still exists after Stop", pid, comm(pid))
		}
	}
	if c, err := net.DialTimeout("tcp", e.Host(), time.Second); err == nil {
		_ = c.Close()
		t.Errorf("gRPC port %s still accepts connections after Stop", e.Host())
	}
	if err := e.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// A start that times out must leave no process behind, even when the
// processes ignore SIGTERM. A fake gateway that spawns a child and never
// listens makes the timing deterministic.
func TestStartTimeout(t *testing.T) {
	for _, ignoreTerm := range []bool{false, true} {
		t.Run("ignoreTerm="+strconv.FormatBool(ignoreTerm), func(t *testing.T) {
			dir := t.TempDir()
			trap := ""
			if ignoreTerm {
				trap = "trap '' TERM\n"
			}
			writeScript(t, filepath.Join(dir, "gateway_main"),
				"#!/bin/sh\n"+trap+"echo $$ > \"$(dirname \"$0\")/gateway.pid\"\n\"$(dirname \"$0\")/emulator_main\" &\nwait\n")
			writeScript(t, filepath.Join(dir, "emulator_main"),
				"#!/bin/sh\n"+trap+"echo $$ > \"$(dirname \"$0\")/emulator.pid\"\nexec sleep 60\n")

			defer func(g time.Duration) { stopGrace = g }(stopGrace)
			stopGrace = 500 * time.Millisecond
			begin := time.Now()
			_, err := Start(context.Background(), Options{Path: filepath.Join(dir, "gateway_main"), StartTimeout: 500 * time.Millisecond})
			t.Logf("failed Start took %v", time.Since(begin))
			if err == nil || !strings.Contains(err.Error(), "not ready within 500ms") {
				t.Fatalf("Start with a gateway that never listens: %v", err)
			}
			for _, f := range []string{"gateway.pid", "emulator.pid"} {
				b, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil {
					t.Fatalf("the fake emulator did not start: %v", err)
				}
				pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
				if !gone(pid, 2*time.Second) {
					t.Errorf("%s %d still exists after a failed Start", f, pid)
				}
			}
		})
	}
}

func writeScript(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
}

// An emulator that died on its own is still cleaned up, and Stop says so.
func TestStopAfterCrash(t *testing.T) {
	e, err := Start(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	gateway := e.cmd.Process.Pid
	for _, pid := range groupMembers(gateway, gateway) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	select {
	case <-e.done:
	case <-time.After(5 * time.Second):
		t.Fatal("gateway did not exit after its emulator_main was killed")
	}
	err = e.Stop()
	if !errors.Is(err, errExited) || !strings.Contains(err.Error(), "before Stop") {
		t.Errorf("Stop after a crash: %v", err)
	}
	if !gone(gateway, 2*time.Second) {
		t.Errorf("gateway pid %d still exists", gateway)
	}
	// Another package's emulator may be between its gateway's end and
	// its emulator_main's on a loaded host: a leak stays, that passes.
	var left []string
	if ok, _ := await.Until(context.Background(), await.Poll{Within: 5 * time.Second, Every: 50 * time.Millisecond}, await.Cond(func() bool {
		left = leftovers()
		return len(left) == 0
	})); !ok {
		t.Errorf("processes left: %v", left)
	}
}

// comm returns a process's command name, or "" if it is gone.
func comm(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// gone waits up to d for pid to vanish entirely (not even a zombie).
func gone(pid int, d time.Duration) bool {
	ok, _ := await.Until(context.Background(), await.Poll{Within: d, Every: 20 * time.Millisecond}, await.Cond(func() bool {
		_, _, _, alive := procStat(pid)
		return !alive
	}))
	return ok
}

// leftovers lists emulator processes that no running Emulator owns: a
// gateway_main child of this test process, or an emulator_main whose
// gateway is gone. Other packages' tests may run emulators at the same
// time, so processes are not counted by name alone.
func leftovers() []string {
	ents, _ := os.ReadDir("/proc")
	var left []string
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		state, ppid, pgid, ok := procStat(pid)
		if !ok || state == 'Z' {
			continue
		}
		switch comm(pid) {
		case "gateway_main":
			if ppid == os.Getpid() {
				left = append(left, "gateway_main "+ent.Name())
			}
		case "emulator_main":
			if s, _, _, ok := procStat(pgid); !ok || s == 'Z' {
				left = append(left, "orphaned emulator_main "+ent.Name())
			}
		}
	}
	return left
}
