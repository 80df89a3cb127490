package capacity

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// FieldError is a refused field of a search: Field is its path relative to
// the search (such as "slo[1].operations[0]" or "resolution"), so that the
// admission webhook can prefix the search's own path and word it as the
// API server does (field.Invalid), and the CLI can print it as is.
type FieldError struct {
	// Field is the path of the refused field, relative to the search.
	Field string
	// Value is the refused value as the user wrote it.
	Value string
	// Detail says what is wrong and what is accepted.
	Detail string
}

// Error is "field: detail (value)".
func (e *FieldError) Error() string {
	return fmt.Sprintf("%s: %s (got %s)", e.Field, e.Detail, e.Value)
}

// Validate refuses a search that cannot run, naming each field at fault:
// the parameters (Params.Validate) and every condition of the SLO, whose
// operations must be among the workload's operations. It returns nil when
// all is well.
func Validate(p Params, slo SLO, operations []string) []*FieldError {
	errs := p.Validate()
	if len(slo) > MaxConditions {
		errs = append(errs, &FieldError{Field: "slo", Value: strconv.Itoa(len(slo)) + " conditions",
			Detail: fmt.Sprintf("an SLO has at most %d conditions", MaxConditions)})
	}
	kinds := map[Kind]int{}
	for i, c := range slo {
		errs = append(errs, c.validate(fmt.Sprintf("slo[%d]", i), operations)...)
		if c.Kind == Achieved || c.Kind == CPU {
			if j, dup := kinds[c.Kind]; dup {
				errs = append(errs, &FieldError{Field: fmt.Sprintf("slo[%d]", i), Value: c.String(),
					Detail: fmt.Sprintf("repeats slo[%d]'s %s condition: state it once", j, c.Kind)})
			}
			kinds[c.Kind] = i
		}
	}
	return errs
}

// validate checks one condition's figures and operations; path is its
// field.
func (c Condition) validate(path string, operations []string) []*FieldError {
	var errs []*FieldError
	bad := func(field, value, detail string) {
		errs = append(errs, &FieldError{Field: path + field, Value: value, Detail: detail})
	}
	c.validateBound(bad)
	c.validateOperations(bad, operations)
	return errs
}

// validateBound checks a condition's kind and bound.
func (c Condition) validateBound(bad func(field, value, detail string)) {
	ratio := formatNumber(c.Ratio)
	switch c.Kind {
	case Latency:
		c.validateLatency(bad)
	case ErrorRatio:
		if !(c.Ratio >= 0 && c.Ratio < 1) {
			bad(".ratio", ratio, "must be a fraction of at least 0 and below 1 (100 %), such as 0.001 (0.1 %)")
		}
	case Achieved:
		if !(c.Ratio > 0 && c.Ratio <= 1) {
			bad(".ratio", ratio, "must be a fraction above 0 and at most 1 (100 %), such as 0.95")
		}
	case CPU:
		if c.Recommended && c.Ratio != 0 {
			bad(".ratio", ratio, "set either recommended or a ratio, not both")
		} else if !c.Recommended && !(c.Ratio > 0 && c.Ratio <= 1) {
			bad(".ratio", ratio, "must be a fraction above 0 and at most 1 (100 %), such as 0.65, or recommended")
		}
	default:
		bad(".kind", string(c.Kind), "must be Latency, ErrorRatio, Achieved or CPU")
	}
}

// validateLatency checks a Latency condition's percentile and bound.
func (c Condition) validateLatency(bad func(field, value, detail string)) {
	if !(c.Percentile > 0 && c.Percentile <= 100) {
		bad(".percentile", formatNumber(c.Percentile), "must be a percentile above 0 and at most 100, such as 99")
	}
	if c.Latency <= 0 || c.Latency > MaxLatencyBound {
		bad(".latency", c.Latency.String(), fmt.Sprintf("must be a positive duration of at most %s, such as 20ms", MaxLatencyBound))
	} else if c.Latency < time.Microsecond {
		bad(".latency", c.Latency.String(), "must be at least 1µs, the histograms' resolution")
	}
}

// validateOperations checks the operations a condition names against the
// workload's.
func (c Condition) validateOperations(bad func(field, value, detail string), operations []string) {
	if len(c.Operations) > 0 && c.Kind != Latency && c.Kind != ErrorRatio {
		bad(".operations", fmt.Sprint(c.Operations), fmt.Sprintf("applies to Latency and ErrorRatio only: %s is of the whole step", c.Kind))
	}
	if len(c.Operations) > MaxOperations {
		bad(".operations", strconv.Itoa(len(c.Operations))+" operations", fmt.Sprintf("at most %d", MaxOperations))
	}
	for j, o := range c.Operations {
		if !slices.Contains(operations, o) {
			bad(fmt.Sprintf(".operations[%d]", j), o, fmt.Sprintf("not an operation of the workload (it has %v)", operations))
		} else if slices.Index(c.Operations, o) < j {
			bad(fmt.Sprintf(".operations[%d]", j), o, "named twice")
		}
	}
}

// Limits of a search's parameters.
const (
	// MaxRate is the API's largest rate, in operations per second.
	MaxRate = 10_000_000
	// DefaultFactor is the geometric phase's factor (docs/capacity.md).
	DefaultFactor = 2.0
	// MaxFactor bounds the factor: a larger one overshoots the knee by as
	// much, loading the instance far past what it carries.
	MaxFactor = 10.0
	// MaxSearchSteps bounds a search's worst case, whatever its other
	// limits: the status keeps one row a step.
	MaxSearchSteps = 200
)

// Validate refuses parameters a search cannot run with, naming the field.
func (p Params) Validate() []*FieldError {
	var errs []*FieldError
	bad := func(field string, v float64, detail string) {
		errs = append(errs, &FieldError{Field: field, Value: formatNumber(v), Detail: detail})
	}
	rate := func(field string, v float64) bool {
		if !(v >= 1 && v <= MaxRate) {
			bad(field, v, fmt.Sprintf("must be a rate of 1 to %d operations per second", MaxRate))
			return false
		}
		return true
	}
	okFrom, okMax := rate("from", p.From), rate("max", p.Max)
	if okFrom && okMax && p.From > p.Max {
		bad("from", p.From, fmt.Sprintf("must be at most max (%s)", formatNumber(p.Max)))
	}
	if !(p.Resolution > 0 && p.Resolution <= MaxRate) {
		bad("resolution", p.Resolution, "must be a positive rate in operations per second, such as 10")
	}
	if p.Factor != 0 && !(p.Factor > 1 && p.Factor <= MaxFactor) {
		bad("factor", p.Factor, fmt.Sprintf("must be above 1 and at most %s (0: the default, %s)", formatNumber(MaxFactor), formatNumber(DefaultFactor)))
	}
	switch p.Confirm {
	case "", ConfirmMajority, ConfirmRetryWins, ConfirmNone:
	default:
		errs = append(errs, &FieldError{Field: "confirm", Value: string(p.Confirm),
			Detail: fmt.Sprintf("must be %s, %s or %s", ConfirmMajority, ConfirmRetryWins, ConfirmNone)})
	}
	if len(errs) == 0 {
		if n := p.MaxSteps(); n > MaxSearchSteps {
			bad("resolution", p.Resolution, fmt.Sprintf("the search may take %d steps, more than %d: raise resolution or from, or lower max", n, MaxSearchSteps))
		}
	}
	return errs
}

// CheckWorstCase refuses a search whose worst case, MaxSteps steps of
// perStep each (a step's warm-up and measured time), exceeds limit (the
// run's duration guardrail); field names the step's duration.
func CheckWorstCase(p Params, perStep, limit time.Duration, field string) *FieldError {
	n := p.MaxSteps()
	worst := time.Duration(math.MaxInt64) // saturates rather than wraps
	if perStep <= 0 {
		worst = 0
	} else if time.Duration(n) <= worst/perStep {
		worst = time.Duration(n) * perStep
	}
	if worst <= limit {
		return nil
	}
	return &FieldError{Field: field, Value: perStep.String(),
		Detail: fmt.Sprintf("the search may take %d steps of %s, %s, more than the limit of %s: shorten the steps or narrow the search", n, perStep, worst, limit)}
}
