package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unsafe"

	"github.com/spanbench/spanbench/result/histogram"
)

// Budget bounds what decoding one document may cost. Results come from
// runner pods (which may run a user's image) and from files: a small input
// must not decode into a large heap. A document is scanned against its
// budget before it is decoded, so the bound holds while decoding, not
// after: JSON of tiny objects ("{}" is 2 bytes, an IntervalOperation 144)
// or of many small maps amplifies far beyond its size.
type Budget struct {
	// Bytes bounds the document's JSON (decompressed).
	Bytes int64
	// Memory bounds the estimated heap the decoded document takes: its
	// strings, and its structs and maps at their in-memory size, slices
	// counted twice (append's growth).
	Memory int64
	// Intervals bounds the intervals of the time series.
	Intervals int
	// IntervalOperations bounds the operation entries over all intervals.
	IntervalOperations int
	// Operations bounds the operations of one interval, of the totals and
	// of the spec.
	Operations int
	// Shards bounds the shard entries.
	Shards int
	// Entries bounds any other array or object (notes, error codes, the
	// spec's lists).
	Entries int
	// Depth bounds nesting.
	Depth int
}

// Default limits of a decoded document.
const (
	// MaxIntervals is the most intervals a document may hold: 12 days of
	// 1 s intervals, 121 days of the default 10 s.
	MaxIntervals = 1 << 20
	// MaxOperations is the most operations a document may name; the API
	// allows far fewer per workload.
	MaxOperations = 256
	// MaxShards is the most shard entries a document may hold; the API
	// allows far fewer runners.
	MaxShards = 4096
	// MaxStreams is the most stream sections a document may hold; the
	// API allows 8 streams a run, and a run's check (Expect) only its own.
	MaxStreams = 64
	// maxEntries bounds any other list or map.
	maxEntries = 1024
	// maxDepth bounds nesting: the document's own is 6 levels.
	maxDepth = 32
)

// FileBudget is the budget of a document read from a file (spanbench
// report): MaxDocumentBytes of JSON, at most 512 MiB decoded.
func FileBudget() Budget {
	return Budget{
		Bytes: MaxDocumentBytes, Memory: 512 << 20,
		Intervals: MaxIntervals, IntervalOperations: 4 << 20, Operations: MaxOperations,
		Shards: MaxShards, Entries: maxEntries, Depth: maxDepth,
	}
}

// In-memory sizes the scan charges for each element it finds.
const (
	sizeInterval   = int64(unsafe.Sizeof(Interval{}))
	sizeIntervalOp = int64(unsafe.Sizeof(IntervalOperation{}))
	sizeOperation  = int64(unsafe.Sizeof(Operation{})) + int64(unsafe.Sizeof(histogram.Summary{}))
	sizeShard      = int64(unsafe.Sizeof(Shard{}))
	sizeStream     = int64(unsafe.Sizeof(StreamSection{}))
	sizeString     = int64(unsafe.Sizeof(""))
	// sizeMap is a small map's header and first bucket; sizeMapEntry each
	// further entry (key header, value, overhead).
	sizeMap      = 300
	sizeMapEntry = 48
	// sizeValue is any other value: a scalar field or a list element.
	sizeValue = 16
)

// BudgetError says a document exceeds its decode budget.
type BudgetError struct {
	// What names the limit; Limit is its value.
	What  string
	Limit int64
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("the result exceeds its decode budget: more than %d %s", e.Limit, e.What)
}

// Fits scans the JSON of a document and refuses it, before it is decoded,
// when decoding it would exceed b. It reads tokens only: its own memory is
// the nesting stack.
func (b Budget) Fits(data []byte) error {
	if int64(len(data)) > b.Bytes {
		return &BudgetError{What: "bytes of JSON", Limit: b.Bytes}
	}
	s := scan{b: b, dec: json.NewDecoder(bytes.NewReader(data))}
	s.dec.UseNumber()
	for {
		tok, err := s.dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("decoding result: %w", err)
		}
		if err := s.token(tok); err != nil {
			return err
		}
	}
}

// frame is one open array or object of the scan.
type frame struct {
	// object is true for an object, whose tokens alternate key and value.
	object, wantKey bool
	// path names the container: "intervals", "intervals.operations",
	// "errors"... (keys only, array levels are transparent).
	path string
	// key is the object's current key.
	key string
	n   int
}

type scan struct {
	b     Budget
	dec   *json.Decoder
	stack []frame
	// memory is the estimate so far; intervalOps counts over all
	// intervals.
	memory      int64
	intervalOps int
}

func (s *scan) token(tok json.Token) error {
	if tok == json.Delim('}') || tok == json.Delim(']') {
		s.stack = s.stack[:len(s.stack)-1]
		return nil
	}
	top := s.top()
	if top != nil && top.object && top.wantKey {
		key, _ := tok.(string)
		top.key, top.wantKey = key, false
		return s.charge(int64(len(key)))
	}
	if err := s.element(top); err != nil {
		return err
	}
	if top != nil && top.object {
		top.wantKey = true
	}
	switch t := tok.(type) {
	case json.Delim:
		if len(s.stack) >= s.b.Depth {
			return &BudgetError{What: "levels of nesting", Limit: int64(s.b.Depth)}
		}
		s.stack = append(s.stack, frame{object: t == '{', wantKey: t == '{', path: s.childPath(top)})
	case string:
		return s.charge(int64(len(t)) + sizeString)
	}
	return nil
}

func (s *scan) top() *frame {
	if len(s.stack) == 0 {
		return nil
	}
	return &s.stack[len(s.stack)-1]
}

// childPath is the path of a container opened as the current value of top.
func (s *scan) childPath(top *frame) string {
	switch {
	case top == nil:
		return ""
	case !top.object:
		return top.path
	case top.path == "":
		return top.key
	}
	return top.path + "." + top.key
}

// element counts one more value in its container against the container's
// limit, and charges its in-memory size.
func (s *scan) element(top *frame) error {
	if top == nil {
		return nil
	}
	top.n++
	if stripStream(top.path) == "intervals.operations" && !top.object {
		s.intervalOps++
		if s.intervalOps > s.b.IntervalOperations {
			return &BudgetError{What: "interval operations", Limit: int64(s.b.IntervalOperations)}
		}
	}
	limit, what, size := s.limitOf(top)
	if top.n > limit {
		return &BudgetError{What: what, Limit: int64(limit)}
	}
	return s.charge(size)
}

// limitOf is the limit of a container's elements, what it is called, and
// the size the next element is charged.
func (s *scan) limitOf(top *frame) (limit int, what string, size int64) {
	// A stream section's fields are a document's: the same limits.
	path := stripStream(top.path)
	if top.object {
		switch path {
		case "intervals.operations.errors", "totals.errors", "overall.errors":
			size = sizeMapEntry
			if top.n == 1 {
				size += sizeMap
			}
			return s.b.Entries, "error codes of an operation", size
		}
		return s.b.Entries, "entries in a list or map", sizeValue
	}
	switch path {
	case "streams":
		if top.path == "streams" {
			return MaxStreams, "stream sections", 2 * sizeStream
		}
	case "intervals":
		return s.b.Intervals, "intervals", 2 * sizeInterval
	case "intervals.operations":
		return s.b.Operations, "operations in an interval", 2 * sizeIntervalOp
	case "totals", "spec.operations":
		return s.b.Operations, "operations", 2 * sizeOperation
	case "shards":
		return s.b.Shards, "shards", 2 * sizeShard
	}
	return s.b.Entries, "entries in a list or map", sizeValue
}

// stripStream is path with a stream section's prefix taken off: the
// section's "streams.intervals" is limited as a document's "intervals".
func stripStream(path string) string { return strings.TrimPrefix(path, "streams.") }

func (s *scan) charge(n int64) error {
	s.memory += n
	if s.memory > s.b.Memory {
		return &BudgetError{What: "bytes of memory once decoded", Limit: s.b.Memory}
	}
	return nil
}
