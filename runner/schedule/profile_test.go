package schedule

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestProfileValidate(t *testing.T) {
	tests := []struct {
		name    string
		p       Profile
		wantErr string // substring; "" means valid
	}{
		{"constant", Profile{{From: 10, To: 10, Duration: time.Second}}, ""},
		{"zero-rate pause", Profile{{Duration: time.Second}}, ""},
		{"empty", nil, "no segments"},
		{"negative From", Profile{{From: -1, To: 5, Duration: time.Second}}, "segment 0: rate -1 ops/s is negative"},
		{"negative To in 2nd", Profile{{From: 1, To: 1, Duration: time.Second}, {From: 1, To: -2, Duration: time.Second}}, "segment 1: rate -2 ops/s is negative"},
		{"NaN", Profile{{From: math.NaN(), Duration: time.Second}}, "not a finite number"},
		{"Inf", Profile{{To: math.Inf(1), Duration: time.Second}}, "not a finite number"},
		{"zero duration", Profile{{From: 1, To: 1}}, "duration 0s is not positive"},
		{"negative duration", Profile{{From: 1, To: 1, Duration: -time.Second}}, "is not positive"},
		{"overflow", Profile{{Duration: math.MaxInt64}, {Duration: 1}}, "overflows"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErr(t, tc.p.Validate(), tc.wantErr)
		})
	}
}

func TestConfigValidate(t *testing.T) {
	ok := Profile{{From: 100, To: 100, Duration: time.Second}}
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"open loop", Config{Profile: ok, MaxInFlight: 1}, ""},
		{"sharded", Config{Profile: ok, MaxInFlight: 1, Shard: 2, Shards: 3}, ""},
		{"closed loop ignores MaxInFlight", Config{Profile: Profile{{Duration: time.Second}}, Concurrency: 4}, ""},
		{"bad profile", Config{Profile: Profile{{From: -3, To: 1, Duration: time.Second}}, MaxInFlight: 1}, "rate -3 ops/s is negative"},
		{"MaxInFlight 0", Config{Profile: ok}, "MaxInFlight 0 must be at least 1"},
		{"Concurrency negative", Config{Profile: ok, MaxInFlight: 1, Concurrency: -1}, "Concurrency -1 is negative"},
		{"unknown arrivals", Config{Profile: ok, MaxInFlight: 1, Arrivals: 7}, "unknown Arrivals 7"},
		{"Shards negative", Config{Profile: ok, MaxInFlight: 1, Shards: -2}, "Shards -2 is negative"},
		{"Shard == Shards", Config{Profile: ok, MaxInFlight: 1, Shard: 3, Shards: 3}, "Shard 3 is out of range [0, 3)"},
		{"Shard negative", Config{Profile: ok, MaxInFlight: 1, Shard: -1, Shards: 3}, "Shard -1 is out of range"},
		{"Granularity negative", Config{Profile: ok, MaxInFlight: 1, Granularity: -time.Microsecond}, "Granularity -1µs is negative"},
		{"Shard 1 unsharded", Config{Profile: ok, MaxInFlight: 1, Shard: 1}, "Shard 1 is out of range [0, 1)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErr(t, tc.cfg.Validate(), tc.wantErr)
		})
	}
}

// checkErr fails unless err is nil when want is "", or wraps
// ErrInvalidConfig and mentions want.
func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("got error %q, want none", err)
	case want == "":
	case err == nil:
		t.Fatalf("got no error, want one mentioning %q", want)
	case !errors.Is(err, ErrInvalidConfig):
		t.Fatalf("error %q does not wrap ErrInvalidConfig", err)
	case !strings.Contains(err.Error(), want):
		t.Fatalf("error %q does not mention %q", err, want)
	}
}

func TestProfileHelpers(t *testing.T) {
	p := Profile{
		{From: 100, To: 100, Duration: 2 * time.Second},
		{From: 0, To: 1000, Duration: time.Second},
		{From: 50, To: 0, Duration: 4 * time.Second},
	}
	if got, want := p.Duration(), 7*time.Second; got != want {
		t.Errorf("Duration() = %v, want %v", got, want)
	}
	if got, want := p.Ops(), 200.0+500+100; got != want {
		t.Errorf("Ops() = %v, want %v (sum of segment integrals)", got, want)
	}
	rates := []struct {
		at   time.Duration
		want float64
	}{
		{-time.Nanosecond, 0},
		{0, 100},
		{1999 * time.Millisecond, 100},
		{2 * time.Second, 0}, // a boundary belongs to the later segment
		{2500 * time.Millisecond, 500},
		{5 * time.Second, 25},
		{7 * time.Second, 0},
	}
	for _, r := range rates {
		if got := p.Rate(r.at); math.Abs(got-r.want) > 1e-9 {
			t.Errorf("Rate(%v) = %v, want %v", r.at, got, r.want)
		}
	}
	s := p.Scale(0.25)
	if s[1].To != 250 || s[2].From != 12.5 || s[0].Duration != 2*time.Second {
		t.Errorf("Scale(0.25) = %+v, want rates quartered and durations kept", s)
	}
	if p[1].To != 1000 {
		t.Errorf("Scale modified its receiver: %+v", p)
	}
}

func TestArrivalsString(t *testing.T) {
	if Uniform.String() != "uniform" || Poisson.String() != "poisson" {
		t.Errorf("Arrivals spell %q and %q", Uniform, Poisson)
	}
	if got := Arrivals(9).String(); got != "Arrivals(9)" {
		t.Errorf("Arrivals(9).String() = %q", got)
	}
}
