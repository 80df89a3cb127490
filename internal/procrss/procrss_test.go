package procrss_test

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/spanbench/spanbench/internal/procrss"
)

// childEnv makes the re-executed test binary a child that touches the
// given MiB and exits after a moment.
const childEnv = "PROCRSS_CHILD_MIB"

func TestMain(m *testing.M) {
	if v := os.Getenv(childEnv); v != "" {
		mib, _ := strconv.Atoi(v)
		b := make([]byte, mib<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		time.Sleep(300 * time.Millisecond)
		os.Exit(int(b[0]) - 1)
	}
	os.Exit(m.Run())
}

// ballast is memory this (parent) process holds and has touched while
// it starts the child.
var ballast []byte

// TestPeakIsTheChildsOwnNotItsParents starts a child that touches 64 MiB
// from a parent holding 256 MiB: rusage reports the parent's memory as
// the child's peak, Watch the child's own.
func TestPeakIsTheChildsOwnNotItsParents(t *testing.T) {
	const parentMiB, childMiB = 256, 64
	ballast = make([]byte, parentMiB<<20)
	for i := 0; i < len(ballast); i += 4096 {
		ballast[i] = 1
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+strconv.Itoa(childMiB))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := procrss.Start(cmd.Process.Pid, 5*time.Millisecond)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	peaks := w.Stop()
	peak, anon := float64(peaks.RSS)/(1<<20), float64(peaks.Anon)/(1<<20)
	rusage := float64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) / (1 << 10)
	t.Logf("child touching %d MiB, parent holding %d MiB: Watch %.0f MiB (%.0f anonymous), rusage %.0f MiB", childMiB, parentMiB, peak, anon, rusage)
	if peak < childMiB || peak > childMiB+48 {
		t.Errorf("Watch saw a peak of %.0f MiB; want the child's own %d MiB plus its runtime (under %d MiB)", peak, childMiB, childMiB+48)
	}
	if anon < childMiB || anon > peak {
		t.Errorf("Watch saw %.0f MiB anonymous at most; want the %d MiB the child touched, within its peak %.0f MiB", anon, childMiB, peak)
	}
	if rusage < parentMiB {
		t.Logf("rusage no longer counts the parent's memory (%.0f MiB): the kernel changed, and Watch may be simplified", rusage)
	}
	ballast = nil
}

func TestCurrentAndAGoneProcess(t *testing.T) {
	rss, err := procrss.Current(os.Getpid())
	if err != nil || rss < 1<<20 {
		t.Fatalf("this process's RSS: %d bytes, %v; want at least 1 MiB", rss, err)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if got := procrss.Start(cmd.Process.Pid, time.Millisecond).Stop(); got != (procrss.Peaks{}) {
		t.Errorf("a reaped process's peaks: %+v; want none", got)
	}
	if _, err := procrss.Current(cmd.Process.Pid); err == nil {
		t.Error("a reaped process's RSS was read without an error")
	}
}
