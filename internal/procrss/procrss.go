// Package procrss measures a child process's own resident set size, for
// the benchmarks that compare processes' memory (the open-loop engine
// against a bare loop, the scale tests' pod farm). A test helper: never
// linked into the binary.
//
// rusage cannot give it: os/exec starts a child that shares its parent's
// memory until it execs, and Linux carries that memory's high-water mark
// into the child's ru_maxrss, so a 30 MiB child of a 70 MiB test process
// reports 70 MiB. The kernel's per-process high-water mark (VmHWM in
// /proc/PID/status) starts again at exec; Watch samples it until the
// process exits.
package procrss

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// Watch samples one process's high-water RSS until stopped or the process
// is gone.
type Watch struct {
	stop chan struct{}
	done sync.WaitGroup
	peak int64
}

// Start samples pid's VmHWM every period (5 ms catches all but the last
// few milliseconds of a process: its exit, which frees memory).
func Start(pid int, every time.Duration) *Watch {
	w := &Watch{stop: make(chan struct{})}
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			hwm, err := read(pid, "VmHWM:")
			if err != nil {
				return // exited: a zombie has no memory fields
			}
			w.peak = max(w.peak, hwm)
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// Peak stops sampling and returns the largest high-water mark seen, in
// bytes (0 if the process was gone before the first sample).
func (w *Watch) Peak() int64 {
	close(w.stop)
	w.done.Wait()
	return w.peak
}

// Current is pid's RSS now, in bytes.
func Current(pid int) (int64, error) {
	return read(pid, "VmRSS:")
}

// read returns the field (in kB in /proc/PID/status) in bytes.
func read(pid int, field string) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	s := bufio.NewScanner(bytes.NewReader(raw))
	for s.Scan() {
		rest, ok := bytes.CutPrefix(s.Bytes(), []byte(field))
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte("kB")))), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/status %s %q: %w", pid, field, rest, err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, field)
}
