package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestTheRunnerBuildHoldsOnlyTheLoadRoles: the runner and loader pods run
// this command built with the tag runner (/spanbench-runner), so that
// their memory holds the load, not the manager: its packages include the
// runner's (pod, shardrun) and none of the manager's, the reports' or the
// campaigns' — a file of those roles without the !runner constraint, or
// a load package importing one, fails here.
func TestTheRunnerBuildHoldsOnlyTheLoadRoles(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", "-tags", "runner", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -tags runner: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	const mod = "github.com/spanbench/spanbench/"
	for _, want := range []string{"runner/pod", "runner/shardrun", "runner/engine"} {
		if !slices.Contains(deps, mod+want) {
			t.Errorf("the runner build lacks %s%s, which runner pods run", mod, want)
		}
	}
	for _, d := range deps {
		for _, banned := range []string{mod + "controllers", mod + "cmd/spanbench/report", mod + "campaign/", "sigs.k8s.io/controller-runtime/pkg/webhook"} {
			if strings.HasPrefix(d, banned) {
				t.Errorf("the runner build links %s: manager, report or campaign code in every runner pod's memory", d)
			}
		}
	}
}

// TestNoBuildLinksPgQueryGo: spanner/ddl reads libpg_query's parse tree
// as JSON (go-pgquery/parser), because pg_query_go's protobuf types
// register their descriptors at init — about 2 MiB of live heap in every
// process, runner pods included, which never parse PostgreSQL. Importing
// the go-pgquery root package or pg_query_go again fails here.
func TestNoBuildLinksPgQueryGo(t *testing.T) {
	for _, tags := range []string{"", "runner"} {
		out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", "-tags", tags, ".").CombinedOutput()
		if err != nil {
			t.Fatalf("go list -tags %q: %v\n%s", tags, err, out)
		}
		for _, d := range strings.Fields(string(out)) {
			if strings.HasPrefix(d, "github.com/pganalyze/pg_query_go") {
				t.Errorf("the build with tags %q links %s, whose protobuf descriptors take about 2 MiB of heap at init in every process", tags, d)
			}
		}
	}
}
