package capacity_test

import (
	"strings"
	"testing"
	"time"

	"github.com/spanbench/spanbench/result/capacity"
)

var workloadOps = []string{"read", "query", "commit"}

func validParams() capacity.Params {
	return capacity.Params{From: 100, Max: 1600, Resolution: 50}
}

func validSLO() capacity.SLO {
	return capacity.SLO{
		{Kind: capacity.Latency, Percentile: 99, Operations: []string{"read"}, Latency: 20 * time.Millisecond},
		{Kind: capacity.ErrorRatio, Ratio: 0.001},
		{Kind: capacity.Achieved, Ratio: 0.95},
		{Kind: capacity.CPU, Recommended: true},
	}
}

// TestValidateRefuses breaks one field of a valid search at a time and
// checks that exactly that field is refused, with a message that says
// what is accepted.
func TestValidateRefuses(t *testing.T) {
	if errs := capacity.Validate(validParams(), validSLO(), workloadOps); errs != nil {
		t.Fatalf("a valid search is refused: %v", errs)
	}
	for _, tc := range []struct {
		name        string
		params      func(*capacity.Params)
		slo         func(capacity.SLO) capacity.SLO
		field, want string
	}{
		{"from above max", func(p *capacity.Params) { p.From = 2000 }, nil, "from", "at most max"},
		{"from zero", func(p *capacity.Params) { p.From = 0 }, nil, "from", "1 to"},
		{"max above the API's", func(p *capacity.Params) { p.Max = 2e7 }, nil, "max", "1 to"},
		{"resolution zero", func(p *capacity.Params) { p.Resolution = 0 }, nil, "resolution", "positive"},
		{"resolution NaN", func(p *capacity.Params) { p.Resolution = nan() }, nil, "resolution", "positive"},
		{"factor one", func(p *capacity.Params) { p.Factor = 1 }, nil, "factor", "above 1"},
		{"factor huge", func(p *capacity.Params) { p.Factor = 100 }, nil, "factor", "at most"},
		{"unknown rule", func(p *capacity.Params) { p.Confirm = "Twice" }, nil, "confirm", "Majority"},
		{"too many steps", func(p *capacity.Params) { p.From, p.Max, p.Resolution, p.Factor = 1, 1e7, 0.001, 1.1 }, nil, "resolution", "steps"},
		{"unknown operation", nil, func(s capacity.SLO) capacity.SLO { s[0].Operations = []string{"write"}; return s },
			"slo[0].operations[0]", "not an operation of the workload"},
		{"operation twice", nil, func(s capacity.SLO) capacity.SLO { s[0].Operations = []string{"read", "read"}; return s },
			"slo[0].operations[1]", "named twice"},
		{"percentile zero", nil, func(s capacity.SLO) capacity.SLO { s[0].Percentile = 0; return s }, "slo[0].percentile", "above 0"},
		{"percentile above 100", nil, func(s capacity.SLO) capacity.SLO { s[0].Percentile = 100.1; return s }, "slo[0].percentile", "at most 100"},
		{"latency zero", nil, func(s capacity.SLO) capacity.SLO { s[0].Latency = 0; return s }, "slo[0].latency", "positive"},
		{"latency past the histograms", nil, func(s capacity.SLO) capacity.SLO { s[0].Latency = 101 * time.Second; return s }, "slo[0].latency", "at most"},
		{"latency below a microsecond", nil, func(s capacity.SLO) capacity.SLO { s[0].Latency = time.Nanosecond; return s }, "slo[0].latency", "1µs"},
		{"error ratio one", nil, func(s capacity.SLO) capacity.SLO { s[1].Ratio = 1; return s }, "slo[1].ratio", "below 1"},
		{"error ratio negative", nil, func(s capacity.SLO) capacity.SLO { s[1].Ratio = -0.1; return s }, "slo[1].ratio", "at least 0"},
		{"achieved zero", nil, func(s capacity.SLO) capacity.SLO { s[2].Ratio = 0; return s }, "slo[2].ratio", "above 0"},
		{"achieved above one", nil, func(s capacity.SLO) capacity.SLO { s[2].Ratio = 1.5; return s }, "slo[2].ratio", "at most 1"},
		{"achieved with operations", nil, func(s capacity.SLO) capacity.SLO { s[2].Operations = []string{"read"}; return s }, "slo[2].operations", "Latency and ErrorRatio only"},
		{"cpu both", nil, func(s capacity.SLO) capacity.SLO { s[3].Ratio = 0.5; return s }, "slo[3].ratio", "not both"},
		{"cpu zero", nil, func(s capacity.SLO) capacity.SLO { s[3].Recommended = false; return s }, "slo[3].ratio", "above 0"},
		{"cpu twice", nil, func(s capacity.SLO) capacity.SLO {
			return append(s, capacity.Condition{Kind: capacity.CPU, Ratio: 0.5})
		}, "slo[4]", "repeats slo[3]"},
		{"unknown kind", nil, func(s capacity.SLO) capacity.SLO { s[1].Kind = "Throughput"; return s }, "slo[1].kind", "must be Latency"},
		{"too many conditions", nil, func(s capacity.SLO) capacity.SLO {
			for len(s) <= capacity.MaxConditions {
				s = append(s, s[0])
			}
			return s
		}, "slo", "at most"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, slo := validParams(), validSLO()
			if tc.params != nil {
				tc.params(&p)
			}
			if tc.slo != nil {
				slo = tc.slo(slo)
			}
			errs := capacity.Validate(p, slo, workloadOps)
			if len(errs) != 1 || errs[0].Field != tc.field || !strings.Contains(errs[0].Detail, tc.want) {
				t.Fatalf("Validate = %v, want one error on %s saying %q", errs, tc.field, tc.want)
			}
		})
	}
}

func TestCheckWorstCase(t *testing.T) {
	// 100, 200, 400, 800, 1600, then 800..1600 bisected to 50: 1200,
	// 1000 or 1400, ...: 5+4 rates, each up to 3 steps.
	p := validParams()
	if n := p.MaxSteps(); n != 27 {
		t.Fatalf("MaxSteps = %d, want 27", n)
	}
	if err := capacity.CheckWorstCase(p, 4*time.Minute, 2*time.Hour, "stepDuration"); err != nil {
		t.Errorf("27 steps of 4m under a 2h limit refused: %v", err)
	}
	err := capacity.CheckWorstCase(p, 5*time.Minute, 2*time.Hour, "stepDuration")
	if err == nil || err.Field != "stepDuration" || !strings.Contains(err.Detail, "27 steps") {
		t.Errorf("27 steps of 5m over a 2h limit: %v, want a refusal of stepDuration naming 27 steps", err)
	}
	if err := capacity.CheckWorstCase(p, time.Duration(1<<62), 1<<62, "stepDuration"); err == nil {
		t.Error("a worst case past time.Duration's range wrapped and was admitted")
	}
}

func nan() float64 { var zero float64; return zero / zero }
