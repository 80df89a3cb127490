package endpoint

import (
	"strings"
	"testing"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// TestFor: a target that names an emulator is there; any other is at the
// process's Cloud endpoint, never at an emulator.
func TestFor(t *testing.T) {
	cloud := Cloud("eu-spanner.example:443")
	if ep := For(v1alpha1.TargetSpec{EmulatorHost: "127.0.0.1:9010"}, cloud); !ep.IsEmulator() || ep.Address() != "127.0.0.1:9010" {
		t.Errorf("a target naming an emulator: %s", ep)
	}
	if ep := For(v1alpha1.TargetSpec{}, cloud); ep.IsEmulator() || ep.Address() != "eu-spanner.example:443" {
		t.Errorf("a target naming no emulator: %s; want the Cloud endpoint", ep)
	}
	if ep := For(v1alpha1.TargetSpec{}, Endpoint{}); ep.IsEmulator() || ep.Address() != CloudDefault {
		t.Errorf("the zero Endpoint: %s; want Cloud Spanner at %s", ep, CloudDefault)
	}
}

// TestClientOptionsAlwaysNameTheAddress: Cloud clients carry an explicit
// address too, so none falls back to what the environment says; the
// emulator's add plaintext and no authentication.
func TestClientOptionsAlwaysNameTheAddress(t *testing.T) {
	if n := len(Cloud("").ClientOptions()); n != 1 {
		t.Errorf("Cloud Spanner gets %d options; want the explicit endpoint alone", n)
	}
	if n := len(Emulator("127.0.0.1:9010").ClientOptions()); n != 3 {
		t.Errorf("the emulator gets %d options; want endpoint, plaintext and no authentication", n)
	}
}

func TestRefuseInherited(t *testing.T) {
	env := map[string]string{EmulatorHostEnv: "localhost:9010"}
	if err := RefuseInherited(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), EmulatorHostEnv) {
		t.Errorf("an inherited %s: %v; want a refusal naming it", EmulatorHostEnv, err)
	}
	if err := RefuseInherited(func(string) string { return "" }); err != nil {
		t.Errorf("a clean environment: %v", err)
	}
}
