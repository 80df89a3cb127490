// Package emulatortest starts a fresh emulator for one test: a test helper, kept out of product packages so the binary does not link testing.
package emulatortest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/spanbench/spanbench/spanner/emulator"
)

// Start starts a fresh emulator for one test and stops it in
// tb.Cleanup. It lives outside _test files so that other packages' tests can
// use it. A missing or broken emulator fails the test with Start's message,
// which says how to install it: silently skipping would let a machine
// without the emulator pass every test that needs it.
// Clients reach it through endpoint.Emulator(e.Host()); nothing is set in
// the process environment.
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

// NoMetadataServer points the GCP metadata client of the test process at a
// loopback server that knows nothing (404 for every key) for the test's
// life, so that the one probe of the GCP environment a Spanner data client
// makes (see package endpoint) is answered on the machine instead of
// leaving it. It answers at once: a closed port would make the metadata
// client retry for seconds. It uses tb.Setenv: its test cannot be
// parallel.
func NoMetadataServer(tb testing.TB) {
	tb.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	tb.Cleanup(srv.Close)
	tb.Setenv("GCE_METADATA_HOST", srv.Listener.Addr().String())
}
