package protocol

import (
	"context"
	"errors"
	"io"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/protocol/bucket"
)

// With a results bucket configured on the manager, a result (a shard's,
// or the run's merged report) is one object of the bucket, whatever its
// length up to its limits' MaxObjectBytes, and its ConfigMap holds a
// bucket.Pointer to it instead of the result or its chunks: the writer
// stores the object first, the pointer last, so a reader that finds the
// pointer finds a whole object. Nothing of it goes into etcd.

// StoreResultObject writes d to object key of b, gzipped JSON streamed to
// the store, within limits (ShardLimits or ReportLimits): a result over
// them is refused, never coarsened. It returns the object's pointer.
func StoreResultObject(ctx context.Context, b *bucket.Bucket, key string, d *result.Document, limits ResultLimits) (bucket.Pointer, error) {
	return b.Write(ctx, key, limits.MaxObjectBytes(), func(w io.Writer) error { return encodeTo(w, d, limits.Budget) })
}

// LoadObject reads the result p points at from b within budget, streamed:
// its memory is the decode budget's, whatever the object's length. The
// object is read to its end, where its sha256 is checked, before the
// result is returned: a missing, truncated or altered object is a
// *bucket.ObjectError naming it, rather than whatever its decoding
// stumbled on; the store's own errors are an *UnavailableError.
func LoadObject(ctx context.Context, b *bucket.Bucket, p bucket.Pointer, budget result.Budget) (*result.Document, error) {
	r, err := b.NewReader(ctx, p)
	if err != nil {
		return nil, storeError(err)
	}
	defer func() { _ = r.Close() }()
	doc, decodeErr := decodeResultFrom(r, budget)
	if _, err := io.Copy(io.Discard, r); err != nil {
		return nil, storeError(err)
	}
	if decodeErr != nil {
		return nil, decodeErr
	}
	return doc, nil
}

// storeError is an error of reading an object: the object's own problem
// as it is, anything else (the store unreachable, a permission) an
// *UnavailableError, for a retry.
func storeError(err error) error {
	var object *bucket.ObjectError
	if errors.As(err, &object) {
		return err
	}
	return &UnavailableError{Err: err}
}
