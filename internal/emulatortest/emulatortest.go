// Package emulatortest starts a fresh emulator for one test: a test helper, kept out of product packages so the binary does not link testing.
package emulatortest

import (
	"context"
	"testing"

	"github.com/spanbench/spanbench/spanner/emulator"
)

// Start starts a fresh emulator for one test and stops it in
// tb.Cleanup. It lives outside _test files so that other packages' tests can
// use it. A missing or broken emulator fails the test with Start's message,
// which says how to install it: silently skipping would let a machine
// without the emulator pass every test that needs it.
//
// It does not set SPANNER_EMULATOR_HOST, because tb.Setenv refuses parallel
// tests; a test that builds a data client should call
// tb.Setenv("SPANNER_EMULATOR_HOST", e.Host()) itself (see Emulator.Host).
func Start(tb testing.TB) *emulator.Emulator {
	tb.Helper()
	e, err := emulator.Start(context.Background(), emulator.Options{})
	if err != nil {
		tb.Fatalf("start cloud spanner emulator: %v", err)
	}
	tb.Cleanup(func() {
		if err := e.Stop(); err != nil {
			tb.Errorf("stop cloud spanner emulator: %v", err)
		}
	})
	return e
}
