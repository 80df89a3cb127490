package main

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

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
	err := managerCommand(context.Background(), []string{"--runner-image", "x"}, io.Discard, io.Discard)
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
		w.Service.String() != "spanbench-system/spanbench-webhook" || w.Configuration != "spanbench-validating-webhook" {
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
