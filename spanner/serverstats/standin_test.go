package serverstats_test

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/spanner"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/emulatortest"
	"github.com/spanbench/spanbench/internal/statstest"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/session"
)

// standinPrefix names the stand-in tables (internal/statstest): the
// emulator has no SPANNER_SYS.
const standinPrefix = statstest.Prefix

// startStandin starts a fresh emulator with the stand-in tables and
// returns a data client of their database.
func startStandin(t *testing.T, d v1alpha1.Dialect) *spanner.Client {
	t.Helper()
	return startStandinSchema(t, statstest.NewSchema(d))
}

// startStandinSchema is startStandin with the stand-in schema s.
func startStandinSchema(t *testing.T, schema statstest.Schema) *spanner.Client {
	t.Helper()
	d := schema.Dialect()
	emu := emulatortest.Start(t)
	emulatortest.NoMetadataServer(t)
	ep := endpoint.Emulator(emu.Host())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nodes := int32(1)
	tgt := v1alpha1.TargetSpec{Project: "spanbench-test", Database: "stats", EmulatorHost: emu.Host(), Dialect: d,
		Instance: v1alpha1.InstanceSpec{Name: "test", Config: "regional-asia-northeast1", Nodes: &nodes}}
	if err := session.EnsureDatabase(ctx, ep, tgt, schema, true); err != nil {
		t.Fatalf("creating the stand-in statistics tables: %v", err)
	}
	s, err := session.Open(ctx, ep, tgt)
	if err != nil {
		t.Fatalf("opening the stand-in database: %v", err)
	}
	t.Cleanup(s.Close)
	return s.Client
}
