package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"

	"github.com/spanbench/spanbench/cmd/spanbench/manifest"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/session"
)

// The errors a newcomer meets following the README — no emulator where a
// sample points, no cluster, no credentials, a manifest of the other
// kind, a file that is not there — each say their cause and the next
// step. guided adds the step to the error, which stays the cause
// (errors.Is and As see through it); the table test in guidance_test.go
// holds every message.

// demoKubeconfig is where `make demo` writes its cluster's kubeconfig.
const demoKubeconfig = "bin/cluster/kubeconfig"

// guidedError is an error with the next step to take.
type guidedError struct {
	err  error
	next string
}

func (e *guidedError) Error() string { return e.err.Error() + "\n  " + e.next }
func (e *guidedError) Unwrap() error { return e.err }

// guided is err with the next step; nil stays nil.
func guided(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return &guidedError{err: err, next: fmt.Sprintf(format, args...)}
}

// fileGuidance explains a file that is not there (what is a readable
// file's error otherwise); what says what the file should be.
func fileGuidance(err error, path, what string) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	dir, _ := os.Getwd()
	return guided(err, "there is no %s at %s (relative to %s); %s", what, path, dir, map[string]string{
		"manifest":        "the samples are config/samples/*.yaml, from the repository's root",
		"result document": "`spanbench run --out FILE` and `spanbench report --run NAME --out FILE` write one",
	}[what])
}

// manifestGuidance explains why `spanbench cmd -f path` cannot read path.
func manifestGuidance(err error, cmd, path string) error {
	var kind *manifest.KindError
	switch {
	case errors.As(err, &kind) && kind.Kind == "BenchmarkCampaign":
		return guided(err, "it is a campaign: `spanbench campaign -f %s` runs it (or kubectl apply it on a cluster)", path)
	case errors.As(err, &kind) && kind.Kind == "BenchmarkRun":
		return guided(err, "it is a single run: `spanbench run -f %s` runs it (or kubectl apply it on a cluster)", path)
	case errors.As(err, &kind):
		return guided(err, "`spanbench %s -f` reads a %s manifest (config/samples/ has some)", cmd, kind.Want)
	}
	return fileGuidance(err, path, "manifest")
}

// endpointOrigin says where the emulator address of a run came from, by
// resolveTarget's precedence: --endpoint, then $SPANNER_EMULATOR_HOST,
// then the manifest's target.emulatorHost.
func endpointOrigin(f *runFlags) string {
	switch {
	case f.endpoint != "":
		return "--endpoint"
	case os.Getenv(endpoint.EmulatorHostEnv) != "":
		return "$" + endpoint.EmulatorHostEnv + " (which spanbench prefers to the manifest's target.emulatorHost)"
	}
	return "target.emulatorHost of " + f.file
}

// targetGuidance explains a target that did not answer, or clients that
// could not be opened: where the address came from and what to run
// instead. cmd is the command ("run", "campaign"); origin is
// endpointOrigin's, taken before a fresh emulator was started (a fresh
// emulator's failure is spanbench's, and is left as it is).
func targetGuidance(err error, cmd, origin string, f *runFlags, startedEmulator bool) error {
	switch {
	case startedEmulator:
		return err
	case f.spanner && errors.Is(err, session.ErrNoClients):
		return guided(err, "--spanner uses Application Default Credentials: run `gcloud auth application-default login`, or set "+
			"$GOOGLE_APPLICATION_CREDENTIALS to a service account's key file (on GKE, Workload Identity provides them: docs/install.md); "+
			"without --spanner, `spanbench %s -f %s --fresh-emulator` runs on an emulator of its own", cmd, f.file)
	case f.spanner && errors.Is(err, session.ErrNoAnswer):
		return guided(err, "is the network to Cloud Spanner open from here? Without --spanner, `spanbench %s -f %s --fresh-emulator` runs on an emulator of its own", cmd, f.file)
	case !errors.Is(err, session.ErrNoAnswer):
		return err
	}
	next := fmt.Sprintf("That address is %s. The samples name the emulator of `make demo`'s cluster (10.245.255.1:9010), "+
		"which answers only while that cluster is up.\n  Run instead: `spanbench %s -f %s --fresh-emulator` (an emulator of its own, on loopback), "+
		"or start the demo cluster first with `make demo`", origin, cmd, f.file)
	if strings.HasPrefix(origin, "--endpoint") {
		next = fmt.Sprintf("That address is --endpoint's: start an emulator there (hack/emulator.sh), "+
			"or drop --endpoint and run `spanbench %s -f %s --fresh-emulator` (an emulator of its own, on loopback)", cmd, f.file)
	} else if strings.HasPrefix(origin, "$") {
		next = fmt.Sprintf("That address is %s. Unset it, or run `spanbench %s -f %s --fresh-emulator` (an emulator of its own, on loopback)",
			origin, cmd, f.file)
	}
	return &guidedError{err: err, next: next}
}

// clusterGuidance explains why a command that reads the cluster
// (`spanbench report --run`, `--campaign`) could not; what names the
// object, e.g. "BenchmarkRun default/ycsb-read-vs-sql".
func clusterGuidance(err error, what string) error {
	var op *net.OpError
	switch {
	case err == nil:
		return nil
	case strings.Contains(err.Error(), "no configuration has been provided"):
		return guided(err, "reading %s needs a kubeconfig and found none: `make demo`'s cluster writes %s "+
			"(add --kubeconfig %s, or export KUBECONFIG=%s); or report result files: `spanbench report result.json`",
			what, demoKubeconfig, demoKubeconfig, demoKubeconfig)
	case errors.As(err, &op) && op.Op == "dial":
		return guided(err, "the kubeconfig's API server (%s) does not answer: is the cluster up? `make demo` starts the local one "+
			"(its kubeconfig is %s); --kubeconfig names another", op.Addr, demoKubeconfig)
	}
	return err
}
