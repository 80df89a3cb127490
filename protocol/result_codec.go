package protocol

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spanbench/spanbench/load/result"
	"github.com/spanbench/spanbench/protocol/chunks"
)

// MaxResultBytes is the most a compressed result may take inline, in one
// key of its ConfigMap next to the report's other keys: a ConfigMap holds
// at most 1 MiB, and the object needs some room besides. A longer result
// is stored in chunks (StoreResult).
const MaxResultBytes = 900 << 10

// MaxResultJSONBytes bounds a result's JSON once decompressed: gzip
// expands a small input enormously (a 432 KiB shard to 60 MB), so the
// reader stops there, and the writer refuses a result above it. A dense
// 30-minute shard of 10 operations (50,000 samples per interval and
// operation) is 21 MiB.
const MaxResultJSONBytes = 32 << 20

// ResultBudget is the decode budget of a result from ConfigMaps:
// MaxResultJSONBytes of JSON, at most 64 MiB decoded. EncodeResult
// writes only what fits it; DecodeResult refuses the rest before decoding.
func ResultBudget() result.Budget {
	b := result.FileBudget()
	b.Bytes, b.Memory = MaxResultJSONBytes, 64<<20
	return b
}

// EncodeResult compresses a result for ConfigMaps (a shard's, or the run's
// merged report), whole: a result whose JSON exceeds ResultBudget or whose
// compressed form exceeds chunks.MaxTotal is refused, never coarsened
// behind the user's back. A coarser time series is the user's choice, a
// longer spec.workload.interval.
func EncodeResult(d *result.Document) ([]byte, error) {
	js, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	if err := ResultBudget().Fits(js); err != nil {
		return nil, fmt.Errorf("%w; choose a longer spec.workload.interval or fewer operations", err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(js); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if buf.Len() > chunks.MaxTotal {
		return nil, fmt.Errorf("%w; choose a longer spec.workload.interval or fewer operations", &chunks.TooLargeError{Bytes: buf.Len()})
	}
	return buf.Bytes(), nil
}

// DecodeResult reads a result EncodeResult wrote and stored inline. The
// data come from a pod and are untrusted: size, gzip, JSON and schema
// version are all checked, and the decompressed JSON is held to
// ResultBudget before it is decoded. That the result belongs to its run is
// for result.Expect to check.
func DecodeResult(b []byte) (*result.Document, error) {
	if len(b) > MaxResultBytes {
		return nil, fmt.Errorf("the result is %d bytes, more than %d", len(b), MaxResultBytes)
	}
	return decodeResultFrom(bytes.NewReader(b))
}

// decodeResultFrom reads a compressed result from r within ResultBudget.
func decodeResultFrom(r io.Reader) (*result.Document, error) {
	zr, err := gzip.NewReader(r)
	var chunk *chunks.ChunkError
	switch {
	case errors.As(err, &chunk):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("the result is not gzip: %w", err)
	}
	// ReadWithin bounds the decompressed size too: a small gzip can expand
	// enormously.
	return result.ReadWithin(zr, ResultBudget())
}
