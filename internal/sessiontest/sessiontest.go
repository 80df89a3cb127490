// Package sessiontest opens a session on a fresh emulator for tests: a test helper, kept out of product packages so the binary does not link testing.
package sessiontest

import (
	"context"
	"testing"
	"time"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/emulatortest"
	"github.com/spanbench/spanbench/spanner/dataset"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/session"
	"github.com/spanbench/spanbench/spanner/workload"
)

// Start starts a fresh emulator (strong reads slow down the longer
// one runs), creates an instance and GoogleSQL database with the workload's
// schema, loads its dataset and returns an open session, all cleaned up
// with tb. It points the metadata client at a loopback server with
// tb.Setenv (emulatortest.NoMetadataServer), so its tests cannot be
// parallel.
func Start(tb testing.TB, spec *v1alpha1.WorkloadSpec) *session.Session {
	tb.Helper()
	return StartDialect(tb, spec, v1alpha1.DialectGoogleSQL)
}

// StartDialect is Start with a database of dialect d.
func StartDialect(tb testing.TB, spec *v1alpha1.WorkloadSpec, d v1alpha1.Dialect) *session.Session {
	tb.Helper()
	emu := emulatortest.Start(tb)
	emulatortest.NoMetadataServer(tb)
	ep := endpoint.Emulator(emu.Host())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nodes := int32(1)
	t := v1alpha1.TargetSpec{Project: "spanbench-test", Database: "bench", EmulatorHost: emu.Host(), Dialect: d,
		Instance: v1alpha1.InstanceSpec{Name: "test", Config: "regional-asia-northeast1", Nodes: &nodes}}
	schema, err := workload.SchemaFor(spec, d)
	if err != nil {
		tb.Fatal(err)
	}
	if err := session.EnsureDatabase(ctx, ep, t, schema, true); err != nil {
		tb.Fatalf("creating the test database: %v", err)
	}
	s, err := session.Open(ctx, ep, t)
	if err != nil {
		tb.Fatalf("opening the test database: %v", err)
	}
	tb.Cleanup(s.Close)
	if _, err := dataset.Prepare(ctx, s.Client, schema, spec.Dataset, nil); err != nil {
		tb.Fatalf("loading the test dataset: %v", err)
	}
	return s
}
