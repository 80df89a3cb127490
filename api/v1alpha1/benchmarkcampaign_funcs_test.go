package v1alpha1

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestParsePercent(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		err  bool
	}{
		{"", 0.95, false},
		{"5%", 0.05, false},
		{"99.5%", 0.995, false},
		{"0%", 0, false},
		{"0.05", 0, true},
		{"100%", 0, true},
		{"-5%", 0, true},
	} {
		got, err := ParsePercent(tc.in, 0.95)
		if (err != nil) != tc.err || (!tc.err && got != tc.want) {
			t.Errorf("ParsePercent(%q) = %g, %v; want %g (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestCampaignDefaults(t *testing.T) {
	var s BenchmarkCampaignSpec
	if s.RepetitionCount() != 1 || s.RunOrder() != OrderInterleaved || s.OrderSeed() != 1 || s.Parallelism() != 1 {
		t.Errorf("defaults: repetitions %d, order %s, seed %d, maxParallel %d; want 1, Interleaved, 1, 1",
			s.RepetitionCount(), s.RunOrder(), s.OrderSeed(), s.Parallelism())
	}
	ms := s.Comparison.EffectiveMetrics()
	if len(ms) != 3 || ms[2].Statistic != StatisticThroughput || ms[2].EffectiveDirection() != HigherIsBetter || ms[1].EffectiveDirection() != LowerIsBetter {
		t.Errorf("default metrics %+v; want P50, P99 (lower is better) and Throughput (higher is better)", ms)
	}
}

// TestGoValidatorAcceptsEveryStatisticTheCRDAccepts: the CLI validates a
// campaign with the Go validator, the API server with the CRD's enum; a
// statistic the enum lists and the validator does not (CostPerMillionOps
// was one) makes `spanbench campaign -f` refuse what kubectl apply takes.
// The enum is read from the type's kubebuilder marker.
func TestGoValidatorAcceptsEveryStatisticTheCRDAccepts(t *testing.T) {
	src, err := os.ReadFile("benchmarkcampaign_types.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^// \+kubebuilder:validation:Enum=(.*)\ntype CampaignStatistic string`).FindSubmatch(src)
	if m == nil {
		t.Fatal("no Enum marker on type CampaignStatistic in benchmarkcampaign_types.go")
	}
	values := strings.Split(string(m[1]), ";")
	if len(values) < 10 {
		t.Fatalf("the enum lists %v; want every statistic", values)
	}
	for _, v := range values {
		c := ComparisonSpec{Metrics: []MetricSpec{{Statistic: CampaignStatistic(v)}}}
		if errs := c.validate(field.NewPath("spec", "comparison")); len(errs) != 0 {
			t.Errorf("statistic %s, in the CRD's enum, is refused by the Go validator: %v", v, errs.ToAggregate())
		}
	}
}
