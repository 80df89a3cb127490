package main

import (
	"io"
	"strings"
	"testing"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// TestFreshEmulatorIgnoresTheManifestsEmulator: the samples name make
// demo's emulator, which exists only while the local cluster runs;
// --fresh-emulator starts one of spanbench's own on loopback instead, and
// owns its instance. It goes with neither --endpoint nor --spanner.
func TestFreshEmulatorIgnoresTheManifestsEmulator(t *testing.T) {
	const demo = demoEmulatorHost
	f, err := parseRunFlags([]string{"-f", "sample.yaml", "--fresh-emulator"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	target := v1alpha1.TargetSpec{EmulatorHost: demo}
	stop, started, err := ensureEmulator(t.Context(), f, &target, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if !started || target.EmulatorHost == demo || !strings.HasPrefix(target.EmulatorHost, "127.0.0.1:") {
		t.Fatalf("--fresh-emulator with a manifest naming %s: started=%v, target %q; want a fresh emulator on loopback", demo, started, target.EmulatorHost)
	}
	for _, extra := range []string{"--endpoint=127.0.0.1:9010", "--spanner"} {
		if _, err := parseRunFlags([]string{"-f", "sample.yaml", "--fresh-emulator", extra}, io.Discard); err == nil {
			t.Errorf("run --fresh-emulator %s was accepted", extra)
		}
		if _, err := parseCampaignFlags([]string{"-f", "sample.yaml", "--fresh-emulator", extra}, io.Discard); err == nil {
			t.Errorf("campaign --fresh-emulator %s was accepted", extra)
		}
	}
}
