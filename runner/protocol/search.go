package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	sigsjson "sigs.k8s.io/json"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/capacity"
	"github.com/spanbench/spanbench/result/histogram"
)

// A capacity search in the cluster (docs/capacity.md): the runners stay up
// across its steps. The controller decides each step and publishes it in
// the control map (KeySearchStep: a SearchStep); every runner runs its
// share of that rate from the step's instant, measures it from its own
// intervals after the warm-up, and writes the measurement in its shard
// map (KeySearchReport: a SearchReport). The controller merges the
// shards' measurements of a step exactly, judges it, and publishes the
// next step or the end of the search. Step 0 needs no publication: it is
// the search's first rate, from the run's start time.
const (
	// KeySearchStep holds the step the runners are to run, in the
	// control map.
	KeySearchStep = "searchStep.json"
	// KeySearchReport holds a runner's measurement of its latest step, in
	// its shard map.
	KeySearchReport = "searchReport.json"
	// KeySearchJudged holds the steps the controller judged so far, in
	// the control map (EncodeSearchJudged): written in the same patch as
	// the step it published after them, so that the search's record and
	// its schedule never disagree, and a restarted manager resumes the
	// search from them (capacity.Resume). The runners do not read it.
	KeySearchJudged = "searchJudged.json"
)

// MaxSearchReportBytes bounds a search report: it shares the shard map
// with the live report (MaxLiveBytes) and the result (MaxResultBytes),
// within the 1 MiB a ConfigMap may hold. A step's histograms take a few
// KiB per operation.
const MaxSearchReportBytes = 48 << 10

// SearchReportTimeout is how long after a step's end the controller waits
// for every runner's report of it before it fails the run; a runner waits
// SearchDecisionTimeout for the next step, longer, so that the controller
// is the one that names a runner which never reported.
const (
	SearchReportTimeout   = time.Minute
	SearchDecisionTimeout = 2 * time.Minute
)

// SearchStep is a step the controller published: step Step (from 0) at
// Rate operations per second across all runners from At; or, with Done,
// the end of the search: the runners store their results.
type SearchStep struct {
	// Start is the run's start time: it binds the step to this run's life.
	Start time.Time
	// Step is the step's index.
	Step int
	// Rate is the step's rate, all runners together.
	Rate float64 `json:",omitempty"`
	// At is when every runner starts the step.
	At time.Time `json:",omitzero"`
	// Done ends the search: no step Step is run.
	Done bool `json:",omitempty"`
}

// EncodeSearchStep is s as the controller patches it into the control map.
func EncodeSearchStep(s SearchStep) (map[string]string, error) {
	s.Start, s.At = s.Start.UTC(), s.At.UTC()
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return map[string]string{KeySearchStep: string(b)}, nil
}

// DecodeSearchStep reads the published step from the control map's data;
// ok is false while none is published.
func DecodeSearchStep(data map[string]string) (s SearchStep, ok bool, err error) {
	raw, ok := data[KeySearchStep]
	if !ok {
		return SearchStep{}, false, nil
	}
	if err := strict([]byte(raw), &s); err != nil {
		return SearchStep{}, false, &DecodeError{Key: KeySearchStep, Problem: "is not a search step: " + err.Error()}
	}
	switch {
	case s.Start.IsZero() || s.Step < 0:
		return SearchStep{}, false, &DecodeError{Key: KeySearchStep, Problem: "names no start time or a negative step"}
	case !s.Done && (s.At.IsZero() || !(s.Rate > 0) || math.IsInf(s.Rate, 0)):
		return SearchStep{}, false, &DecodeError{Key: KeySearchStep, Problem: fmt.Sprintf("step %d names no instant or rate %g", s.Step, s.Rate)}
	}
	return s, true, nil
}

// EncodeSearchJudged is the judged steps as the control map holds them.
func EncodeSearchJudged(steps []result.SearchStep) (map[string]string, error) {
	if steps == nil {
		steps = []result.SearchStep{}
	}
	b, err := json.Marshal(steps)
	if err != nil {
		return nil, err
	}
	return map[string]string{KeySearchJudged: string(b)}, nil
}

// DecodeSearchJudged reads the judged steps from the control map's data;
// none while no step was judged.
func DecodeSearchJudged(data map[string]string) ([]result.SearchStep, error) {
	raw, ok := data[KeySearchJudged]
	if !ok {
		return nil, nil
	}
	var steps []result.SearchStep
	if err := strict([]byte(raw), &steps); err != nil {
		return nil, &DecodeError{Key: KeySearchJudged, Problem: "is not a list of judged search steps: " + err.Error()}
	}
	return steps, nil
}

// SearchReport is one runner's measurement of one step: its operations'
// counts and latency histograms over the step's measured intervals.
type SearchReport struct {
	// Start is the run's start time; Step the step's index.
	Start time.Time
	Step  int
	// Offered is the step's rate (all runners'); Seconds its measured
	// time; Missed the runner's sends skipped at the in-flight cap.
	Offered, Seconds float64
	Missed           uint64
	// Operations are the runner's operations in the step.
	Operations []SearchOperation
}

// SearchOperation is one operation's counts and latency histogram (of
// its successful operations, encoded as result documents encode theirs).
type SearchOperation struct {
	Name    string
	Counts  result.Counts
	Latency string `json:",omitempty"`
}

// NewSearchReport is a runner's report of step of the run started at
// start, from its measurement.
func NewSearchReport(start time.Time, step int, m capacity.Measurement) (SearchReport, error) {
	r := SearchReport{Start: start.UTC(), Step: step, Offered: m.Offered, Seconds: m.Seconds, Missed: m.Missed}
	var enc histogram.Encoder
	for name, op := range m.Operations {
		o := SearchOperation{Name: name, Counts: op.Counts}
		if op.Latency != nil && op.Latency.TotalCount() > 0 {
			s, err := enc.Encode(op.Latency)
			if err != nil {
				return SearchReport{}, fmt.Errorf("operation %s: %w", name, err)
			}
			o.Latency = s
		}
		r.Operations = append(r.Operations, o)
	}
	return r, nil
}

// EncodeSearchReport is r as the runner patches it into its shard map:
// its key alone.
func EncodeSearchReport(r SearchReport) (Maps, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return Maps{}, err
	}
	if len(b) > MaxSearchReportBytes {
		return Maps{}, fmt.Errorf("the report of search step %d is %d bytes, more than the %d it may take", r.Step, len(b), MaxSearchReportBytes)
	}
	return Maps{Data: map[string]string{KeySearchReport: string(b)}}, nil
}

// DecodeSearchReport reads a runner's search report strictly (it comes
// from a pod) and returns it with its measurement; counts out of range and
// histograms that do not decode are refused.
func DecodeSearchReport(s string) (SearchReport, capacity.Measurement, error) {
	var r SearchReport
	fail := func(problem string) (SearchReport, capacity.Measurement, error) {
		return SearchReport{}, capacity.Measurement{}, &DecodeError{Key: KeySearchReport, Problem: problem}
	}
	if len(s) > MaxSearchReportBytes {
		return fail(fmt.Sprintf("is %d bytes, more than %d", len(s), MaxSearchReportBytes))
	}
	if err := strict([]byte(s), &r); err != nil {
		return fail("is not a search report: " + err.Error())
	}
	if r.Start.IsZero() || r.Step < 0 || !(r.Offered > 0) || math.IsInf(r.Offered, 0) || !(r.Seconds > 0) || math.IsInf(r.Seconds, 0) || r.Missed > result.MaxCount {
		return fail(fmt.Sprintf("step %d, offered %g over %gs, missed %d: out of range", r.Step, r.Offered, r.Seconds, r.Missed))
	}
	m := capacity.Measurement{Offered: r.Offered, Seconds: r.Seconds, Missed: r.Missed, Operations: map[string]*capacity.OperationMeasurement{}}
	var dec histogram.Decoder
	for _, op := range r.Operations {
		if m.Operations[op.Name] != nil {
			return fail(fmt.Sprintf("operation %q appears twice", op.Name))
		}
		var zero result.Counts
		if err := zero.Add(op.Counts); err != nil {
			return fail(fmt.Sprintf("operation %q: %v", op.Name, err))
		}
		om := &capacity.OperationMeasurement{Counts: op.Counts, Latency: histogram.NewCompact()}
		if op.Latency != "" {
			if err := dec.AddTo(om.Latency, op.Latency); err != nil {
				return fail(fmt.Sprintf("operation %q: latency: %v", op.Name, err))
			}
		}
		m.Operations[op.Name] = om
	}
	return r, m, nil
}

// strict unmarshals a document from a pod or the control map: unknown and
// duplicate fields are refused.
func strict(b []byte, v any) error {
	errs, err := sigsjson.UnmarshalStrict(b, v, sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	if err == nil && len(errs) > 0 {
		err = errors.Join(errs...)
	}
	return err
}
