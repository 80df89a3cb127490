package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/spanbench/spanbench/spanner/monitoring"
)

// TestManagerServerMetricsFlags: on by default at Cloud Monitoring's
// global endpoint; --server-metrics=false turns the collection off, and
// the runs' condition says why.
func TestManagerServerMetricsFlags(t *testing.T) {
	d, err := parseManagerFlags([]string{"--runner-image", "x"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !d.serverMetrics.enabled || d.serverMetrics.endpoint != monitoring.CloudDefault {
		t.Errorf("default server metrics flags %+v; want enabled at %s", d.serverMetrics, monitoring.CloudDefault)
	}
	f, err := parseManagerFlags([]string{"--runner-image", "x", "--server-metrics=false", "--monitoring-endpoint", "127.0.0.1:1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if f.serverMetrics.endpoint != "127.0.0.1:1" {
		t.Errorf("--monitoring-endpoint 127.0.0.1:1 read as %q", f.serverMetrics.endpoint)
	}
	cfg := f.serverMetrics.config(context.Background())
	if cfg.Client != nil || !strings.Contains(cfg.Off, "--server-metrics=false") {
		t.Errorf("--server-metrics=false gave a client %v, off %q; want none, saying the flag", cfg.Client, cfg.Off)
	}
}
