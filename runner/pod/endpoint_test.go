package pod

import (
	"testing"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/runner/protocol"
)

// TestTargetEndpointIsTheManagers: pods dial the emulator their target
// names, or else the Cloud Spanner endpoint the controller told them, not
// Cloud Spanner's global default.
func TestTargetEndpointIsTheManagers(t *testing.T) {
	for name, tc := range map[string]struct {
		ctl      protocol.Control
		emulator bool
		want     string
	}{
		"regional endpoint": {ctl: protocol.Control{SpannerEndpoint: "asia-northeast1-spanner.googleapis.com:443"},
			want: "asia-northeast1-spanner.googleapis.com:443"},
		"default": {want: "spanner.googleapis.com:443"},
		"emulator": {ctl: protocol.Control{Target: v1alpha1.TargetSpec{EmulatorHost: "10.96.0.20:9010"}},
			emulator: true, want: "10.96.0.20:9010"},
	} {
		t.Run(name, func(t *testing.T) {
			ep := TargetEndpoint(&tc.ctl)
			if ep.IsEmulator() != tc.emulator || ep.Address() != tc.want {
				t.Errorf("TargetEndpoint = %s (emulator %v), want %s (emulator %v)", ep.Address(), ep.IsEmulator(), tc.want, tc.emulator)
			}
		})
	}
}
