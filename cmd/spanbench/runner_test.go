package main

import (
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunnerTakesItsShardFromThePod: in a runner pod only --run is passed;
// the namespace and index come from the Job's environment.
func TestRunnerTakesItsShardFromThePod(t *testing.T) {
	t.Setenv(envNamespace, "bench")
	t.Setenv(envIndex, "3")
	f, err := parseRunnerFlags([]string{"--run", "r1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	o, err := runnerOptions(f)
	if err != nil {
		t.Fatal(err)
	}
	if o.Run != "r1" || o.Namespace != "bench" || o.Index != 3 || o.MetricsAddr != ":9090" {
		t.Fatalf("options %+v; want run r1, namespace bench, index 3, metrics on :9090", o)
	}
	f, err = parseRunnerFlags([]string{"--run", "r1", "--namespace", "ns", "--index", "0", "--metrics-addr", ""}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o, err = runnerOptions(f); err != nil || o.Namespace != "ns" || o.Index != 0 || o.MetricsAddr != "" {
		t.Fatalf("flags do not override the environment: %+v, %v", o, err)
	}
	if f.load {
		t.Error("a runner without --load would load")
	}
	if f, err = parseRunnerFlags([]string{"--run", "r1", "--load"}, io.Discard); err != nil || !f.load {
		t.Fatalf("--load parsed as %v (err %v); want a loader", f != nil && f.load, err)
	}
}

func TestRunnerRefusesAMissingShard(t *testing.T) {
	t.Setenv(envNamespace, "bench")
	t.Setenv(envIndex, "")
	// Were the refusal gone, the runner would go on to find a cluster:
	// give it none, so that the test fails rather than run against
	// whatever cluster this machine has.
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "no-kubeconfig"))
	code, _, stderr := runCLI(t, "runner", "--run", "r1")
	if code != 1 || !strings.Contains(stderr, "JOB_COMPLETION_INDEX") {
		t.Fatalf("exit %d, stderr %q; want exit 1 naming JOB_COMPLETION_INDEX", code, stderr)
	}
	code, _, stderr = runCLI(t, "runner")
	if code != 1 || !strings.Contains(stderr, "usage: spanbench runner --run NAME") {
		t.Fatalf("exit %d, stderr %q; want exit 1 with the usage", code, stderr)
	}
}
