package capacity_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/spanbench/spanbench/result/capacity"
)

func TestParseCondition(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want capacity.Condition
	}{
		{"p99 <= 20ms", capacity.Condition{Kind: capacity.Latency, Percentile: 99, Latency: 20 * time.Millisecond}},
		{"p99.9(read, query) <= 50ms", capacity.Condition{Kind: capacity.Latency, Percentile: 99.9, Operations: []string{"read", "query"}, Latency: 50 * time.Millisecond}},
		{"errors <= 0.1%", capacity.Condition{Kind: capacity.ErrorRatio, Ratio: 0.001}},
		{"errors(commit) <= 1%", capacity.Condition{Kind: capacity.ErrorRatio, Operations: []string{"commit"}, Ratio: 0.01}},
		{"achieved >= 95%", capacity.Condition{Kind: capacity.Achieved, Ratio: 0.95}},
		{"cpu <= 65%", capacity.Condition{Kind: capacity.CPU, Ratio: 0.65}},
		{"cpu <= Recommended", capacity.Condition{Kind: capacity.CPU, Recommended: true}},
	} {
		got, err := capacity.ParseCondition(tc.in)
		if err != nil {
			t.Errorf("ParseCondition(%q): %v", tc.in, err)
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("ParseCondition(%q) (-want +got):\n%s", tc.in, d)
		}
		if got.String() != tc.in {
			t.Errorf("ParseCondition(%q).String() = %q, want the input back", tc.in, got.String())
		}
	}
}

// TestParseConditionRefuses: each malformed condition is refused with a
// message that names what is wrong.
func TestParseConditionRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"p99 < 20ms", "want <figure> <= <bound>"},
		{"p99 >= 20ms", "takes <=, not >="},
		{"achieved <= 95%", "takes >=, not <="},
		{"pxx <= 20ms", "percentile"},
		{"p0x1p3 <= 20ms", "percentile"},
		{"pinf <= 20ms", "percentile"},
		{"p99 <= 20", "want a duration"},
		{"errors <= 0.1", "want a percentage"},
		{"errors <= abc%", "want a percentage"},
		{"cpu(read) <= 65%", "takes no operations"},
		{"p99(Read) <= 20ms", "operation name"},
		{"p99(read, ) <= 20ms", "operation name"},
		{"p99(read <= 20ms", "in parentheses"},
		{"p99(read)x <= 20ms", "in parentheses"},
		{"latency <= 20ms", "unknown figure"},
		{strings.Repeat("p", capacity.MaxConditionText+1), "at most"},
	} {
		_, err := capacity.ParseCondition(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseCondition(%q) = %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
	if _, err := capacity.ParseSLO([]string{"p99 <= 20ms", "p99 <"}); err == nil || !strings.HasPrefix(err.Error(), "slo[1]: ") {
		t.Errorf("ParseSLO with a bad second condition = %v, want an error naming slo[1]", err)
	}
}

func TestResolve(t *testing.T) {
	slo := capacity.SLO{{Kind: capacity.Latency, Percentile: 99, Latency: time.Millisecond}, {Kind: capacity.CPU, Recommended: true}}
	for config, want := range map[string]float64{
		"regional-asia-northeast1":                        capacity.RecommendedCPURegional,
		"projects/p/instanceConfigs/regional-us-central1": capacity.RecommendedCPURegional,
		"asia1":         capacity.RecommendedCPUMultiRegion,
		"nam-eur-asia1": capacity.RecommendedCPUMultiRegion,
		"projects/p/instanceConfigs/custom-regional-x-foo": capacity.RecommendedCPUMultiRegion,
	} {
		got := slo.Resolve(config)
		if got[1].Ratio != want {
			t.Errorf("Resolve(%q): cpu bound %v, want %v", config, got[1].Ratio, want)
		}
		if len(got) != 3 || !cmp.Equal(got[2], capacity.Condition{Kind: capacity.Achieved, Ratio: capacity.DefaultAchieved}) {
			t.Errorf("Resolve(%q) = %v, want the default achieved condition added", config, got)
		}
	}
	withAchieved := capacity.SLO{{Kind: capacity.Achieved, Ratio: 0.5}}
	if got := withAchieved.Resolve("asia1"); len(got) != 1 {
		t.Errorf("Resolve of an SLO with its own achieved condition = %v, want it kept alone", got)
	}
	if slo[1].Ratio != 0 {
		t.Error("Resolve changed the SLO it resolved")
	}
}

// FuzzParseCondition: any text is either refused or parsed into a
// condition whose text form parses back to the same text form.
func FuzzParseCondition(f *testing.F) {
	for _, s := range []string{"p99 <= 20ms", "p99.9(read, query) <= 50ms", "errors(commit) <= 1%", "achieved >= 95%",
		"cpu <= Recommended", "cpu <= 65%", "p1e2 <= 1h", "errors <= -1%", "p99(a,b,c) <= 1ns"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := capacity.ParseCondition(s)
		if err != nil {
			return
		}
		text := c.String()
		again, err := capacity.ParseCondition(text)
		if err != nil {
			t.Fatalf("ParseCondition(%q) gave %q, which does not parse: %v", s, text, err)
		}
		if again.String() != text {
			t.Fatalf("ParseCondition(%q): text form %q reads back as %q", s, text, again.String())
		}
		_ = capacity.Validate(capacity.Params{From: 1, Max: 2, Resolution: 1}, capacity.SLO{c}, []string{"read"})
	})
}
