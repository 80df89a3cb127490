package capacity

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
)

// Measurement is what one step measured: its own operations' counts and
// exact merged latency histograms, never another step's.
type Measurement struct {
	// Offered is the step's target rate, in operations per second.
	Offered float64
	// Seconds is the step's measured time (after its warm-up).
	Seconds float64
	// Missed counts the step's sends skipped at the in-flight cap.
	Missed uint64
	// Operations are the step's operations by name.
	Operations map[string]*OperationMeasurement
	// CPU is Cloud Monitoring's CPU utilization over the step's measured
	// minutes; nil where the target does not report it (the emulator) or
	// it could not be read (CPUNote says why).
	CPU []result.MonitoringCPU
	// CPUNote says why CPU is nil on a target that reports it: the step's
	// window held no whole minute, or its minutes were not published in
	// time (spanner/monitoring.StepCPU).
	CPUNote string
}

// OperationMeasurement is one operation's counts and latency in a step.
type OperationMeasurement struct {
	// Counts are the operation's counters.
	Counts result.Counts
	// Latency is the merged histogram of its successful operations'
	// latency from their intended send time.
	Latency *histogram.Compact
}

// Measure merges the intervals of a merged result whose indexes are in
// [first, end), one step's measured window, into that step's measurement:
// counts added, latency histograms merged exactly. Every interval of the
// window must be present once: a step measured on a gap would claim rates
// it did not see.
func Measure(intervals []result.Interval, first, end int, intervalSeconds, offered float64) (Measurement, error) {
	if first < 0 || end <= first || !(intervalSeconds > 0) {
		return Measurement{}, fmt.Errorf("step window [%d, %d) of %gs intervals: want a non-empty window of positive intervals", first, end, intervalSeconds)
	}
	m := Measurement{Offered: offered, Seconds: float64(end-first) * intervalSeconds, Operations: map[string]*OperationMeasurement{}}
	seen := make([]bool, end-first)
	var dec histogram.Decoder
	for i := range intervals {
		in := &intervals[i]
		if in.Index < first || in.Index >= end {
			continue
		}
		if seen[in.Index-first] {
			return Measurement{}, fmt.Errorf("interval %d appears twice", in.Index)
		}
		seen[in.Index-first] = true
		m.Missed += in.Missed
		for _, op := range in.Operations {
			om := m.Operations[op.Name]
			if om == nil {
				om = &OperationMeasurement{Latency: histogram.NewCompact()}
				m.Operations[op.Name] = om
			}
			if err := om.Counts.Add(op.Counts); err != nil {
				return Measurement{}, fmt.Errorf("interval %d, operation %s: %w", in.Index, op.Name, err)
			}
			if err := dec.AddTo(om.Latency, op.LatencyHistogram); err != nil {
				return Measurement{}, fmt.Errorf("interval %d, operation %s: %w", in.Index, op.Name, err)
			}
		}
	}
	if i := slices.Index(seen, false); i >= 0 {
		return Measurement{}, fmt.Errorf("step window [%d, %d): interval %d is missing", first, end, first+i)
	}
	return m, nil
}

// Figure is one condition's figure in one step (result.SearchFigure:
// the result document records it).
type Figure = result.SearchFigure

// StepResult is one step of a search (result.SearchStep: the result
// document records it).
type StepResult = result.SearchStep

// Evaluate judges one step's measurement against a resolved SLO (see
// SLO.Resolve): every figure is computed from the step's own counts and
// merged histograms. A percentile is the histogram's value at that rank
// (the highest value equivalent to it, three significant digits), so a
// bound is never passed by rounding down. It fails only on counts whose
// sum passes result.MaxCount, which a checked result never holds.
func Evaluate(slo SLO, m Measurement) (StepResult, error) {
	var all result.Counts
	for name, om := range m.Operations {
		if err := all.Add(om.Counts); err != nil {
			return StepResult{}, fmt.Errorf("operation %s: %w", name, err)
		}
	}
	r := StepResult{Offered: m.Offered, OK: all.OK, Errors: all.ErrorCount(), Missed: m.Missed, Seconds: m.Seconds}
	r.Intended = all.OK + all.NotFound + r.Errors // at most 2*MaxCount: fits
	if r.Intended += m.Missed; r.Intended < m.Missed {
		r.Intended = math.MaxUint64
	}
	if m.Seconds > 0 {
		r.Achieved = float64(all.OK) / m.Seconds
	}
	r.CPU = highPriorityCPU(m.CPU)
	r.Pass = true
	for _, c := range slo {
		f := c.evaluate(m, r)
		r.Figures = append(r.Figures, f)
		r.Pass = r.Pass && (f.Pass || !f.Measured)
	}
	return r, nil
}

// evaluate computes one condition's figure; r holds the step's totals.
func (c Condition) evaluate(m Measurement, r StepResult) Figure {
	f := Figure{Condition: c.String(), Measured: true}
	switch c.Kind {
	case Latency:
		h := histogram.NewCompact()
		for _, om := range c.selected(m) {
			h.Merge(om.Latency)
		}
		if h.TotalCount() == 0 {
			f.Note = "no successful operation"
			return f
		}
		f.Value = float64(h.ValueAtPercentiles(c.Percentile)[0])
		f.Pass = f.Value <= float64(c.Latency/time.Microsecond)
	case ErrorRatio:
		var failed, completed uint64
		for _, om := range c.selected(m) {
			e := om.Counts.ErrorCount()
			failed, completed = failed+e, completed+om.Counts.OK+om.Counts.NotFound+e
		}
		if completed == 0 {
			f.Note = "no completed operation"
			return f
		}
		f.Value = float64(failed) / float64(completed)
		f.Pass = f.Value <= c.Ratio
	case Achieved:
		if r.Intended == 0 {
			f.Note = "nothing was sent"
			return f
		}
		f.Value = float64(r.OK) / float64(r.Intended)
		f.Pass = f.Value >= c.Ratio
	case CPU:
		if r.CPU == nil {
			f.Measured, f.Note = false, "not reported by the target"
			if m.CPUNote != "" {
				f.Note = m.CPUNote
			}
			return f
		}
		f.Value = *r.CPU
		f.Pass = f.Value <= c.Ratio
	default:
		f.Note = "unknown condition kind"
	}
	return f
}

// selected is the step's operations a condition reads: the named ones, or
// all.
func (c Condition) selected(m Measurement) []*OperationMeasurement {
	var out []*OperationMeasurement
	for name, om := range m.Operations {
		if len(c.Operations) == 0 || slices.Contains(c.Operations, name) {
			out = append(out, om)
		}
	}
	return out
}

// highPriorityCPU is the largest high-priority CPU utilization of any
// region: Google's multi-region guidance bounds each region, and the
// leader region carries the writes, so an instance-wide mean would hide
// it. Each region's figure is its mean over the step's minutes; nil when
// no high-priority series was reported.
func highPriorityCPU(cpu []result.MonitoringCPU) *float64 {
	var peak *float64
	for _, c := range cpu {
		if c.Priority == "high" && (peak == nil || c.MeanRatio > *peak) {
			v := c.MeanRatio
			peak = &v
		}
	}
	return peak
}
