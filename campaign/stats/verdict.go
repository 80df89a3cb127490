package stats

import (
	"fmt"
	"math"
)

// Direction says which way a metric gets better.
type Direction int

const (
	// LowerIsBetter is for latencies and error rates.
	LowerIsBetter Direction = iota
	// HigherIsBetter is for throughput.
	HigherIsBetter
)

// Verdict is the one-word answer of a comparison.
type Verdict string

// The verdicts. Improved and Regressed are claims; Neutral is the claim that
// any change is smaller than the minimum effect; Inconclusive claims nothing.
// Invalid claims nothing either, for a reason the reader must act on: a
// result compared failed its checks (an edited or malformed report).
const (
	Improved     Verdict = "Improved"
	Neutral      Verdict = "Neutral"
	Regressed    Verdict = "Regressed"
	Inconclusive Verdict = "Inconclusive"
	Invalid      Verdict = "Invalid"
)

// Options says what a comparison must establish.
type Options struct {
	// Confidence is the confidence level of the interval, in (0, 1);
	// 0 means 0.95.
	Confidence float64
	// MinEffect is the smallest relative change that counts as one, e.g.
	// 0.05 for 5 %; it must be in [0, 1).
	MinEffect float64
	// Direction says which way the metric gets better.
	Direction Direction
}

// DefaultConfidence is the confidence used when Options.Confidence is 0.
const DefaultConfidence = 0.95

func (o Options) withDefaults() (Options, error) {
	if o.Confidence == 0 {
		o.Confidence = DefaultConfidence
	}
	if !(o.Confidence > 0 && o.Confidence < 1) {
		return o, fmt.Errorf("confidence %g is not in (0, 1)", o.Confidence)
	}
	if !(o.MinEffect >= 0 && o.MinEffect < 1) {
		return o, fmt.Errorf("minimum effect %g is not in [0, 1)", o.MinEffect)
	}
	if o.Direction != LowerIsBetter && o.Direction != HigherIsBetter {
		return o, fmt.Errorf("unknown direction %d", o.Direction)
	}
	return o, nil
}

// decide applies the verdict rule to a ratio (variant / baseline) and its
// interval [lo, hi]:
//
//   - no interval at the requested confidence (too few runs or intervals):
//     Inconclusive — nothing is claimed;
//   - the interval lies wholly on the bad side of 1.0 (excludes no-change)
//     AND the point estimate is at least MinEffect worse: Regressed;
//   - the same on the good side: Improved;
//   - the interval lies wholly within [1 - MinEffect, 1 + MinEffect]:
//     Neutral — whatever the change is, it is smaller than MinEffect;
//   - anything else: Inconclusive (significant but tiny with a wide
//     interval, or a large estimate the data cannot confirm).
//
// So a difference below MinEffect, or one whose interval contains 1.0, is
// never called a regression (DESIGN decision 8).
func decide(ratio, lo, hi float64, hasInterval bool, o Options) (Verdict, string) {
	if !hasInterval {
		return Inconclusive, fmt.Sprintf("too few samples for a %g%% interval", 100*o.Confidence)
	}
	up, down := ratio >= 1+o.MinEffect && lo > 1, ratio <= 1-o.MinEffect && hi < 1
	switch {
	case up && o.Direction == LowerIsBetter, down && o.Direction == HigherIsBetter:
		return Regressed, fmt.Sprintf("interval excludes 1 and the change is at least %g%% worse", 100*o.MinEffect)
	case up, down:
		return Improved, fmt.Sprintf("interval excludes 1 and the change is at least %g%% better", 100*o.MinEffect)
	case lo >= 1-o.MinEffect && hi <= 1+o.MinEffect:
		return Neutral, fmt.Sprintf("interval lies within ±%g%%", 100*o.MinEffect)
	}
	return Inconclusive, fmt.Sprintf("interval [%.3f, %.3f] neither excludes 1 with a %g%% effect nor lies within ±%g%%",
		lo, hi, 100*o.MinEffect, 100*o.MinEffect)
}

// checkPositive refuses values a log-scale comparison cannot take.
func checkPositive(what string, v []float64) error {
	if len(v) == 0 {
		return fmt.Errorf("%s has no values", what)
	}
	for i, x := range v {
		if !(x > 0) || math.IsInf(x, 1) {
			return fmt.Errorf("%s value %d is %g: ratios need finite values above zero", what, i, x)
		}
	}
	return nil
}
