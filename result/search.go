package result

// SchemaVersionSearch is the version of a capacity search's document
// (workload.load.search): v2 plus its search section. Its totals add up
// steps of different rates, which a v2 reader would take for one rate's,
// so it refuses the document by its version; readers of this release
// accept it.
const SchemaVersionSearch = "spanbench.io/result/v4"

// Search is a capacity search's section of its document: how it searched,
// each step it took and its outcome (docs/capacity.md). The document's
// intervals are the steps' back to back, warm-ups included; each step
// says which it measured.
type Search struct {
	// From, Max and Resolution are the search's rates, in operations per
	// second; Confirm its confirmation rule.
	From       float64 `json:"from"`
	Max        float64 `json:"max"`
	Resolution float64 `json:"resolution"`
	Confirm    string  `json:"confirm"`
	// WarmUpSeconds and StepSeconds are each step's warm-up and measured
	// time.
	WarmUpSeconds float64 `json:"warmUpSeconds"`
	StepSeconds   float64 `json:"stepSeconds"`
	// MaxSteps is the most steps the search could take (its worst case).
	MaxSteps int `json:"maxSteps"`
	// SLO is the SLO the steps were judged by, resolved (a Recommended CPU
	// bound as its figure, the default achieved condition added).
	SLO []string `json:"slo"`
	// Outcome is the capacity found, the first failing rate, the
	// conditions it failed and the steps.
	Outcome SearchOutcome `json:"outcome"`
}

// SetSearch gives d its search section (nil: none) and the schema
// version that goes with it.
func (d *Document) SetSearch(s *Search) {
	d.Search = s
	if s != nil {
		d.SchemaVersion = SchemaVersionSearch
	}
}

// SearchFigure is one condition's figure in one step.
type SearchFigure struct {
	// Condition is the condition, in its text form.
	Condition string `json:"condition"`
	// Value is the measured figure: microseconds for a latency, a
	// fraction otherwise.
	Value float64 `json:"value"`
	// Measured is false where the figure could not be had (CPU on a
	// target that does not report it); such a figure neither passes nor
	// fails the step.
	Measured bool `json:"measured"`
	// Pass says whether the figure meets the condition.
	Pass bool `json:"pass"`
	// Note says why a figure failed or was not measured, when it is not
	// the comparison itself ("no successful operation").
	Note string `json:"note,omitempty"`
}

// SearchStep is one step of a search: what it offered and achieved, each
// SLO figure with its verdict, and whether the step passed.
type SearchStep struct {
	// Offered is the step's target rate, in operations per second.
	Offered float64 `json:"offered"`
	// Achieved is its successful operations per second.
	Achieved float64 `json:"achieved"`
	// Intended counts the sends its schedule intended: completed
	// (successful, not found or failed) plus missed.
	Intended uint64 `json:"intended"`
	// OK, Errors and Missed count the step's successful, failed and missed
	// operations.
	OK     uint64 `json:"ok"`
	Errors uint64 `json:"errors"`
	Missed uint64 `json:"missed"`
	// Seconds is the step's measured time.
	Seconds float64 `json:"seconds"`
	// CPU is the high-priority CPU utilization (the per-region maximum),
	// nil where not measured.
	CPU *float64 `json:"cpu,omitempty"`
	// Figures are the SLO's figures, in the SLO's order.
	Figures []SearchFigure `json:"figures"`
	// Pass is whether every measured figure passed.
	Pass bool `json:"pass"`
	// FirstInterval and EndInterval are the document's intervals the
	// step measured, [FirstInterval, EndInterval): after its warm-up, its
	// own only. A reader re-derives every figure from them.
	FirstInterval int `json:"firstInterval"`
	EndInterval   int `json:"endInterval"`
}

// Failed is the text of the conditions the step failed, in SLO order.
func (r SearchStep) Failed() []string {
	var out []string
	for _, f := range r.Figures {
		if f.Measured && !f.Pass {
			out = append(out, f.Condition)
		}
	}
	return out
}

// SearchOutcome is a capacity search's result so far (final once Done).
type SearchOutcome struct {
	// Done is whether the search has ended with a capacity it stands by
	// (not when it ran out of time: Reason OutOfTime).
	Done bool `json:"done"`
	// Reason is why it ended (Resolved, ReachedMax, BelowFrom, StepLimit,
	// or OutOfTime for a search stopped unfinished); empty while it runs.
	Reason string `json:"reason,omitempty"`
	// Capacity is the highest rate that passed, in operations per second;
	// 0 when none did.
	Capacity float64 `json:"capacity"`
	// FirstFailing is the lowest rate that failed (confirmed); 0 when none
	// did (the capacity is then at least Max).
	FirstFailing float64 `json:"firstFailing,omitempty"`
	// FailedConditions are the conditions the deciding step of the
	// lowest failing rate failed.
	FailedConditions []string `json:"failedConditions,omitempty"`
	// CapacityPerNode is the capacity per 1,000 processing units (one
	// node); 0 when the instance's size is not known (the emulator).
	CapacityPerNode float64 `json:"capacityPerNode,omitempty"`
	// Steps are the steps taken, in order.
	Steps []SearchStep `json:"steps"`
}
