//go:build !linux

package emulator

import (
	"errors"
	"syscall"
)

// The Cloud Spanner emulator binaries ship for Linux only (elsewhere gcloud
// runs them in a container), so Start fails early instead of half-working.

var errUnsupported = errors.New("running the cloud spanner emulator as a child process is supported on Linux only")

func checkPlatform() error { return errUnsupported }

func sysProcAttr() *syscall.SysProcAttr { return nil }

func signalGroup(pgid int, kill bool) {}

func signalPid(pid int, kill bool) {}

func groupMembers(pgid, exclude int) []int { return nil }
