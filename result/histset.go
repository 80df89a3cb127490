package result

import (
	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/spanbench/spanbench/result/histogram"
)

// histSet is an operation's histograms, in the order of Histograms.fields,
// in compact form: a merged result holds thousands of them.
type histSet [numKinds]*histogram.Compact

// numKinds is the number of histogram kinds an operation has.
const numKinds = 4

func newHistSet() histSet {
	return histSet{histogram.NewCompact(), histogram.NewCompact(), histogram.NewCompact(), histogram.NewCompact()}
}

// codec decodes and encodes histograms with reused buffers.
type codec struct {
	dec histogram.Decoder
	enc histogram.Encoder
}

// fields lists the encoded histograms in histSet order.
func (h *Histograms) fields() [numKinds]*string {
	return [numKinds]*string{&h.LatencyHistogram, &h.ServiceHistogram, &h.ErrorLatencyHistogram, &h.GFELatencyHistogram}
}

// addTo decodes every histogram of h and merges it into s.
func (h *Histograms) addTo(c *codec, s histSet) error {
	for i, enc := range h.fields() {
		if err := c.dec.AddTo(s[i], *enc); err != nil {
			return err
		}
	}
	return nil
}

// encode stores s into h; an empty histogram is stored as "", which keeps
// results small (most operations have no errors in most intervals).
func (h *Histograms) encode(c *codec, s histSet) error {
	for i, dst := range h.fields() {
		enc, err := c.enc.Encode(s[i])
		if err != nil {
			return err
		}
		*dst = enc
	}
	return nil
}

// add merges o into s.
func (s histSet) add(o histSet) {
	for i := range s {
		s[i].Merge(o[i])
	}
}

// bytes is the memory the histograms' buckets take.
func (s histSet) bytes() int64 { return s[0].Bytes() + s[1].Bytes() + s[2].Bytes() + s[3].Bytes() }

func (s histSet) latency() *histogram.Compact      { return s[0] }
func (s histSet) service() *histogram.Compact      { return s[1] }
func (s histSet) errorLatency() *histogram.Compact { return s[2] }
func (s histSet) gfeLatency() *histogram.Compact   { return s[3] }

// NewIntervalOperation builds one operation's entry of an interval from
// its counts and raw histograms (latency, service time, error latency).
func NewIntervalOperation(name string, c Counts, latency, service, errorLatency *hdr.Histogram) (IntervalOperation, error) {
	return NewIntervalOperationCompact(name, c, histogram.FromHDR(latency), histogram.FromHDR(service), histogram.FromHDR(errorLatency))
}

// NewIntervalOperationCompact is NewIntervalOperation from compact
// histograms, as the engine records them: the same entry for the same
// counts.
func NewIntervalOperationCompact(name string, c Counts, latency, service, errorLatency *histogram.Compact) (IntervalOperation, error) {
	op := IntervalOperation{Name: name, Counts: c}
	s := histogram.SummarizeCompact(latency)
	op.P50, op.P99, op.Max = s.P50, s.P99, s.Max
	var enc histogram.Encoder
	for i, h := range []*histogram.Compact{latency, service, errorLatency} {
		e, err := enc.Encode(h) // "" for an empty histogram
		if err != nil {
			return op, err
		}
		*op.Histograms.fields()[i] = e
	}
	return op, nil
}

// SetGFELatency stores the histogram of the GFE's timing of the
// interval's successful operations (nil or empty: none carried it).
func (op *IntervalOperation) SetGFELatency(h *hdr.Histogram) error {
	if h == nil {
		return op.SetGFELatencyCompact(nil)
	}
	return op.SetGFELatencyCompact(histogram.FromHDR(h))
}

// SetGFELatencyCompact is SetGFELatency from a compact histogram.
func (op *IntervalOperation) SetGFELatencyCompact(h *histogram.Compact) error {
	op.GFELatencyHistogram = ""
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	var enc histogram.Encoder
	e, err := enc.Encode(h)
	op.GFELatencyHistogram = e
	return err
}
