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
	stop  chan struct{}
	done  sync.WaitGroup
	peaks Peaks
}

// Peaks are a process's largest resident sizes seen, in bytes.
type Peaks struct {
	// RSS is the kernel's high-water mark of the whole resident set.
	RSS int64
	// Anon is the largest anonymous part sampled (heap, stacks): the
	// process's own memory. The rest of RSS is file pages (the binary's
	// code and data), clean, shared and dropped under pressure, and how
	// many of them are mapped depends on the page cache's state (a binary
	// written moments ago maps more) as much as on the code.
	Anon int64
}

// Start samples pid's VmHWM and RssAnon every period (5 ms catches all but the last
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
			anon, aerr := read(pid, "RssAnon:")
			if err != nil || aerr != nil {
				return // exited: a zombie has no memory fields
			}
			w.peaks.RSS, w.peaks.Anon = max(w.peaks.RSS, hwm), max(w.peaks.Anon, anon)
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// Stop stops sampling and returns the peaks seen (zero if the process was
// gone before the first sample).
func (w *Watch) Stop() Peaks {
	close(w.stop)
	w.done.Wait()
	return w.peaks
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
