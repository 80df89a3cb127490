package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spanbench/spanbench/internal/pricetest"
)

// demoSample is the demo's manifest: 1 node of regional-asia-northeast1
// for 24 s.
var demoSample = filepath.Join("..", "..", "config", "samples", "demo.yaml")

// TestRunEstimatePrintsTheCostAndStartsNothing: `spanbench run --estimate`
// prints the run's estimate at the override's prices (the test fixture's
// 1.00 USD per node-hour: 1 node × the demo's 24 s), labelled as an
// estimate for the declared configuration since the target is the
// emulator, and exits without starting one; without a price it says
// unknown and why; a bad override is refused naming its entry.
func TestRunEstimatePrintsTheCostAndStartsNothing(t *testing.T) {
	fixture := writeFile(t, "prices.yaml", pricetest.Override)
	noEmulator := []string{"--emulator-path", "/nonexistent/gateway_main", "--fresh-emulator"}
	code, _, stderr := runCLI(t, append([]string{"run", "-f", demoSample, "--estimate", "--price-catalog", fixture}, noEmulator...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"estimated cost: ~USD 0.006667 (regional-asia-northeast1, 1000 PU for 24s; prices: override " + fixture,
		"estimate for regional-asia-northeast1 on Cloud Spanner; the emulator itself costs nothing"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "started a fresh") {
		t.Errorf("--estimate started an emulator:\n%s", stderr)
	}

	code, _, stderr = runCLI(t, append([]string{"run", "-f", demoSample, "--estimate"}, noEmulator...)...)
	if code != 0 || !strings.Contains(stderr, "estimated cost: unknown (no price for regional-asia-northeast1") {
		t.Errorf("exit %d; stderr %q; want the estimate unknown with the reason", code, stderr)
	}

	bad := writeFile(t, "bad.yaml", strings.Replace(pricetest.Override, `nodeHour: "3.00"`, `nodeHour: "-3.00"`, 1))
	code, _, stderr = runCLI(t, append([]string{"run", "-f", demoSample, "--estimate", "--price-catalog", bad}, noEmulator...)...)
	if code != 1 || !strings.Contains(stderr, "prices[2] (asia1, EnterprisePlus): nodeHour") {
		t.Errorf("exit %d; stderr %q; want a refusal naming the entry", code, stderr)
	}
}

// TestRunPrintsTheCostPerMillionOperations: a run on a fresh emulator
// prints its estimate before and, after, what its window cost and the cost
// of a million of its operations at the declared configuration's price.
func TestRunPrintsTheCostPerMillionOperations(t *testing.T) {
	t.Parallel() // against a fresh emulator of its own
	wl := writeFile(t, "tiny.yaml", tinyWorkload)
	fixture := writeFile(t, "prices.yaml", pricetest.Override)
	code, _, stderr := runCLI(t, "run", "-f", wl, "--progress", "never", "--instance-config", "regional-us-central1", "--price-catalog", fixture)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	est, after := strings.Index(stderr, "estimated cost: ~USD"), strings.Index(stderr, "per million operations: USD")
	if est < 0 || after < est || strings.Index(stderr, "started a fresh") < est ||
		!strings.Contains(stderr, "an estimate for regional-us-central1 on Cloud Spanner") {
		t.Errorf("stderr does not show the estimate before the start and the cost per million operations after:\n%s", stderr)
	}
}

// TestCampaignEstimatePrintsAnIterationAndItsMonth: `spanbench campaign
// --estimate` prints one iteration's cost and, for a scheduled campaign,
// 30 days of it, at the override's prices, and runs nothing.
func TestCampaignEstimatePrintsAnIterationAndItsMonth(t *testing.T) {
	fixture := writeFile(t, "prices.yaml", pricetest.Override)
	sample := filepath.Join("..", "..", "config", "samples", "campaign-nightly.yaml")
	code, stdout, stderr := runCLI(t, "campaign", "-f", sample, "--estimate", "--price-catalog", fixture,
		"--emulator-path", "/nonexistent/gateway_main", "--fresh-emulator")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "estimated cost of an iteration: ~USD") || !strings.Contains(stderr, "estimated cost of 30 days at its schedule (") ||
		strings.Contains(stderr, "started a fresh") || stdout != "" {
		t.Errorf("stdout %q, stderr:\n%s\nwant an iteration's and 30 days' estimate, nothing run", stdout, stderr)
	}
}
