package capacity

import (
	"fmt"

	"github.com/spanbench/spanbench/result/histogram"
)

// Add merges another runner's measurement of the same step into m, as if
// their intervals had been merged before Measure: counts and missed sends
// added, latency histograms merged exactly. Both must measure the same
// step (rate and window): a merge of two steps would mix two rates in one
// percentile.
func (m *Measurement) Add(o Measurement) error {
	if m.Offered != o.Offered || m.Seconds != o.Seconds {
		return fmt.Errorf("a measurement of %g ops/s over %gs cannot join one of %g ops/s over %gs: not the same step",
			o.Offered, o.Seconds, m.Offered, m.Seconds)
	}
	if m.Operations == nil {
		m.Operations = map[string]*OperationMeasurement{}
	}
	if m.Missed += o.Missed; m.Missed < o.Missed {
		return fmt.Errorf("missed sends overflow")
	}
	for name, op := range o.Operations {
		mine := m.Operations[name]
		if mine == nil {
			mine = &OperationMeasurement{Latency: histogram.NewCompact()}
			m.Operations[name] = mine
		}
		if err := mine.Counts.Add(op.Counts); err != nil {
			return fmt.Errorf("operation %s: %w", name, err)
		}
		if op.Latency != nil {
			mine.Latency.Merge(op.Latency)
		}
	}
	m.CPU = append(m.CPU, o.CPU...)
	return nil
}
