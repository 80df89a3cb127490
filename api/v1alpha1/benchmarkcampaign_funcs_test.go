package v1alpha1

import (
	"testing"
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
