package main

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spanbench/spanbench/controllers/guardrails"
	"github.com/spanbench/spanbench/spanner/endpoint"
)

func TestManagerFlagsSetTheLifecycleGuardrails(t *testing.T) {
	f, err := parseManagerFlags([]string{"--runner-image", "spanbench:test",
		"--allowed-instance-configs", "regional-asia-northeast1, asia1,", "--max-ephemeral-duration", "2h",
		"--sweep-projects", "bench-a,bench-b", "--sweep-interval", "5m", "--cluster-id", "gke-tokyo-1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.limits.AllowedInstanceConfigs, []string{"regional-asia-northeast1", "asia1"}) || f.limits.MaxEphemeralDuration != 2*time.Hour {
		t.Errorf("limits = %+v", f.limits)
	}
	if !slices.Equal(f.sweepProjects, []string{"bench-a", "bench-b"}) || f.sweepInterval != 5*time.Minute || f.clusterID != "gke-tokyo-1" {
		t.Errorf("sweep projects %v, interval %s, cluster %q", f.sweepProjects, f.sweepInterval, f.clusterID)
	}

	d, err := parseManagerFlags([]string{"--runner-image", "spanbench:test"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if d.limits.AllowedInstanceConfigs != nil || d.limits.MaxEphemeralDuration != 8*time.Hour || d.sweepInterval != 10*time.Minute {
		t.Errorf("defaults: limits %+v, sweep interval %s; want any config, 8h, 10m", d.limits, d.sweepInterval)
	}
}

// TestManagerDatabaseClaimsNamespaceFlag: runs claim their databases in
// the manager's namespace, spanbench-system unless the install says
// another; a value that is no namespace name is refused at start.
func TestManagerDatabaseClaimsNamespaceFlag(t *testing.T) {
	for args, want := range map[string]string{"": "spanbench-system", "--database-claims-namespace=bench-ops": "bench-ops"} {
		f, err := parseManagerFlags(append([]string{"--runner-image", "x"}, strings.Fields(args)...), io.Discard)
		if err != nil || f.claimsNamespace != want {
			t.Errorf("%q: claims namespace %v, %v; want %q", args, f, err, want)
		}
	}
	for _, bad := range []string{"", "Bench_Ops"} {
		if _, err := parseManagerFlags([]string{"--runner-image", "x", "--database-claims-namespace=" + bad}, io.Discard); err == nil ||
			!strings.Contains(err.Error(), "--database-claims-namespace") {
			t.Errorf("--database-claims-namespace=%q: %v; want a refusal naming the flag", bad, err)
		}
	}
}

func TestManagerRefusesAClusterIDThatIsNoSpannerLabel(t *testing.T) {
	_, err := parseManagerFlags([]string{"--runner-image", "x", "--cluster-id", "GKE.Tokyo"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--cluster-id") {
		t.Errorf("--cluster-id GKE.Tokyo: %v; want a refusal naming the flag", err)
	}
}

// TestManagerRefusesAnInheritedEmulatorHost: under SPANNER_EMULATOR_HOST
// the Spanner client strips the credentials of every Cloud Spanner call,
// so the manager, which serves both kinds of run, does not start.
func TestManagerRefusesAnInheritedEmulatorHost(t *testing.T) {
	t.Setenv("SPANNER_EMULATOR_HOST", "127.0.0.1:9010")
	// Were the refusal gone, the manager would go on to find a cluster:
	// give it none, and a bound, so that the test fails rather than start
	// a manager against whatever cluster this machine has.
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "no-kubeconfig"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := managerCommand(ctx, []string{"--runner-image", "x"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "SPANNER_EMULATOR_HOST") {
		t.Errorf("manager under SPANNER_EMULATOR_HOST: %v; want a refusal naming the variable", err)
	}
}

// TestManagerSpannerEndpointFlag: --spanner-endpoint names the Cloud
// Spanner API the manager calls; without it, the global endpoint.
func TestManagerSpannerEndpointFlag(t *testing.T) {
	f, err := parseManagerFlags([]string{"--runner-image", "x", "--spanner-endpoint", "asia-northeast1-spanner.googleapis.com:443"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := endpoint.Cloud(f.spannerEndpoint).Address(); got != "asia-northeast1-spanner.googleapis.com:443" {
		t.Errorf("--spanner-endpoint: the manager calls %q", got)
	}
	d, err := parseManagerFlags([]string{"--runner-image", "x"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := endpoint.Cloud(d.spannerEndpoint).Address(); got != endpoint.CloudDefault {
		t.Errorf("no --spanner-endpoint: the manager calls %q; want %q", got, endpoint.CloudDefault)
	}
}

// TestManagerEmulatorAllowlistFlag: by default the manager dials only an
// emulator on its own loopback; --allowed-emulator-hosts names others, an
// empty value none, and a malformed entry stops the manager.
func TestManagerEmulatorAllowlistFlag(t *testing.T) {
	d, err := parseManagerFlags([]string{"--runner-image", "x"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]bool{"localhost:9010": true, "127.0.0.1:9010": true,
		"10.245.255.1:9010": false, "169.254.169.254:80": false, "kubernetes.default.svc:443": false} {
		if got := d.emulators.Allows(endpoint.Emulator(host)); got != want {
			t.Errorf("default allowlist (%s) allows %s: %t, want %t", d.emulators, host, got, want)
		}
	}
	f, err := parseManagerFlags([]string{"--runner-image", "x", "--allowed-emulator-hosts", "10.245.255.1:9010, emulator.bench.svc:9010"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !f.emulators.Allows(endpoint.Emulator("emulator.bench.svc:9010")) || f.emulators.Allows(endpoint.Emulator("localhost:9010")) {
		t.Errorf("--allowed-emulator-hosts replaces the default: got %s", f.emulators)
	}
	none, err := parseManagerFlags([]string{"--runner-image", "x", "--allowed-emulator-hosts="}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if none.emulators.Allows(endpoint.Emulator("localhost:9010")) {
		t.Errorf("--allowed-emulator-hosts= allows localhost:9010")
	}
	if _, err := parseManagerFlags([]string{"--runner-image", "x", "--allowed-emulator-hosts", "emulator"}, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "--allowed-emulator-hosts") {
		t.Errorf("a malformed entry: %v; want a refusal naming the flag", err)
	}
}

// TestManagerWebhookFlags: the webhook is on by default with the names
// config/default installs; --webhook=false turns it off; a Secret that is
// not NAMESPACE/NAME is refused naming the flag.
func TestManagerWebhookFlags(t *testing.T) {
	d, err := parseManagerFlags([]string{"--runner-image", "x"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	w := d.webhook
	if !w.enabled || w.Port != 9443 || w.Secret.String() != "spanbench-system/spanbench-webhook-cert" ||
		w.Service.String() != "spanbench-system/spanbench-webhook" || w.Configuration != "spanbench-validating-webhook" ||
		w.MutatingConfiguration != "spanbench-mutating-webhook" {
		t.Errorf("webhook defaults %+v, want on at 9443 with config/webhook's names", w)
	}
	if got := w.DNSNames(); !slices.Equal(got, []string{"spanbench-webhook.spanbench-system.svc", "spanbench-webhook.spanbench-system.svc.cluster.local"}) {
		t.Errorf("serving certificate names %v", got)
	}
	off, err := parseManagerFlags([]string{"--runner-image", "x", "--webhook=false", "--webhook-secret", "bench/hook-cert"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if off.webhook.enabled || off.webhook.Secret.String() != "bench/hook-cert" {
		t.Errorf("--webhook=false --webhook-secret bench/hook-cert: %+v", off.webhook)
	}
	_, err = parseManagerFlags([]string{"--runner-image", "x", "--webhook-secret", "hook-cert"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "webhook-secret") {
		t.Errorf("--webhook-secret hook-cert: %v; want a refusal naming the flag", err)
	}
}

// TestManagerAllowlistFlags: the dataset caps, project, runner-image,
// toleration and node-selector allowlists, their defaults (which the
// samples and `make demo` pass), and refusals of malformed values.
func TestManagerAllowlistFlags(t *testing.T) {
	d, err := parseManagerFlags([]string{"--runner-image", "localhost/spanbench/spanbench:dev"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	l := d.limits
	if l.MaxDatasetRows != 1_000_000_000 || l.MaxDatasetBytes != 1<<40 || l.AllowedProjects != nil || l.AllowEveryTaint {
		t.Errorf("defaults: %+v; want 10^9 rows, 1Ti, any project, no keyless toleration", l)
	}
	if !slices.Equal(l.RunnerImages, guardrails.ImageAllowlist{"localhost/spanbench/spanbench:dev"}) ||
		!slices.Equal(l.TolerationKeys, guardrails.KeyAllowlist{"*"}) || !slices.Equal(l.NodeSelectorKeys, guardrails.KeyAllowlist{"*"}) {
		t.Errorf("default allowlists: images %v, tolerations %v, node selectors %v; want the runner image, *, *", l.RunnerImages, l.TolerationKeys, l.NodeSelectorKeys)
	}

	f, err := parseManagerFlags([]string{"--runner-image", "spanbench:dev", "--max-dataset-rows", "5000000", "--max-dataset-bytes", "500Gi",
		"--allowed-projects", "bench-a, bench-b", "--allowed-runner-images", "registry.example/bench/,spanbench:debug",
		"--allowed-toleration-keys", "dedicated,cloud.google.com/", "--allow-every-taint", "--allowed-node-selector-keys="}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	l = f.limits
	if l.MaxDatasetRows != 5_000_000 || l.MaxDatasetBytes != 500<<30 || !slices.Equal(l.AllowedProjects, []string{"bench-a", "bench-b"}) || !l.AllowEveryTaint {
		t.Errorf("set: %+v", l)
	}
	if !l.RunnerImages.Allows("spanbench:dev") || !l.RunnerImages.Allows("registry.example/bench/x:1") || l.RunnerImages.Allows("spanbench:other") {
		t.Errorf("--allowed-runner-images: %v; want the runner image and the entries", l.RunnerImages)
	}
	if !l.TolerationKeys.Allows("cloud.google.com/gke-spot") || l.TolerationKeys.Allows("gpu") {
		t.Errorf("--allowed-toleration-keys: %v", l.TolerationKeys)
	}
	if l.NodeSelectorKeys == nil || l.NodeSelectorKeys.Allows("disk") {
		t.Errorf("--allowed-node-selector-keys= : %#v; want an empty list that allows no key", l.NodeSelectorKeys)
	}
	if z, err := parseManagerFlags([]string{"--runner-image", "x", "--max-dataset-bytes", "0", "--max-dataset-rows", "0"}, io.Discard); err != nil ||
		z.limits.MaxDatasetBytes != 0 || z.limits.MaxDatasetRows != 0 {
		t.Errorf("0 turns the dataset caps off: %v, %+v", err, z)
	}

	for flag, value := range map[string]string{"--max-dataset-bytes": "1.5", "--max-dataset-rows": "many",
		"--allowed-instance-configs": "projects/other/instanceConfigs/asia1"} {
		if _, err := parseManagerFlags([]string{"--runner-image", "x", flag, value}, io.Discard); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(flag, "--")) {
			t.Errorf("%s %s: %v; want a refusal naming the flag", flag, value, err)
		}
	}
}

// TestManagerCostFlags: the caps in money are off by default (the demo's
// runs, unpriced, must not be refused), parse an amount with an optional
// currency, and refuse one that is not.
func TestManagerCostFlags(t *testing.T) {
	d, err := parseManagerFlags([]string{"--runner-image", "x"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if d.costLimits != (guardrails.CostLimits{}) || d.priceOverride.Name != "" {
		t.Errorf("defaults: %+v, override %v; want no cap and the embedded catalog", d.costLimits, d.priceOverride)
	}
	f, err := parseManagerFlags([]string{"--runner-image", "x", "--max-run-cost", "USD 25", "--max-iteration-cost", "100.5",
		"--max-monthly-cost", "3000", "--price-catalog-configmap", "spanbench-system/prices"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if f.costLimits.MaxRunCost.String() != "USD 25.00" || f.costLimits.MaxIterationCost.String() != "100.50" ||
		f.costLimits.MaxMonthlyCost.String() != "3000.00" || f.priceOverride.String() != "spanbench-system/prices" {
		t.Errorf("cost flags: %+v, override %v", f.costLimits, f.priceOverride)
	}
	for _, bad := range [][]string{{"--max-run-cost", "25$"}, {"--max-run-cost", "0"}, {"--max-iteration-cost", "usd 5"}, {"--price-catalog-configmap", "prices"}} {
		if _, err := parseManagerFlags(append([]string{"--runner-image", "x"}, bad...), io.Discard); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(bad[0], "-")) {
			t.Errorf("%v: %v; want a refusal naming the flag", bad, err)
		}
	}
}
