//go:build !runner

package main

import (
	"io"
	"strings"
	"testing"
)

// TestManagerPreflightFlags: the preflight is on by default with the node
// quota unchecked; --preflight=false turns it off (no condition, no
// credentials looked for); a node quota out of range is refused naming
// the flag.
func TestManagerPreflightFlags(t *testing.T) {
	d, err := parseManagerFlags([]string{"--runner-image", "x"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !d.preflight.enabled || d.preflight.nodeQuota != 0 {
		t.Errorf("defaults: preflight %v, node quota %d; want on, 0 (not checked)", d.preflight.enabled, d.preflight.nodeQuota)
	}
	f, err := parseManagerFlags([]string{"--runner-image", "x", "--preflight=false", "--preflight-node-quota", "30"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c := f.preflight.config(); c.Enabled || c.Credentials != nil {
		t.Errorf("--preflight=false: config %+v, want the preflight off and no credentials looked for", c)
	}
	q, err := parseManagerFlags([]string{"--runner-image", "x", "--preflight-node-quota", "30"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if q.preflight.nodeQuota != 30 {
		t.Errorf("--preflight-node-quota 30: %d", q.preflight.nodeQuota)
	}
	for _, bad := range []string{"-1", "1000001"} {
		_, err := parseManagerFlags([]string{"--runner-image", "x", "--preflight-node-quota", bad}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "--preflight-node-quota") {
			t.Errorf("--preflight-node-quota %s: %v; want a refusal naming the flag", bad, err)
		}
	}
}
