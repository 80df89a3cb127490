// Package capacity finds the highest load a configuration sustains within
// a service-level objective: the SLO a step must meet, the evaluation of
// one step from its own merged histograms and counts, and the search that
// chooses each step's rate (docs/capacity.md).
//
// It is pure: no Kubernetes, no Spanner, no clock. The API's webhook and
// the CLI validate a search with Validate; the controller (or the CLI)
// drives a Search, asking it for the next rate and telling it each step's
// result; the report reads the Outcome.
package capacity

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spanbench/spanbench/result/histogram"
)

// Kind is what a condition bounds.
type Kind string

// The kinds of condition.
const (
	// Latency bounds a latency percentile of successful operations,
	// measured from their intended send time.
	Latency Kind = "Latency"
	// ErrorRatio bounds the share of completed operations that failed.
	ErrorRatio Kind = "ErrorRatio"
	// Achieved asks that at least a fraction of the step's intended sends
	// succeed: an open loop that falls behind (missed sends) fails it.
	Achieved Kind = "Achieved"
	// CPU bounds Spanner's high-priority CPU utilization, the per-region
	// maximum on a multi-region instance, where Cloud Monitoring reports it.
	CPU Kind = "CPU"
)

// Google's recommended maxima of high-priority CPU utilization: 65 % for a
// regional instance, 45 % per region for a dual-region or multi-region one,
// which leaves room to carry the traffic of a lost zone or region
// (https://cloud.google.com/spanner/docs/cpu-utilization, "Alerts for high
// CPU utilization").
const (
	RecommendedCPURegional    = 0.65
	RecommendedCPUMultiRegion = 0.45
)

// DefaultAchieved is the achieved fraction of the condition Resolve adds
// when an SLO states none: a step must succeed on at least 95 % of the
// sends its schedule intended. The ratio counts the step's own sends, so
// it carries no arrival noise: on a system that keeps up it is exactly one
// less the error ratio, and past saturation the in-flight cap turns the
// growing backlog into missed sends, so it falls towards capacity/offered.
// 95 % fails a step offered more than about 1.05 times what the system
// completes even when no latency bound is tight, and leaves the error
// budget (up to 5 %) to the error condition. docs/capacity.md.
const DefaultAchieved = 0.95

// Limits of a condition's figures.
const (
	// MaxOperations bounds the operations a condition names.
	MaxOperations = 32
	// MaxConditions bounds an SLO's conditions.
	MaxConditions = 16
	// MaxConditionText bounds a condition's text form.
	MaxConditionText = 512
	// MaxLatencyBound is the top of the histograms' range: a larger bound
	// could not be told from the clamp.
	MaxLatencyBound = time.Duration(histogram.HighestMicros) * time.Microsecond
)

// Condition is one thing a step must meet. All of an SLO's conditions must
// hold for a step to pass.
type Condition struct {
	// Kind is what the condition bounds.
	Kind Kind `json:"kind"`
	// Percentile is a Latency condition's percentile, in (0, 100].
	Percentile float64 `json:"percentile,omitempty"`
	// Operations are the operations a Latency or ErrorRatio condition
	// reads, merged; empty means all of the step's operations.
	Operations []string `json:"operations,omitempty"`
	// Latency is a Latency condition's bound.
	Latency time.Duration `json:"latency,omitempty"`
	// Ratio is the bound of the other kinds, as a fraction: the most an
	// ErrorRatio or CPU may be, the least an Achieved may be.
	Ratio float64 `json:"ratio,omitempty"`
	// Recommended marks a CPU condition whose bound is Google's
	// recommendation for the instance's configuration; Resolve sets Ratio.
	Recommended bool `json:"recommended,omitempty"`
}

// SLO is a list of conditions, all of which a passing step meets.
type SLO []Condition

// Resolve returns the SLO a search evaluates on an instance of the given
// configuration: a Recommended CPU bound becomes its figure, and an SLO
// without an Achieved condition gains one at DefaultAchieved (an open loop
// that falls behind must never pass, whatever else the SLO says).
func (s SLO) Resolve(instanceConfig string) SLO {
	out := make(SLO, 0, len(s)+1)
	achieved := false
	for _, c := range s {
		c.Operations = append([]string(nil), c.Operations...)
		if c.Kind == CPU && c.Recommended {
			c.Ratio = RecommendedCPU(instanceConfig)
		}
		achieved = achieved || c.Kind == Achieved
		out = append(out, c)
	}
	if !achieved {
		out = append(out, Condition{Kind: Achieved, Ratio: DefaultAchieved})
	}
	return out
}

// RecommendedCPU is Google's recommended maximum high-priority CPU for an
// instance configuration: regional configurations are named
// "regional-<region>"; every other name (nam3, asia1, eur5, nam-eur-asia1,
// dual-region and custom configurations) gets the stricter multi-region
// figure, which errs towards a smaller capacity. A custom configuration
// derived from a regional one should state its bound.
func RecommendedCPU(instanceConfig string) float64 {
	name := instanceConfig[strings.LastIndex(instanceConfig, "/")+1:]
	if strings.HasPrefix(name, "regional-") {
		return RecommendedCPURegional
	}
	return RecommendedCPUMultiRegion
}

// String is the condition's text form, which ParseCondition reads back:
// "p99 <= 20ms", "p99.9(read, query) <= 50ms", "errors <= 0.1%",
// "errors(commit) <= 1%", "achieved >= 95%", "cpu <= 65%",
// "cpu <= Recommended".
func (c Condition) String() string {
	ops := ""
	if len(c.Operations) > 0 {
		ops = "(" + strings.Join(c.Operations, ", ") + ")"
	}
	switch c.Kind {
	case Latency:
		return fmt.Sprintf("p%s%s <= %s", formatNumber(c.Percentile), ops, c.Latency)
	case ErrorRatio:
		return fmt.Sprintf("errors%s <= %s%%", ops, formatNumber(c.Ratio*100))
	case Achieved:
		return fmt.Sprintf("achieved >= %s%%", formatNumber(c.Ratio*100))
	case CPU:
		if c.Recommended {
			return "cpu <= Recommended"
		}
		return fmt.Sprintf("cpu <= %s%%", formatNumber(c.Ratio*100))
	}
	return fmt.Sprintf("unknown condition kind %q", string(c.Kind))
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// ParseCondition reads a condition's text form (see Condition.String).
// It checks the syntax only; Validate checks the figures and names.
func ParseCondition(s string) (Condition, error) {
	if len(s) > MaxConditionText {
		return Condition{}, fmt.Errorf("a condition is at most %d characters", MaxConditionText)
	}
	lhs, op, rhs, err := splitComparison(s)
	if err != nil {
		return Condition{}, err
	}
	name, ops, err := splitOperations(lhs)
	if err != nil {
		return Condition{}, err
	}
	c, err := parseFigure(name, ops, rhs)
	if err != nil {
		return Condition{}, err
	}
	if want := wantComparison(c.Kind); op != want {
		return Condition{}, fmt.Errorf("%s takes %s, not %s", name, want, op)
	}
	return c, nil
}

// parseFigure reads a condition's figure, its operations and its bound.
func parseFigure(name string, ops []string, rhs string) (Condition, error) {
	var c Condition
	var err error
	switch {
	case strings.HasPrefix(name, "p") && len(name) > 1:
		c.Kind, c.Operations = Latency, ops
		if c.Percentile, err = parseNumber(name[1:]); err != nil {
			return Condition{}, fmt.Errorf("percentile %q: want p followed by a number, such as p99 or p99.9", name)
		}
		if c.Latency, err = time.ParseDuration(rhs); err != nil {
			return Condition{}, fmt.Errorf("latency bound %q: want a duration, such as 20ms", rhs)
		}
	case name == "errors":
		c.Kind, c.Operations = ErrorRatio, ops
		c.Ratio, err = parsePercent(rhs)
	case name == "achieved" || name == "cpu":
		if ops != nil {
			return Condition{}, fmt.Errorf("%s applies to the whole step: it takes no operations", name)
		}
		c.Kind = Achieved
		if name == "cpu" {
			c.Kind = CPU
		}
		if c.Kind == CPU && rhs == "Recommended" {
			c.Recommended = true
		} else {
			c.Ratio, err = parsePercent(rhs)
		}
	default:
		return Condition{}, fmt.Errorf("unknown figure %q: want pNN, errors, achieved or cpu", name)
	}
	return c, err
}

// ParseSLO reads conditions' text forms, naming the one at fault.
func ParseSLO(lines []string) (SLO, error) {
	if len(lines) > MaxConditions {
		return nil, fmt.Errorf("an SLO has at most %d conditions", MaxConditions)
	}
	slo := make(SLO, 0, len(lines))
	for i, l := range lines {
		c, err := ParseCondition(l)
		if err != nil {
			return nil, fmt.Errorf("slo[%d]: %w", i, err)
		}
		slo = append(slo, c)
	}
	return slo, nil
}

// wantComparison is the comparison a kind's bound takes: an Achieved
// fraction is a floor, every other bound a ceiling.
func wantComparison(k Kind) string {
	if k == Achieved {
		return ">="
	}
	return "<="
}

func splitComparison(s string) (lhs, op, rhs string, err error) {
	for _, op := range []string{"<=", ">="} {
		if l, r, ok := strings.Cut(s, op); ok {
			return strings.TrimSpace(l), op, strings.TrimSpace(r), nil
		}
	}
	return "", "", "", fmt.Errorf("condition %q: want <figure> <= <bound> or achieved >= <fraction>, such as p99 <= 20ms", s)
}

// splitOperations splits "p99(read, query)" into "p99" and its operations.
func splitOperations(lhs string) (string, []string, error) {
	name, rest, ok := strings.Cut(lhs, "(")
	name = strings.TrimSpace(name)
	if !ok {
		return name, nil, nil
	}
	list, tail, ok := strings.Cut(rest, ")")
	if !ok || strings.TrimSpace(tail) != "" {
		return "", nil, fmt.Errorf("%q: want the operations in parentheses after the figure, such as p99(read, query)", lhs)
	}
	var ops []string
	for o := range strings.SplitSeq(list, ",") {
		o = strings.TrimSpace(o)
		if !validOperationName(o) {
			return "", nil, fmt.Errorf("%q: operation name %q: want lower-case letters, digits and dashes", lhs, o)
		}
		ops = append(ops, o)
	}
	if len(ops) > MaxOperations {
		return "", nil, fmt.Errorf("%q: at most %d operations", lhs, MaxOperations)
	}
	return name, ops, nil
}

// validOperationName is the workload's operation name syntax (lower-case
// letters, digits, dashes, starting with a letter), so that a name the
// parser accepts can be told apart from the list's separators.
func validOperationName(s string) bool {
	if s == "" || len(s) > 63 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
}

func parseNumber(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || strings.ContainsAny(s, "xXpP_") {
		return 0, fmt.Errorf("%q is not a decimal number", s)
	}
	return f, nil
}

func parsePercent(s string) (float64, error) {
	num, ok := strings.CutSuffix(s, "%")
	if !ok {
		return 0, fmt.Errorf("bound %q: want a percentage, such as 1%%", s)
	}
	f, err := parseNumber(strings.TrimSpace(num))
	if err != nil {
		return 0, fmt.Errorf("bound %q: want a percentage, such as 1%%", s)
	}
	return f / 100, nil
}

// HasCPU says whether any of an SLO's condition texts is a cpu condition:
// its steps then read the target's CPU where it reports it.
func HasCPU(conditions []string) bool {
	for _, text := range conditions {
		if c, err := ParseCondition(text); err == nil && c.Kind == CPU {
			return true
		}
	}
	return false
}
