package capacity

import (
	"errors"
	"fmt"
	"math"

	"github.com/spanbench/spanbench/result"
)

// Confirm is how a search treats a failing step before it narrows.
type Confirm string

// The confirmation rules (docs/capacity.md measures them).
const (
	// ConfirmMajority, the default, runs a failing rate again; a second
	// failure confirms it, a pass calls a third step, which decides (best
	// two of three).
	ConfirmMajority Confirm = "Majority"
	// ConfirmRetryWins runs a failing rate again and takes the retry's
	// verdict. It doubles the chance that a rate past capacity passes.
	ConfirmRetryWins Confirm = "RetryWins"
	// ConfirmNone takes every step's verdict as it is: the cheapest, and
	// the one noise ends early.
	ConfirmNone Confirm = "None"
)

// trials is the most steps a rule takes on one rate.
func (c Confirm) trials() int {
	switch c {
	case ConfirmNone:
		return 1
	case ConfirmRetryWins:
		return 2
	}
	return 3
}

// Params are a search's rates and rules.
type Params struct {
	// From is the first step's rate, in operations per second.
	From float64
	// Max is the highest rate the search may offer.
	Max float64
	// Resolution is the width, in operations per second, to which the
	// search narrows the bracket between the highest passing and the
	// lowest failing rate.
	Resolution float64
	// Factor multiplies the rate from one step to the next until a step
	// fails; 0 means DefaultFactor.
	Factor float64
	// Confirm is the confirmation rule; empty means ConfirmMajority.
	Confirm Confirm
}

func (p Params) factor() float64 {
	if p.Factor == 0 {
		return DefaultFactor
	}
	return p.Factor
}

func (p Params) confirm() Confirm {
	if p.Confirm == "" {
		return ConfirmMajority
	}
	return p.Confirm
}

// geometric is the geometric phase's rates: From, From*Factor, ..., up to
// Max, which is the last.
func (p Params) geometric() []float64 {
	rates := []float64{p.From}
	for r := p.From; r < p.Max; {
		r = math.Min(r*p.factor(), p.Max)
		rates = append(rates, r)
	}
	return rates
}

// bisections is the number of midpoints bisection tests on a bracket
// [lo, hi] before it is within the resolution, as Search narrows it.
func (p Params) bisections(lo, hi float64) int {
	n := 0
	for hi-lo > p.Resolution {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi { // no representable midpoint: Search stops too
			break
		}
		// The worst case is the wider half; they differ by rounding only.
		if mid-lo >= hi-mid {
			hi = mid
		} else {
			lo = mid
		}
		n++
	}
	return n
}

// MaxSteps is the most steps a search with these (valid) parameters
// takes, whatever the steps' verdicts: every rate of the geometric phase
// up to the widest bracket, then its bisection, each rate taking the
// confirmation rule's most trials. It is known at admission, so a search
// can be refused there if its worst case exceeds the run's guardrails.
func (p Params) MaxSteps() int {
	g := p.geometric()
	rates := len(g) // every geometric rate passes
	for i := 1; i < len(g); i++ {
		rates = max(rates, i+1+p.bisections(g[i-1], g[i]))
	}
	return rates * p.confirm().trials()
}

// StopReason is why a search ended.
type StopReason string

// The reasons a search ends.
const (
	// Resolved: the highest passing and the lowest failing rate are within
	// the resolution.
	Resolved StopReason = "Resolved"
	// ReachedMax: Max passed; the capacity is at least Max.
	ReachedMax StopReason = "ReachedMax"
	// BelowFrom: From failed; the capacity is below it.
	BelowFrom StopReason = "BelowFrom"
	// StepLimit: MaxSteps were taken. By construction this never
	// happens; it bounds the search should the arithmetic ever disagree.
	StepLimit StopReason = "StepLimit"
	// OutOfTime: the next step would have ended after the run's duration,
	// so the search stopped unfinished (StopOutOfTime); its capacity is a
	// lower bound.
	OutOfTime StopReason = "OutOfTime"
)

// Search is the capacity search as a deterministic state machine: Next
// says the rate of the next step, Record takes its result. Rates go up
// geometrically from From until a rate fails (confirmed by the rule) or
// Max passes, then bisect between the highest passing and the lowest
// failing rate until they are within Resolution. It never offers more
// than Max and never takes more than MaxSteps steps.
type Search struct {
	p        Params
	maxSteps int
	geo      []float64
	geoNext  int     // index into geo of the rate under test, while in the geometric phase
	bisect   bool    // in the bisection phase
	lo, hi   float64 // highest passing and lowest failing rates; 0: none yet
	rate     float64 // rate under test
	trials   []bool  // its steps' verdicts so far
	failedAt []string
	steps    []StepResult
	reason   StopReason
}

// New starts a search; the parameters must be valid (Params.Validate).
func New(p Params) (*Search, error) {
	if errs := p.Validate(); len(errs) > 0 {
		return nil, errs[0]
	}
	s := &Search{p: p, maxSteps: p.MaxSteps(), geo: p.geometric()}
	s.rate = s.geo[0]
	return s, nil
}

// Resume rebuilds a search from the steps it took so far, in order, as
// Record took them: the search is a deterministic function of its
// parameters and its steps' results, so whoever holds them (a restarted
// manager, from the run's status) continues it exactly.
func Resume(p Params, steps []StepResult) (*Search, error) {
	s, err := New(p)
	if err != nil {
		return nil, err
	}
	for i, st := range steps {
		if err := s.Record(st); err != nil {
			return nil, fmt.Errorf("step %d: %w", i+1, err)
		}
	}
	return s, nil
}

// StopOutOfTime ends a search whose next step would not end within the
// run's duration (OutOfTime); a search already done keeps its reason.
func (s *Search) StopOutOfTime() {
	if s.reason == "" {
		s.reason = OutOfTime
	}
}

// MaxSteps is the most steps this search takes (Params.MaxSteps).
func (s *Search) MaxSteps() int { return s.maxSteps }

// Next is the rate of the next step, and false once the search is done.
func (s *Search) Next() (float64, bool) {
	if s.reason != "" {
		return 0, false
	}
	return s.rate, true
}

// Record takes the result of the step Next asked for.
func (s *Search) Record(r StepResult) error {
	if s.reason != "" {
		return errors.New("the search is done: no step is due")
	}
	if r.Offered != s.rate {
		return fmt.Errorf("a step at %g operations per second, but the search asked for %g", r.Offered, s.rate)
	}
	s.steps = append(s.steps, r)
	s.trials = append(s.trials, r.Pass)
	if pass, decided := s.decide(); decided {
		if !pass {
			s.failedAt = r.Failed()
		}
		s.advance(pass)
	}
	if s.reason == "" && len(s.steps) >= s.maxSteps {
		s.reason = StepLimit
	}
	return nil
}

// decide applies the confirmation rule to the current rate's verdicts.
func (s *Search) decide() (pass, decided bool) {
	t := s.trials
	passes := 0
	for _, ok := range t {
		if ok {
			passes++
		}
	}
	switch s.p.confirm() {
	case ConfirmNone:
		return t[0], true
	case ConfirmRetryWins:
		if t[0] || len(t) == 2 {
			return t[len(t)-1], true
		}
	default:
		if t[0] {
			return true, true
		}
		if fails := len(t) - passes; fails >= 2 || passes >= 2 {
			return passes >= 2, true
		}
	}
	return false, false
}

// advance moves to the next rate once the current one is decided.
func (s *Search) advance(pass bool) {
	s.trials = s.trials[:0]
	if pass {
		s.lo = s.rate
	} else {
		s.hi = s.rate
	}
	switch {
	case !pass && s.lo == 0:
		s.reason = BelowFrom
		return
	case !s.bisect && pass:
		if s.geoNext++; s.geoNext == len(s.geo) {
			s.reason = ReachedMax
			return
		}
		s.rate = s.geo[s.geoNext]
		return
	}
	s.bisect = true
	mid := s.lo + (s.hi-s.lo)/2
	if s.hi-s.lo <= s.p.Resolution || mid <= s.lo || mid >= s.hi {
		s.reason = Resolved
		return
	}
	s.rate = mid
}

// Outcome is a search's result so far (result.SearchOutcome: the result
// document records it).
type Outcome = result.SearchOutcome

// Outcome reports the search so far; processingUnits is the instance's
// compute capacity (0 when unknown), for the capacity per node.
func (s *Search) Outcome(processingUnits int32) Outcome {
	o := Outcome{Done: s.reason != "" && s.reason != OutOfTime, Reason: string(s.reason), Capacity: s.lo, FirstFailing: s.hi,
		Steps: append([]StepResult(nil), s.steps...)}
	if s.hi != 0 {
		o.FailedConditions = append([]string(nil), s.failedAt...)
	}
	if processingUnits > 0 {
		o.CapacityPerNode = s.lo / (float64(processingUnits) / 1000)
	}
	return o
}
