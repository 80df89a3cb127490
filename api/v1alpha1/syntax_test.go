package v1alpha1

import (
	"math"
	"math/big"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// FuzzDurationSyntaxIsGoGrammar holds DurationSyntax (the pattern of every
// duration rule of the CRD) to time.ParseDuration, which decodes the
// value in the manager and the CLI, and which CEL's duration() calls: a
// text Go reads matches, and a text that matches is read unless its value
// overflows int64 nanoseconds (which CEL's duration() refuses as well).
func FuzzDurationSyntaxIsGoGrammar(f *testing.F) {
	for _, s := range []string{"1m", "+1m", "-1m", "0", "-0", "1.s", ".5m", "1h30m", "1m.5s", ".s", "1μs", "1µs",
		"1mh", "1h-1m", "2562047h", "2562048h", "9223372036854775807ns", "9223372036854775808ns", "999999h999999h999999h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 64 {
			return
		}
		_, err := time.ParseDuration(s)
		matches := durationPattern.MatchString(s)
		switch {
		case err == nil && !matches:
			t.Errorf("Go reads %q but the schema's pattern refuses it", s)
		case err != nil && matches && !overflows(s):
			t.Errorf("the schema's pattern admits %q, which Go cannot read: %v", s, err)
		}
	})
}

var durationPart = regexp.MustCompile(`([0-9]*(?:[.][0-9]*)?)(ns|us|µs|μs|ms|s|m|h)`)

// overflows reports whether a duration text that matches DurationSyntax
// is worth more than int64 nanoseconds (or has a component that is).
func overflows(s string) bool {
	units := map[string]int64{"ns": 1, "us": 1e3, "µs": 1e3, "μs": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9}
	total := new(big.Rat)
	for _, m := range durationPart.FindAllStringSubmatch(strings.TrimLeft(s, "+-"), -1) {
		v, ok := new(big.Rat).SetString(strings.TrimSuffix(m[1], "."))
		if !ok {
			v = new(big.Rat) // ".": no digits, never matches
		}
		intPart, _, _ := strings.Cut(m[1], ".")
		if n, ok := new(big.Int).SetString("0"+intPart, 10); ok && n.Cmp(big.NewInt(math.MaxInt64)) > 0 {
			return true // Go's leadingInt overflows on the digits alone
		}
		total.Add(total, v.Mul(v, new(big.Rat).SetInt64(units[m[2]])))
	}
	return total.Cmp(new(big.Rat).SetInt64(math.MaxInt64)) > 0
}

// TestCRDPatternsAreTheGoPatterns: the markers repeat the syntax.go texts
// (a marker cannot name a constant); the generated CRD must hold each one
// as many times as the fields that use it, so that Go and the API server
// read the same language.
func TestCRDPatternsAreTheGoPatterns(t *testing.T) {
	crd, err := os.ReadFile("../../config/crd/bases/bench.spanbench.io_benchmarkruns.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(crd)
	for name, tc := range map[string]struct {
		syntax string
		min    int
	}{
		// Every duration field's rule, plus the workload rules that
		// compare durations.
		"DurationSyntax":             {DurationSyntax, 15},
		"CPUSyntax":                  {CPUSyntax, 2},
		"BytesSyntax":                {BytesSyntax, 4},
		"LabelKeySyntax":             {LabelKeySyntax, 1},
		"TaintKeySyntax":             {TaintKeySyntax, 1},
		"OptionalDNSSubdomainSyntax": {OptionalDNSSubdomainSyntax, 1},
		"LocationSyntax":             {LocationSyntax, 1},
		"LabelValueSyntax":           {LabelValueSyntax, 4},
		"DNSSubdomainSyntax":         {DNSSubdomainSyntax, 1},
		"SecretKeySyntax":            {SecretKeySyntax, 1},
		"ImageSyntax":                {ImageSyntax, 1},
		"InstanceConfigSyntax":       {InstanceConfigSyntax, 1},
		"EmulatorHostSyntax":         {EmulatorHostSyntax, 1},
		"StepNameSyntax":             {StepNameSyntax, 1},
	} {
		if n := strings.Count(text, tc.syntax); n < tc.min {
			t.Errorf("%s appears %d times in the CRD, want at least %d: a marker and syntax.go differ", name, n, tc.min)
		}
	}
	for _, old := range []string{`(ns|us|µs|ms|s|m|h))+)$`} {
		if strings.Contains(text, old) {
			t.Errorf("the CRD still holds a duration pattern other than DurationSyntax: %s", old)
		}
	}
}
