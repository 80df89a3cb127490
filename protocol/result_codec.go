package protocol

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spanbench/spanbench/load/result"
)

// MaxResultBytes is the most a compressed result may take: a ConfigMap
// holds at most 1 MiB, and the object needs some room besides.
const MaxResultBytes = 900 << 10

// maxCoarsening bounds how far EncodeResult coarsens a result's intervals
// to make it fit: 10 s intervals become at most 10m40s.
const maxCoarsening = 64

// EncodeResult compresses a result for a ConfigMap (a shard's, or the
// run's merged report). A result too large for one (a long run with many
// operations) has its intervals coarsened, by 2, 4, ... up to 64, until it
// fits: the totals are exact still, the time series coarser, and the
// result says so in a note. One that does not fit even then is refused. d
// is not modified.
func EncodeResult(d *result.Document) ([]byte, error) {
	b, err := compress(d)
	for factor := 2; err == nil && len(b) > MaxResultBytes && factor <= maxCoarsening; factor *= 2 {
		var c *result.Document
		if c, err = d.Coarsened(factor); err == nil {
			b, err = compress(c)
		}
	}
	switch {
	case err != nil:
		return nil, err
	case len(b) > MaxResultBytes:
		return nil, fmt.Errorf("the result is %d KiB compressed even with intervals %d times longer, more than the %d KiB a ConfigMap holds; "+
			"use a longer workload.interval or fewer operations", len(b)>>10, maxCoarsening, MaxResultBytes>>10)
	}
	return b, nil
}

// compress is d as gzipped JSON.
func compress(d *result.Document) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(d); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// DecodeResult reads a result EncodeResult wrote. The data come from a pod
// and are untrusted: size, gzip, JSON and schema version are all checked.
func DecodeResult(b []byte) (*result.Document, error) {
	if len(b) > MaxResultBytes {
		return nil, fmt.Errorf("the result is %d bytes, more than %d", len(b), MaxResultBytes)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("the result is not gzip: %w", err)
	}
	// Bound the decompressed size too: a small gzip can expand enormously.
	return result.Read(io.LimitReader(zr, result.MaxDocumentBytes+1))
}
