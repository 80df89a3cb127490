//go:build !runner

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spanbench/spanbench/internal/gcpadminfake"
)

const preflightManifest = `apiVersion: bench.spanbench.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: nightly
spec:
  target:
    project: bench-proj
    instance: {name: bench, mode: Ephemeral, config: regional-asia-northeast1, nodes: 3}
    database: ycsb
  workload:
    type: YCSB
    dataset: {rows: 1000}
    operations:
      - {name: read, type: Read, weight: 1}
    load: {rate: 100}
    duration: 60s
    interval: 2s
`

func preflightFiles(t *testing.T) (manifestPath, keyPath string) {
	dir := t.TempDir()
	manifestPath, keyPath = filepath.Join(dir, "run.yaml"), filepath.Join(dir, "key.json")
	key := `{"type":"service_account","client_email":"bench@bench-proj.iam.gserviceaccount.com","private_key":"-----BEGIN PRIVATE KEY-----\nSECRET\n-----END PRIVATE KEY-----\n"}`
	for p, c := range map[string]string{manifestPath: preflightManifest, keyPath: key} {
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return manifestPath, keyPath
}

func TestPreflightCommandAgainstStandIn(t *testing.T) {
	m, key := preflightFiles(t)
	s := gcpadminfake.Start(t)
	s.AddConfig("projects/bench-proj/instanceConfigs/regional-asia-northeast1")
	getenv := func(k string) string {
		if k == standInEnv {
			return s.Addr()
		}
		return ""
	}
	run := func() (string, error) {
		var out, errb bytes.Buffer
		err := preflightWith(context.Background(), []string{"-f", m, "--credentials", key, "--node-quota", "5"}, &out, &errb, getenv)
		return out.String() + errb.String(), err
	}
	// Everything but the database's creation and Cloud Monitoring.
	s.Grant("projects/bench-proj", "spanner.instanceConfigs.get", "spanner.instances.create", "spanner.instanceOperations.get",
		"spanner.instances.get", "spanner.instances.list", "spanner.instances.delete", "spanner.databases.get",
		"spanner.databases.getDdl", "spanner.databases.updateDdl", "spanner.databaseOperations.get", "spanner.sessions.create",
		"spanner.sessions.delete", "spanner.databases.write", "spanner.databases.beginOrRollbackReadWriteTransaction",
		"spanner.databases.read", "spanner.databases.select", "spanner.databases.beginReadOnlyTransaction")
	out, err := run()
	if err == nil {
		t.Fatalf("two permissions missing, yet the command succeeded:\n%s", out)
	}
	for _, want := range []string{"STAND-IN", "missing spanner.databases.create", "roles/spanner.databaseAdmin",
		"missing monitoring.timeSeries.list", "roles/monitoring.viewer", "bench@bench-proj.iam.gserviceaccount.com"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "SECRET") {
		t.Fatalf("the output holds key material:\n%s", out)
	}
	s.Grant("projects/bench-proj", "spanner.databases.create", "monitoring.timeSeries.list")
	if out, err := run(); err != nil {
		t.Fatalf("all granted, yet: %v\n%s", err, out)
	}
}

func TestPreflightStandInMustBeLoopback(t *testing.T) {
	m, key := preflightFiles(t)
	for _, addr := range []string{"10.0.0.8:443", "spanner.googleapis.com:443", "example.com:1"} {
		getenv := func(k string) string {
			if k == standInEnv {
				return addr
			}
			return ""
		}
		var out bytes.Buffer
		err := preflightWith(context.Background(), []string{"-f", m, "--credentials", key}, &out, &out, getenv)
		if err == nil || !strings.Contains(err.Error(), "not a loopback address") {
			t.Errorf("stand-in hook at %s: %v, want a refusal", addr, err)
		}
	}
}
