package endpoint

import (
	"errors"
	"strings"
	"testing"
)

func TestEmulatorAllowlistAllowsListedAddressesOnly(t *testing.T) {
	a, err := AllowEmulators("10.245.255.1:9010", "LocalHost:9010", "[::1]:9010")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ep   Endpoint
		want bool
	}{
		{Emulator("10.245.255.1:9010"), true},
		{Emulator("localhost:9010"), true},
		{Emulator("LOCALHOST:9010"), true},
		{Emulator("[::1]:9010"), true},
		{Emulator("10.245.255.1:9020"), false},  // another port of an allowed host
		{Emulator("127.0.0.1:9010"), false},     // another name of an allowed host
		{Emulator("169.254.169.254:80"), false}, // the cloud metadata server
		{Emulator("metadata.google.internal:80"), false},
		{Emulator("kubernetes.default.svc:443"), false}, // the Kubernetes API
		{Emulator("10.245.255.1"), false},               // no port: never matches
		{Emulator("10.245.255.1:9010/x"), false},
		{Cloud(""), true}, // the operator's own Cloud endpoint
		{Cloud("10.0.0.1:443"), true},
	} {
		if got := a.Allows(tc.ep); got != tc.want {
			t.Errorf("Allows(%s) = %t, want %t", tc.ep, got, tc.want)
		}
		if err := a.Check(tc.ep); (err == nil) != tc.want || (err != nil && !errors.Is(err, ErrNotAllowed)) {
			t.Errorf("Check(%s) = %v, want nil=%t wrapping ErrNotAllowed", tc.ep, err, tc.want)
		}
	}
}

func TestEmulatorAllowlistZeroValueRestrictsNothingAndEmptyAllowsNone(t *testing.T) {
	if !(EmulatorAllowlist{}).Allows(Emulator("169.254.169.254:80")) {
		t.Error("the zero allowlist refuses an emulator; it must restrict nothing")
	}
	none, err := AllowEmulators()
	if err != nil {
		t.Fatal(err)
	}
	if none.Allows(Emulator("localhost:9010")) || !none.Allows(Cloud("")) {
		t.Error("an empty allowlist must refuse every emulator and no Cloud endpoint")
	}
	err = none.Check(Emulator("169.254.169.254:80"))
	for _, want := range []string{`"169.254.169.254:80"`, "not allowed by the manager's allowlist", "(none)"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check's error %v does not say %s", err, want)
		}
	}
}

func TestAllowEmulatorsRefusesWhatIsNotHostPort(t *testing.T) {
	for _, bad := range []string{"localhost", "localhost:", ":9010", "localhost:x", "localhost:0", "localhost:70000", "a:b:c"} {
		if _, err := AllowEmulators(bad); err == nil {
			t.Errorf("AllowEmulators(%q) accepted it", bad)
		}
	}
}
