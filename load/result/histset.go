package result

import (
	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/spanbench/spanbench/load/histogram"
)

// histSet is an operation's decoded histograms, in the order of
// Histograms.fields.
type histSet [3]*hdr.Histogram

func newHistSet() histSet {
	return histSet{histogram.New(), histogram.New(), histogram.New()}
}

// fields lists the encoded histograms in histSet order.
func (h *Histograms) fields() [3]*string {
	return [3]*string{&h.LatencyHistogram, &h.ServiceHistogram, &h.ErrorLatencyHistogram}
}

// decode decodes every histogram of h.
func (h *Histograms) decode() (histSet, error) {
	var s histSet
	for i, enc := range h.fields() {
		d, err := histogram.Decode(*enc)
		if err != nil {
			return s, err
		}
		s[i] = d
	}
	return s, nil
}

// encode stores s into h; an empty histogram is stored as "", which keeps
// results small (most operations have no errors in most intervals).
func (h *Histograms) encode(s histSet) error {
	for i, dst := range h.fields() {
		*dst = ""
		if s[i].TotalCount() == 0 {
			continue
		}
		enc, err := histogram.Encode(s[i])
		if err != nil {
			return err
		}
		*dst = enc
	}
	return nil
}

// add merges o into s.
func (s histSet) add(o histSet) error {
	for i := range s {
		if err := histogram.Merge(s[i], o[i]); err != nil {
			return err
		}
	}
	return nil
}

func (s histSet) latency() *hdr.Histogram      { return s[0] }
func (s histSet) service() *hdr.Histogram      { return s[1] }
func (s histSet) errorLatency() *hdr.Histogram { return s[2] }

// NewIntervalOperation builds one operation's entry of an interval from
// its counts and raw histograms (latency, service time, error latency).
func NewIntervalOperation(name string, c Counts, latency, service, errorLatency *hdr.Histogram) (IntervalOperation, error) {
	op := IntervalOperation{Name: name, Counts: c}
	s := histogram.Summarize(latency)
	op.P50, op.P99, op.Max = s.P50, s.P99, s.Max
	return op, op.Histograms.encode(histSet{latency, service, errorLatency})
}
