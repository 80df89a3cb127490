package schedule

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"
)

// offsets drains an iterator for cfg.
func offsets(t *testing.T, cfg Config) []time.Duration {
	t.Helper()
	it, err := NewIterator(cfg)
	if err != nil {
		t.Fatalf("NewIterator(%+v): %v", cfg, err)
	}
	var out []time.Duration
	// Twice the profile's expected arrivals, and some for a Poisson draw
	// of a small one: an iterator past it never ends, and would hang.
	bound := 2*int(cfg.Profile.Ops()) + 1000
	for {
		off, ok := it.Next()
		if !ok {
			break
		}
		if len(out) == bound {
			t.Fatalf("the iterator of %+v gave %d arrivals and does not end; the profile holds about %.0f", cfg.Profile, len(out), cfg.Profile.Ops())
		}
		out = append(out, off)
	}
	if _, ok := it.Next(); ok {
		t.Fatalf("Next returned an arrival after reporting the end of the profile")
	}
	return out
}

func TestIteratorConstantRate(t *testing.T) {
	got := offsets(t, Config{Profile: Profile{{From: 4, To: 4, Duration: time.Second}}})
	want := []time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond, 750 * time.Millisecond}
	if !slices.Equal(got, want) {
		t.Fatalf("4 ops/s for 1s: arrivals at %v, want %v (first at 0, none at the end)", got, want)
	}
}

func TestIteratorLinearRampTimes(t *testing.T) {
	// From 0 to r over T: Λ(t) = r t² / (2T), so arrival k is at sqrt(2kT/r).
	const r, T = 1000.0, 2.0
	got := offsets(t, Config{Profile: Profile{{From: 0, To: r, Duration: 2 * time.Second}}})
	if len(got) != int(r*T/2) {
		t.Fatalf("ramp 0→%v over %vs: %d arrivals, want %v", r, T, len(got), r*T/2)
	}
	for k, off := range got {
		want := math.Sqrt(2 * float64(k) * T / r)
		if d := math.Abs(off.Seconds() - want); d > 1e-6 {
			t.Fatalf("ramp arrival %d at %v, want %.9fs (off by %.3gs)", k, off, want, d)
		}
	}
}

func TestIteratorCountsPerSegment(t *testing.T) {
	tests := []struct {
		name string
		p    Profile
	}{
		{"constant", Profile{{From: 20000, To: 20000, Duration: 3 * time.Second}}},
		{"steps", Profile{
			{From: 100, To: 100, Duration: time.Second},
			{From: 1000, To: 1000, Duration: 1500 * time.Millisecond},
			{From: 333, To: 333, Duration: 700 * time.Millisecond},
		}},
		{"ramp up", Profile{{From: 10, To: 5000, Duration: 3 * time.Second}}},
		{"ramp down to zero", Profile{{From: 3000, To: 0, Duration: 2 * time.Second}}},
		{"ramp with pause", Profile{
			{From: 0, To: 777, Duration: 1300 * time.Millisecond},
			{Duration: time.Second},
			{From: 777, To: 1, Duration: 900 * time.Millisecond},
		}},
		{"fractional rates", Profile{{From: 0.7, To: 0.7, Duration: 10 * time.Second}, {From: 2.5, To: 0.1, Duration: 3 * time.Second}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := offsets(t, Config{Profile: tc.p})
			checkSorted(t, got, tc.p.Duration())
			counts := perSegment(tc.p, got)
			for i, s := range tc.p {
				if d := math.Abs(float64(counts[i]) - s.ops()); d > 1 {
					t.Errorf("segment %d (%+v): %d arrivals, want the integral %.2f within rounding (±1)", i, s, counts[i], s.ops())
				}
			}
			if d := math.Abs(float64(len(got)) - tc.p.Ops()); d > 1 {
				t.Errorf("%d arrivals in total, want Ops() = %.2f within rounding", len(got), tc.p.Ops())
			}
		})
	}
}

// checkSorted fails unless offs is non-decreasing and inside [0, end).
func checkSorted(t *testing.T, offs []time.Duration, end time.Duration) {
	t.Helper()
	for i, off := range offs {
		if off < 0 || off >= end {
			t.Fatalf("arrival %d at %v is outside the profile [0, %v)", i, off, end)
		}
		if i > 0 && off < offs[i-1] {
			t.Fatalf("arrival %d at %v is before arrival %d at %v", i, off, i-1, offs[i-1])
		}
	}
}

// perSegment counts the arrivals that fall in each segment of p.
func perSegment(p Profile, offs []time.Duration) []int {
	counts := make([]int, len(p))
	for _, off := range offs {
		for i, s := range p {
			if off < s.Duration {
				counts[i]++
				break
			}
			off -= s.Duration
		}
	}
	return counts
}

func TestIteratorShardsInterleaveToFullSchedule(t *testing.T) {
	profiles := map[string]Profile{
		"constant": {{From: 1000, To: 1000, Duration: time.Second}},
		"steps":    {{From: 90, To: 90, Duration: time.Second}, {From: 910, To: 910, Duration: time.Second}},
		"ramp":     {{From: 0, To: 1234, Duration: 1500 * time.Millisecond}, {From: 600, To: 20, Duration: time.Second}},
	}
	for name, p := range profiles {
		full := offsets(t, Config{Profile: p})
		for n := 1; n <= 5; n++ {
			var union []time.Duration
			for i := range n {
				shard := offsets(t, Config{Profile: p, Shard: i, Shards: n})
				if want := float64(len(full)) / float64(n); math.Abs(float64(len(shard))-want) > 1 {
					t.Errorf("%s: shard %d/%d has %d arrivals, want 1/%d of %d", name, i, n, len(shard), n, len(full))
				}
				union = append(union, shard...)
			}
			slices.Sort(union)
			if !slices.Equal(union, full) {
				t.Errorf("%s: union of %d uniform shards (%d arrivals) differs from the unsharded schedule (%d arrivals)%s",
					name, n, len(union), len(full), firstDiff(union, full))
			}
		}
	}
}

// firstDiff describes the first index where a and b differ.
func firstDiff(a, b []time.Duration) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("; first difference at index %d: %v vs %v", i, a[i], b[i])
		}
	}
	return ""
}

func TestIteratorShardPhaseOffset(t *testing.T) {
	// 1000 ops/s over 4 shards: each shard sends every 4ms, shard i shifted by i ms.
	p := Profile{{From: 1000, To: 1000, Duration: 20 * time.Millisecond}}
	for i := range 4 {
		got := offsets(t, Config{Profile: p, Shard: i, Shards: 4})
		var want []time.Duration
		for at := time.Duration(i) * time.Millisecond; at < 20*time.Millisecond; at += 4 * time.Millisecond {
			want = append(want, at)
		}
		if !slices.Equal(got, want) {
			t.Errorf("shard %d/4: arrivals %v, want %v", i, got, want)
		}
	}
}

func TestIteratorPoissonRate(t *testing.T) {
	const rate, secs = 1000.0, 100
	p := Profile{{From: rate, To: rate, Duration: secs * time.Second}}
	got := offsets(t, Config{Profile: p, Arrivals: Poisson, Seed: 42})
	checkSorted(t, got, p.Duration())
	// The count is Poisson with mean 1e5 and σ ≈ 316: 1% is about 3σ.
	if d := math.Abs(float64(len(got))/p.Ops() - 1); d > 0.01 {
		t.Errorf("Poisson at %v ops/s for %ds: %d arrivals, %.2f%% from the mean %.0f (tolerance 1%%)", rate, secs, len(got), 100*d, p.Ops())
	}
	// Exponential gaps have a coefficient of variation of 1 (uniform: 0).
	if cv := gapCV(got); math.Abs(cv-1) > 0.03 {
		t.Errorf("Poisson inter-arrival coefficient of variation %.3f, want 1±0.03", cv)
	}
	again := offsets(t, Config{Profile: p, Arrivals: Poisson, Seed: 42})
	if !slices.Equal(got, again) {
		t.Errorf("same seed and shard gave a different schedule")
	}
	other := offsets(t, Config{Profile: p, Arrivals: Poisson, Seed: 42, Shard: 1, Shards: 2})
	if len(other) > 10 && slices.Equal(other[:10], got[:10]) {
		t.Errorf("shard 1 repeats shard 0's arrivals: the shard must be mixed into the seed")
	}
}

// gapCV returns the coefficient of variation of the gaps between arrivals.
func gapCV(offs []time.Duration) float64 {
	var sum, sq float64
	for i := 1; i < len(offs); i++ {
		g := (offs[i] - offs[i-1]).Seconds()
		sum += g
		sq += g * g
	}
	n := float64(len(offs) - 1)
	mean := sum / n
	return math.Sqrt(sq/n-mean*mean) / mean
}

func TestIteratorPoissonFollowsProfileAndShards(t *testing.T) {
	p := Profile{
		{From: 0, To: 4000, Duration: 20 * time.Second},
		{From: 500, To: 500, Duration: 20 * time.Second},
	}
	for _, n := range []int{1, 4} {
		for i := range n {
			got := offsets(t, Config{Profile: p, Arrivals: Poisson, Seed: 7, Shard: i, Shards: n})
			counts := perSegment(p, got)
			for s, seg := range p {
				want := seg.ops() / float64(n)
				// 4σ of a Poisson count, so a correct generator essentially never fails.
				if d := math.Abs(float64(counts[s]) - want); d > 4*math.Sqrt(want) {
					t.Errorf("shard %d/%d segment %d: %d Poisson arrivals, want %.0f ± %.0f", i, n, s, counts[s], want, 4*math.Sqrt(want))
				}
			}
		}
	}
}

func TestNewIteratorRejectsBadSchedule(t *testing.T) {
	_, err := NewIterator(Config{Profile: Profile{{From: 1, To: 1, Duration: time.Second}}, Shard: 1, Shards: 1})
	checkErr(t, err, "Shard 1 is out of range")
}
