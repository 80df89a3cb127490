package main

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"
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
