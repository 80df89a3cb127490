package schedule

import (
	"fmt"
	"math"
	"time"
)

// Segment is one piece of a piecewise-linear rate profile: the rate goes
// linearly from From to To (operations per second) over Duration.
//
// A constant rate has From == To, a step profile is several constant
// segments, and a ramp has From != To.
type Segment struct {
	// From is the rate in ops/s at the start of the segment.
	From float64
	// To is the rate in ops/s at the end of the segment.
	To float64
	// Duration is the length of the segment; it must be positive.
	Duration time.Duration
}

// ops returns the integral of the rate over the segment: the expected number
// of operations it contains.
func (s Segment) ops() float64 {
	return (s.From + s.To) / 2 * s.Duration.Seconds()
}

// rate returns the rate at offset t (0 <= t <= Duration) into the segment.
func (s Segment) rate(t time.Duration) float64 {
	return s.From + (s.To-s.From)*(float64(t)/float64(s.Duration))
}

// offsetOf returns the offset into the segment at which the integral of the
// rate reaches x (0 <= x <= ops()). It inverts
// x = From*t + (To-From)/(2*Duration)*t², using the form
// t = 2x / (From + sqrt(From² + 2*slope*x)), which is numerically stable for
// rising, falling and constant rates alike and has no 0/0 unless x == 0.
func (s Segment) offsetOf(x float64) time.Duration {
	if x <= 0 {
		return 0
	}
	slope := (s.To - s.From) / s.Duration.Seconds()
	disc := math.Max(s.From*s.From+2*slope*x, 0) // rounding may dip below 0 at the very end of a falling ramp
	sec := 2 * x / (s.From + math.Sqrt(disc))
	// Rounding can push the result onto or past the segment end; the arrival
	// still belongs to this segment, so keep it inside.
	return min(time.Duration(sec*1e9), s.Duration-1)
}

// validate reports why the segment is unusable, or nil.
func (s Segment) validate() error {
	for _, r := range []float64{s.From, s.To} {
		if math.IsNaN(r) || math.IsInf(r, 0) {
			return fmt.Errorf("rate %v is not a finite number", r)
		}
		if r < 0 {
			return fmt.Errorf("rate %v ops/s is negative", r)
		}
	}
	if s.Duration <= 0 {
		return fmt.Errorf("duration %v is not positive", s.Duration)
	}
	return nil
}

// Profile is a piecewise-linear rate profile: its segments run one after the
// other, starting at offset 0.
type Profile []Segment

// Validate reports the first unusable segment, or an empty profile, wrapped in
// ErrInvalidConfig.
func (p Profile) Validate() error {
	if len(p) == 0 {
		return fmt.Errorf("%w: profile has no segments", ErrInvalidConfig)
	}
	var total time.Duration
	for i, s := range p {
		if err := s.validate(); err != nil {
			return fmt.Errorf("%w: profile segment %d: %w", ErrInvalidConfig, i, err)
		}
		if total+s.Duration < total {
			return fmt.Errorf("%w: profile duration overflows time.Duration at segment %d", ErrInvalidConfig, i)
		}
		total += s.Duration
	}
	return nil
}

// Duration returns the total duration of the profile (the sum of its
// segments).
func (p Profile) Duration() time.Duration {
	var d time.Duration
	for _, s := range p {
		d += s.Duration
	}
	return d
}

// Ops returns the integral of the rate over the whole profile: the expected
// number of operations a single unsharded process sends.
func (p Profile) Ops() float64 {
	var n float64
	for _, s := range p {
		n += s.ops()
	}
	return n
}

// Rate returns the target rate in ops/s at offset t from the start of the
// profile, and 0 outside [0, Duration()). At a boundary between segments the
// later segment's From applies.
func (p Profile) Rate(t time.Duration) float64 {
	if t < 0 {
		return 0
	}
	for _, s := range p {
		if t < s.Duration {
			return s.rate(t)
		}
		t -= s.Duration
	}
	return 0
}

// Scale returns a copy of the profile with every rate multiplied by f, e.g.
// 1/N for the share of one of N shards. Run does not need it (it shards
// internally so that shards interleave exactly); it is for callers that want
// to report or validate a per-shard rate.
func (p Profile) Scale(f float64) Profile {
	out := make(Profile, len(p))
	for i, s := range p {
		out[i] = Segment{From: s.From * f, To: s.To * f, Duration: s.Duration}
	}
	return out
}
