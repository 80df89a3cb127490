// Package session connects to a Spanner target (real or emulator), prepares
// its database and dataset, and runs a workload on it: the steps `spanbench
// run` and the runner pods share.
package session

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"cloud.google.com/go/spanner"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/spanner/dataset"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/gfe"
	"github.com/spanbench/spanbench/spanner/target"
	"github.com/spanbench/spanbench/spanner/workload"
)

// EmulatorNote is recorded with every result measured on the emulator.
const EmulatorNote = "measured on the Cloud Spanner emulator: read-write transactions (and multi-use read-only ones) were serialised per runner " +
	"and mutations applied at least once (the emulator cannot run concurrent read-write transactions); " +
	"latencies say nothing about Cloud Spanner"

// Version is spanbench's version, set at build time with -ldflags.
var Version = "dev"

// Session is an open connection to one database.
type Session struct {
	// Target is the database.
	Target v1alpha1.TargetSpec
	// Endpoint is where it is.
	Endpoint endpoint.Endpoint
	// Client is the data client.
	Client *spanner.Client
}

// Open connects a data client to the target at ep (see endpoint.For). Its
// RPCs report the GFE's server-timing to the operation that made them
// (package gfe; the workload's operations carry the timer).
func Open(ctx context.Context, ep endpoint.Endpoint, t v1alpha1.TargetSpec) (*Session, error) {
	c, err := ep.NewClient(ctx, DatabasePath(t), spanner.ClientConfig{DisableNativeMetrics: true}, gfe.ClientOptions()...)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s at %s: %w", DatabasePath(t), ep, err)
	}
	return &Session{Target: t, Endpoint: ep, Client: c}, nil
}

// DatabasePath is the database's resource name.
func DatabasePath(t v1alpha1.TargetSpec) string {
	return fmt.Sprintf("projects/%s/instances/%s/databases/%s", t.Project, t.Instance.Name, t.Database)
}

// Close closes the client.
func (s *Session) Close() { s.Client.Close() }

// Emulator reports whether the target is the emulator.
func (s *Session) Emulator() bool { return s.Endpoint.IsEmulator() }

// EnsureDatabase creates the database and the workload's schema (and the
// dataset marker table) where absent, in the schema's dialect, which must
// be the target's; an existing database of another dialect is
// target.ErrDialectMismatch. With createInstance it first creates the
// instance with the target's config, size and edition; otherwise the
// instance must exist and is never modified. ep is where the target is.
// ctx bounds the wait; a reconciler takes the same steps one at a time
// (DatabaseOf, target.StepDatabase).
func EnsureDatabase(ctx context.Context, ep endpoint.Endpoint, t v1alpha1.TargetSpec, schema workload.Schema, createInstance bool) error {
	db, ddl, err := DatabaseOf(ep, t, schema)
	if err != nil {
		return err
	}
	ia, da, err := target.AdminClients(ctx, ep)
	if err != nil {
		return err
	}
	defer ia.Close()
	defer da.Close()
	if createInstance {
		if err := target.EnsureInstance(ctx, target.AdminOf(ia), target.InstanceOf(t)); err != nil {
			return err
		}
	}
	return target.EnsureDatabase(ctx, target.DatabaseAdminOf(da), db, ddl)
}

// DatabaseOf is the target's database at ep and the DDL that makes its
// schema: the workload's, in the schema's dialect, which must be the
// target's, and the dataset marker table.
func DatabaseOf(ep endpoint.Endpoint, t v1alpha1.TargetSpec, schema workload.Schema) (target.Database, []string, error) {
	if d := t.Dialect.OrDefault(); schema.Dialect() != d {
		return target.Database{}, nil, fmt.Errorf("the workload's schema is %s, the target's dialect %s", schema.Dialect(), d)
	}
	ddl := append(schema.DDL(), dataset.MarkerDDL(schema.Dialect()))
	db := target.Database{Project: t.Project, Instance: t.Instance.Name, Database: t.Database, Dialect: schema.Dialect(), Endpoint: ep}
	return db, ddl, nil
}

// Workload binds a workload spec to the session for shard i of n, in the
// target's dialect.
func (s *Session) Workload(spec *v1alpha1.WorkloadSpec, run string, shard, shards int) (*workload.Workload, error) {
	return workload.New(spec, s.Client, workload.Options{Run: run, Shard: shard, Shards: shards, Emulator: s.Emulator(),
		Dialect: s.Target.Dialect})
}

// ResultTarget describes the target in a result, without credentials.
func (s *Session) ResultTarget() result.Target {
	rt := result.Target{Endpoint: "spanner", Project: s.Target.Project, Instance: s.Target.Instance.Name,
		Database: s.Target.Database, InstanceConfig: s.Target.Instance.Config, Dialect: string(s.Target.Dialect.OrDefault())}
	if s.Emulator() {
		rt.Endpoint = "emulator"
	}
	switch {
	case s.Target.Instance.ProcessingUnits != nil:
		rt.ProcessingUnits = *s.Target.Instance.ProcessingUnits
	case s.Target.Instance.Nodes != nil:
		rt.ProcessingUnits = 1000 * *s.Target.Instance.Nodes
	}
	return rt
}

// Notes are the caveats a result on this target carries.
func (s *Session) Notes() []string {
	if s.Emulator() {
		return []string{EmulatorNote}
	}
	return nil
}

// Environment is the software a result depends on.
func Environment(region string) result.Environment {
	return result.Environment{SpanbenchVersion: Version, ClientVersion: ClientVersion(), GoVersion: runtime.Version(), Region: region}
}

// ClientVersion is the version of the Cloud Spanner Go client built in.
func ClientVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "cloud.google.com/go/spanner" {
				return d.Version
			}
		}
	}
	return "unknown"
}
