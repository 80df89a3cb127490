package schedule

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
	"unsafe"

	"github.com/spanbench/spanbench/runner/clock"
)

// clockMonotonic is CLOCK_MONOTONIC, the clock behind the monotonic reading
// of time.Now, so timerfd waits agree with the clock Run compares against.
const clockMonotonic = 1

// itimerspec mirrors struct itimerspec for timerfd_settime(2).
type itimerspec struct {
	interval, value syscall.Timespec
}

// fdWaiter sleeps by waiting for a non-blocking timerfd to become readable,
// which parks the goroutine in the Go netpoller like any file read. Two
// things can end the wait, whichever comes first:
//   - the timerfd expiring: the kernel's high-resolution timer wakes a netpoller
//     blocked in epoll_wait at once, which covers an idle process, where Go
//     timers would round the wait up to a whole millisecond;
//   - the file's read deadline, set to the same instant: deadlines are Go
//     timers, which the scheduler checks every time it switches goroutines,
//     which covers a busy process, where the netpoller is only polled when
//     the run queue drains.
//
// The expiration count is never read: a wait ends when the clock has
// reached its instant, which the netpoller's readiness only prompts it to
// check. Reading it would cost two read(2) calls per wake-up (one finding
// nothing before parking, one after), a good part of the waiter's system
// time at a few thousand wake-ups a second. Re-arming the timer clears the
// count, and each expiration is a fresh edge for the edge-triggered
// netpoller.
type fdWaiter struct {
	ctx  context.Context
	clk  clock.Clock
	fd   uintptr // raw fd; f.Fd() would switch the file to blocking mode
	f    *os.File
	rc   syscall.RawConn
	spec itimerspec // kept here so that arming the timer does not allocate
	due  time.Time  // the instant the current wait ends at
	// reached is rc.Read's callback, made once so that a wait does not
	// allocate a closure.
	reached func(fd uintptr) bool
	stop    func() bool
}

// newPreciseWaiter returns a timerfd waiter, or nil if the kernel refuses to
// create one (e.g. under a seccomp profile), in which case the caller falls
// back to Go timers.
func newPreciseWaiter(ctx context.Context, clk clock.Clock) waiter {
	fd, _, errno := syscall.RawSyscall(syscall.SYS_TIMERFD_CREATE, clockMonotonic,
		uintptr(syscall.O_NONBLOCK|syscall.O_CLOEXEC), 0)
	if errno != 0 {
		return nil
	}
	w := &fdWaiter{ctx: ctx, clk: clk, fd: fd, f: os.NewFile(fd, "schedule-timerfd")}
	rc, err := w.f.SyscallConn()
	if err != nil {
		_ = w.f.Close()
		return nil
	}
	w.rc = rc
	w.reached = func(uintptr) bool { return !w.clk.Now().Before(w.due) }
	// A read deadline in the past unblocks a pending Read and fails later
	// ones, which is how cancellation reaches a goroutine parked on the fd.
	w.stop = context.AfterFunc(ctx, func() { _ = w.f.SetReadDeadline(time.Unix(1, 0)) })
	return w
}

func (w *fdWaiter) waitUntil(t time.Time) (time.Time, error) {
	for {
		now := w.clk.Now()
		if !now.Before(t) {
			return now, nil
		}
		if err := w.sleep(t, t.Sub(now)); err != nil {
			return now, err
		}
	}
}

// sleep arms the timerfd for d (> 0) and the read deadline for t, then
// waits until either fires and the clock has reached t. It returns the
// context's error if it ends first.
func (w *fdWaiter) sleep(t time.Time, d time.Duration) error {
	// Arming also clears an expiration left from a wait that the deadline
	// ended, so such a stale expiration cannot end this wait early.
	w.spec.value = syscall.NsecToTimespec(int64(d)) // d > 0: armed, not disarmed
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_TIMERFD_SETTIME, w.fd, 0,
		uintptr(unsafe.Pointer(&w.spec)), 0, 0, 0); errno != 0 {
		return os.NewSyscallError("timerfd_settime", errno)
	}
	if err := w.f.SetReadDeadline(t); err != nil {
		return err
	}
	// Checked after setting the deadline: had cancellation already set its
	// past deadline, ours just replaced it, but then Err is already non-nil.
	if err := w.ctx.Err(); err != nil {
		return err
	}
	w.due = t
	err := w.rc.Read(w.reached)
	if cerr := w.ctx.Err(); cerr != nil {
		return cerr
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return nil
	}
	return err
}

func (w *fdWaiter) close() {
	w.stop()
	_ = w.f.Close()
}
