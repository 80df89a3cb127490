package protocol

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/protocol/bucket"
	"github.com/spanbench/spanbench/runner/protocol/chunks"
)

// MaxResultBytes is the most a compressed result may take inline, in one
// key of its ConfigMap next to the report's other keys: a ConfigMap holds
// at most 1 MiB, and the object needs some room besides. A longer result
// is stored in chunks (StoreResult).
const MaxResultBytes = 900 << 10

// MaxResultJSONBytes bounds a shard result's JSON once decompressed: gzip
// expands a small input enormously (a 432 KiB shard to 60 MB), so the
// reader stops there, and the writer refuses a result above it. A dense
// 30-minute shard of 10 operations (50,000 samples per interval and
// operation) is 21 MiB.
const MaxResultJSONBytes = 32 << 20

// ResultLimits are what one kind of stored result may take: the budget it
// is decoded within, and the most chunks it may be stored in.
type ResultLimits struct {
	Budget    result.Budget
	MaxChunks int
}

// ShardLimits are a shard result's: MaxResultJSONBytes of JSON, at most
// 64 MiB decoded, in at most chunks.MaxShardChunks chunks. The controller
// decodes one shard at a time while it holds the merged histograms (up to
// MaxMergedHistogramBytes): the sum stays within the manager's 256 MiB.
func ShardLimits() ResultLimits {
	return ResultLimits{Budget: ResultBudget(), MaxChunks: chunks.MaxShardChunks}
}

// ReportLimits are a run's merged report's: its merged histograms hold
// more buckets than a shard's (a dense 30-minute 10-operation report is
// 46 MiB of JSON where one shard is 21), so result.MaxDocumentBytes of
// JSON, at most 128 MiB decoded, in at most chunks.MaxReportChunks chunks.
func ReportLimits() ResultLimits {
	b := result.FileBudget()
	b.Memory = 128 << 20
	return ResultLimits{Budget: b, MaxChunks: chunks.MaxReportChunks}
}

// ResultBudget is the decode budget of a shard result: MaxResultJSONBytes
// of JSON, at most 64 MiB decoded. EncodeResult writes only what fits it;
// DecodeResult refuses the rest before decoding.
func ResultBudget() result.Budget {
	b := result.FileBudget()
	b.Bytes, b.Memory = MaxResultJSONBytes, 64<<20
	return b
}

// EncodeResult compresses a shard's result for its ConfigMaps, whole,
// within ShardLimits; EncodeReport a run's merged report within
// ReportLimits. A result over its limits is refused, never coarsened
// behind the user's back: a coarser time series is the user's choice, a
// longer spec.workload.interval.
func EncodeResult(d *result.Document) ([]byte, error) { return encode(d, ShardLimits()) }

// EncodeReport is EncodeResult for a run's merged report.
func EncodeReport(d *result.Document) ([]byte, error) { return encode(d, ReportLimits()) }

func encode(d *result.Document, limits ResultLimits) ([]byte, error) {
	var buf bytes.Buffer
	if err := encodeTo(&buf, d, limits.Budget); err != nil {
		return nil, err
	}
	if buf.Len() > limits.MaxChunks*chunks.MaxBytes {
		err := &chunks.TooLargeError{Bytes: buf.Len(), MaxChunks: limits.MaxChunks}
		return nil, fmt.Errorf("%w; choose a longer spec.workload.interval or fewer operations", err)
	}
	return buf.Bytes(), nil
}

// encodeTo writes d as gzipped JSON to w, refused when its JSON does not
// fit budget: the reader's, so that nothing is written that the reader
// would refuse.
func encodeTo(w io.Writer, d *result.Document, budget result.Budget) error {
	js, err := json.Marshal(d)
	if err != nil {
		return err
	}
	if err := budget.Fits(js); err != nil {
		return fmt.Errorf("%w; choose a longer spec.workload.interval or fewer operations", err)
	}
	zw := gzip.NewWriter(w)
	if _, err := zw.Write(js); err != nil {
		return err
	}
	return zw.Close()
}

// MaxObjectBytes is the most a result of these limits may take as an
// object of the results bucket (package bucket), compressed: its JSON's
// bound, which gzipped JSON never reaches. The decode budget, not the
// store, bounds a result there: the controller decodes one shard at a
// time within the manager's memory.
func (l ResultLimits) MaxObjectBytes() int64 { return l.Budget.Bytes }

// DecodeResult reads a result EncodeResult wrote and stored inline. The
// data come from a pod and are untrusted: size, gzip, JSON and schema
// version are all checked, and the decompressed JSON is held to
// ResultBudget before it is decoded. That the result belongs to its run is
// for result.Expect to check.
func DecodeResult(b []byte) (*result.Document, error) { return decodeInline(b, ResultBudget()) }

// decodeInline reads a compressed result stored inline within budget.
func decodeInline(b []byte, budget result.Budget) (*result.Document, error) {
	if len(b) > MaxResultBytes {
		return nil, fmt.Errorf("the result is %d bytes, more than %d", len(b), MaxResultBytes)
	}
	return decodeResultFrom(bytes.NewReader(b), budget)
}

// decodeResultFrom reads a compressed result from r within budget.
func decodeResultFrom(r io.Reader, budget result.Budget) (*result.Document, error) {
	zr, err := gzip.NewReader(r)
	var chunk *chunks.ChunkError
	var object *bucket.ObjectError
	switch {
	case errors.As(err, &chunk), errors.As(err, &object):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("the result is not gzip: %w", err)
	}
	// ReadWithin bounds the decompressed size too: a small gzip can expand
	// enormously.
	return result.ReadWithin(zr, budget)
}
