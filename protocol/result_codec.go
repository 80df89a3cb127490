package protocol

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spanbench/spanbench/load/result"
)

// MaxResultBytes is the most a compressed result may take: a ConfigMap
// holds at most 1 MiB, and the object needs some room besides.
const MaxResultBytes = 900 << 10

// maxCoarsening bounds how far EncodeResult coarsens a result's intervals
// to make it fit: 10 s intervals become at most 10m40s.
const maxCoarsening = result.MaxCoarsening

// MaxResultJSONBytes bounds a result's JSON once decompressed: gzip
// expands a small input enormously (a 432 KiB shard to 60 MB), so the
// reader stops there, and the writer coarsens a result until it fits.
const MaxResultJSONBytes = 8 << 20

// ResultBudget is the decode budget of a result from a ConfigMap:
// MaxResultJSONBytes of JSON, at most 48 MiB decoded. EncodeResult
// writes only what fits it; DecodeResult refuses the rest before decoding.
func ResultBudget() result.Budget {
	b := result.FileBudget()
	b.Bytes, b.Memory = MaxResultJSONBytes, 48<<20
	return b
}

// EncodeResult compresses a result for a ConfigMap (a shard's, or the
// run's merged report). A result too large for one (a long run with many
// operations) has its intervals coarsened, by 2, 4, ... up to 64, until it
// fits: the totals are exact still, the time series coarser, and the
// result says so in a note. One that does not fit even then is refused. d
// is not modified.
func EncodeResult(d *result.Document) ([]byte, error) {
	b, err := compress(d)
	for factor := 2; tooLarge(err) && factor <= maxCoarsening; factor *= 2 {
		var c *result.Document
		if c, err = d.Coarsened(factor); err == nil {
			b, err = compress(c)
		}
	}
	if tooLarge(err) {
		return nil, fmt.Errorf("even with intervals %d times longer, %w; use a longer workload.interval or fewer operations", maxCoarsening, err)
	}
	return b, err
}

// errTooLarge says a result does not fit a ConfigMap or its reader's
// budget.
type errTooLarge struct{ why string }

func (e *errTooLarge) Error() string { return e.why }

func tooLarge(err error) bool {
	var t *errTooLarge
	return errors.As(err, &t)
}

// compress is d as gzipped JSON, or an *errTooLarge when the result would
// not fit its ConfigMap or DecodeResult would refuse it.
func compress(d *result.Document) ([]byte, error) {
	js, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	if err := ResultBudget().Fits(js); err != nil {
		return nil, &errTooLarge{why: err.Error()}
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(js); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if buf.Len() > MaxResultBytes {
		return nil, &errTooLarge{why: fmt.Sprintf("the result is %d KiB compressed, more than the %d KiB a ConfigMap holds", buf.Len()>>10, MaxResultBytes>>10)}
	}
	return buf.Bytes(), nil
}

// DecodeResult reads a result EncodeResult wrote. The data come from a pod
// and are untrusted: size, gzip, JSON and schema version are all checked,
// and the decompressed JSON is held to ResultBudget before it is decoded.
// That the result belongs to its run is for result.Expect to check.
func DecodeResult(b []byte) (*result.Document, error) {
	if len(b) > MaxResultBytes {
		return nil, fmt.Errorf("the result is %d bytes, more than %d", len(b), MaxResultBytes)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("the result is not gzip: %w", err)
	}
	// ReadWithin bounds the decompressed size too: a small gzip can expand
	// enormously.
	return result.ReadWithin(zr, ResultBudget())
}
