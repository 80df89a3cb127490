package history

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/spanbench/spanbench/campaign/plan"
	"github.com/spanbench/spanbench/result/histogram"
)

// Limits of one stored entry. A ConfigMap holds at most 1 MiB of data
// (and etcd refuses requests above 1.5 MiB), so an entry is cut to
// MaxEntryBytes, leaving room for the object's metadata.
const (
	// MaxEntryBytes bounds an encoded (compressed) entry.
	MaxEntryBytes = 900 << 10
	// MaxTotalBytes bounds a campaign's history: the oldest entries go
	// first when the newest would not fit. Measured
	// (TestHistoryBudgetHolds90IterationsOf6CellsAnd6Operations): 90
	// iterations of 6 cells × 6 operations of 30,000 samples each fit.
	MaxTotalBytes = 16 << 20
	// maxDecodedBytes bounds an entry once decompressed: an honest entry
	// at MaxEntryBytes expands to well under 2 MiB (its histograms are
	// already compressed), so more is a compression bomb.
	maxDecodedBytes = 4 << 20
	// maxOperations bounds an entry's operations per cell, above a
	// workload's 16.
	maxOperations = 64
	// maxNameBytes bounds the names an entry holds.
	maxNameBytes = 253
)

// Encode encodes e as gzip-compressed JSON, at most MaxEntryBytes: when
// the whole entry is larger, the largest histograms are left out (their
// figures stay) and counted in HistogramsDropped.
func Encode(e Entry) ([]byte, error) {
	b, err := encode(&e)
	if err != nil || len(b) <= MaxEntryBytes {
		return b, err
	}
	ops := histogramsBySize(&e)
	for len(b) > MaxEntryBytes && len(ops) > 0 {
		// Drop about as many bytes of histograms as the entry is over,
		// then measure again.
		over := len(b) - MaxEntryBytes
		for over > 0 && len(ops) > 0 {
			over -= len(ops[0].Histogram)
			ops[0].Histogram = nil
			ops = ops[1:]
			e.HistogramsDropped++
		}
		if b, err = encode(&e); err != nil {
			return nil, err
		}
	}
	if len(b) > MaxEntryBytes {
		return nil, fmt.Errorf("the summary of iteration %s is %d bytes without histograms, more than the %d an entry may hold", e.Iteration, len(b), MaxEntryBytes)
	}
	return b, nil
}

func encode(e *Entry) ([]byte, error) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // a valid level never fails
	if err := json.NewEncoder(zw).Encode(e); err != nil {
		return nil, fmt.Errorf("encoding the summary of iteration %s: %w", e.Iteration, err)
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// histogramsBySize are e's operations with a histogram, largest first.
func histogramsBySize(e *Entry) []*Operation {
	var out []*Operation
	for i := range e.Cells {
		for j := range e.Cells[i].Operations {
			if op := &e.Cells[i].Operations[j]; len(op.Histogram) > 0 {
				out = append(out, op)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].Histogram) > len(out[j].Histogram) })
	return out
}

// Decode decodes an entry that Encode wrote, refusing, with an error that
// says what is wrong, anything larger than the limits, a compression
// bomb, another schema, and figures or histograms that are malformed. It
// never panics and its memory is bounded by the limits.
func Decode(b []byte) (Entry, error) {
	if len(b) > MaxEntryBytes {
		return Entry{}, fmt.Errorf("entry is %d bytes, more than the %d allowed", len(b), MaxEntryBytes)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return Entry{}, fmt.Errorf("entry is not gzip-compressed: %w", err)
	}
	raw, err := io.ReadAll(io.LimitReader(zr, maxDecodedBytes+1))
	if err != nil {
		return Entry{}, fmt.Errorf("decompressing entry: %w", err)
	}
	if len(raw) > maxDecodedBytes {
		return Entry{}, fmt.Errorf("entry decompresses to more than %d bytes", maxDecodedBytes)
	}
	var e Entry
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return Entry{}, fmt.Errorf("entry is not valid JSON: %w", err)
	}
	if dec.More() {
		return Entry{}, errors.New("entry has data after its JSON document")
	}
	return e, e.validate()
}

// validate checks what Decode cannot leave to the JSON decoder.
func (e *Entry) validate() error {
	switch {
	case e.SchemaVersion != SchemaVersion:
		return fmt.Errorf("entry schema %q, want %q", e.SchemaVersion, SchemaVersion)
	case e.Iteration == "" || len(e.Iteration) > maxNameBytes:
		return fmt.Errorf("entry iteration name of %d bytes, want 1 to %d", len(e.Iteration), maxNameBytes)
	case len(e.Cells) > plan.MaxCells:
		return fmt.Errorf("entry has %d cells, more than %d", len(e.Cells), plan.MaxCells)
	case e.HistogramsDropped < 0:
		return fmt.Errorf("entry histogramsDropped %d is negative", e.HistogramsDropped)
	}
	var dec histogram.Decoder
	for i := range e.Cells {
		if err := e.Cells[i].validate(&dec); err != nil {
			return fmt.Errorf("cell %d (%.64q): %w", i, e.Cells[i].Name, err)
		}
	}
	return nil
}

func (c *Cell) validate(dec *histogram.Decoder) error {
	switch {
	case c.Name == "" || len(c.Name) > maxNameBytes:
		return fmt.Errorf("name of %d bytes, want 1 to %d", len(c.Name), maxNameBytes)
	case c.Runs < 1:
		return fmt.Errorf("runs %d, want at least 1", c.Runs)
	case len(c.Operations) > maxOperations:
		return fmt.Errorf("%d operations, more than %d", len(c.Operations), maxOperations)
	}
	for i := range c.Operations {
		if err := c.Operations[i].validate(dec); err != nil {
			return fmt.Errorf("operation %d (%.64q): %w", i, c.Operations[i].Name, err)
		}
	}
	if err := c.Monitoring.validate(); err != nil {
		return err
	}
	return c.Capacity.validate()
}

func (o *Operation) validate(dec *histogram.Decoder) error {
	l := o.Latency
	switch {
	case o.Name == "" || len(o.Name) > maxNameBytes:
		return fmt.Errorf("name of %d bytes, want 1 to %d", len(o.Name), maxNameBytes)
	case !finite(o.Seconds) || !finite(o.Throughput) || !finite(l.Mean):
		return fmt.Errorf("seconds %g, throughput %g, mean %g: want finite figures, not negative", o.Seconds, o.Throughput, l.Mean)
	case l.Count < 0 || l.P50 < 0 || l.P90 < l.P50 || l.P99 < l.P90 || l.P999 < l.P99 || l.Max < l.P999:
		return fmt.Errorf("latency %+v: want a count and percentiles that are not negative and do not decrease", l)
	}
	if err := o.Server.validate(); err != nil {
		return err
	}
	return o.validateHistogram(dec)
}

// validateHistogram checks that the histogram, if kept, decodes and holds
// the count its summary says.
func (o *Operation) validateHistogram(dec *histogram.Decoder) error {
	l := o.Latency
	if len(o.Histogram) == 0 {
		return nil
	}
	h := histogram.NewCompact()
	if err := dec.AddBinaryTo(h, o.Histogram); err != nil {
		return err
	}
	if h.TotalCount() != l.Count {
		return fmt.Errorf("histogram holds %d values, its summary says %d", h.TotalCount(), l.Count)
	}
	return nil
}

func finite(v float64) bool { return v >= 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }

// Bound is how many entries a history keeps, given their encoded sizes
// newest first: the newest, at most limit of them and within
// MaxTotalBytes, without holes (once one does not fit, older ones go too).
func Bound(sizes []int, limit int) int {
	total := 0
	for i, n := range sizes {
		if i >= limit || total+n > MaxTotalBytes {
			return i
		}
		total += n
	}
	return len(sizes)
}
