package protocol

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/protocol/bucket"
	"github.com/spanbench/spanbench/runner/protocol/chunks"
)

// A result (a shard's, or the run's merged report) is stored under a head
// ConfigMap: inline in one of the head's keys when it fits MaxResultBytes,
// as every release wrote it, else in chunk ConfigMaps (package chunks),
// which the writer stores first, and the chunks' Head in the head's data,
// stored last. Chunk ConfigMaps carry no run label: the manager's cache
// holds only labelled ConfigMaps, and must not hold megabytes of results;
// they are read through an uncached reader, one at a time.

// Labels of chunk ConfigMaps.
const (
	// LabelChunkOf names a chunk's head ConfigMap.
	LabelChunkOf = "bench.spanbench.io/chunk-of"
	// LabelShardChunkOfRun names the run of a shard result's chunk, so
	// that the controller finds them all to delete once the run has
	// ended.
	LabelShardChunkOfRun = "bench.spanbench.io/shard-chunk-of-run"
)

// StoredResult is an encoded result laid out for its ConfigMaps: Inline
// for the head's key, or the Head for the head's data and the Chunks to
// store before it; or, stored in the results bucket, the Object's
// pointer for the head's data.
type StoredResult struct {
	Inline []byte
	Head   *chunks.Head
	Chunks []*corev1.ConfigMap
	Object *bucket.Pointer
}

// StoreResult lays out enc (EncodeResult's or EncodeReport's, with their
// limits) under the head ConfigMap namespace/head. owners become each
// chunk's owner references, so that the chunks go with what owns them;
// labels are added to LabelChunkOf.
func StoreResult(enc []byte, limits ResultLimits, namespace, head string, owners []metav1.OwnerReference, labels map[string]string) (StoredResult, error) {
	if len(enc) <= MaxResultBytes {
		return StoredResult{Inline: enc}, nil
	}
	h, parts, err := chunks.Split(enc, limits.MaxChunks)
	if err != nil {
		return StoredResult{}, err
	}
	s := StoredResult{Head: &h}
	for k, b := range parts {
		l := map[string]string{LabelChunkOf: head}
		maps.Copy(l, labels)
		s.Chunks = append(s.Chunks, &corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: chunks.Name(head, k),
				Labels: l, OwnerReferences: owners},
			BinaryData: map[string][]byte{chunks.KeyChunk: b},
		})
	}
	return s, nil
}

// ApplyChunk stores a chunk ConfigMap by server-side apply, creating or
// replacing it. It is the one write that creates an object RBAC can
// confine by name: the API server authorizes an apply that creates as
// "create" of that name, where a plain create has no name to check.
func ApplyChunk(ctx context.Context, c client.Writer, cm *corev1.ConfigMap, fieldOwner string) error {
	body, err := json.Marshal(cm)
	if err != nil {
		return err
	}
	target := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name}}
	return c.Patch(ctx, target, client.RawPatch(types.ApplyPatchType, body), client.ForceOwnership, client.FieldOwner(fieldOwner))
}

// UnavailableError says a chunk or an object could not be read for a reason a retry may
// fix (the API server's, not the chunk's): the reader retries later rather
// than judge the result.
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string { return "reading a stored result: " + e.Err.Error() }

func (e *UnavailableError) Unwrap() error { return e.Err }

// LoadResult reads the result stored under head within limits: inline in
// its binaryData key, in chunks its data describe, read through c one at
// a time, each checked against the head before it is decompressed, or in
// the object of b its data point at (LoadObject); the whole decoded
// within the limits' budget. A chunk missing or altered is a
// *chunks.ChunkError naming it and its ConfigMap, an object a
// *bucket.ObjectError; an API or store error other than not-found an
// *UnavailableError. b may be nil when no results bucket is configured:
// a pointer is then an error saying so.
func LoadResult(ctx context.Context, c client.Reader, b *bucket.Bucket, head *corev1.ConfigMap, key string, limits ResultLimits) (*result.Document, error) {
	h, chunked, err := chunks.DecodeHead(head.Data, limits.MaxChunks)
	if err != nil {
		return nil, err
	}
	p, pointed, err := bucket.DecodePointer(head.Data, limits.MaxObjectBytes())
	if err != nil {
		return nil, err
	}
	inline, hasInline := head.BinaryData[key]
	switch {
	case countTrue(chunked, hasInline, pointed) > 1:
		return nil, fmt.Errorf("ConfigMap %s holds the result in more than one way (inline in %s, in chunks, in an object)", head.Name, key)
	case hasInline:
		return decodeInline(inline, limits.Budget)
	case pointed && b == nil:
		return nil, fmt.Errorf("ConfigMap %s points at object %s of the results bucket, which this reader was not given (the manager's --results-bucket)", head.Name, p.Key)
	case pointed:
		return LoadObject(ctx, b, p, limits.Budget)
	case !chunked:
		return nil, fmt.Errorf("ConfigMap %s has no %s", head.Name, key)
	}
	return LoadChunked(ctx, c, head.Namespace, head.Name, h, limits.Budget)
}

func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// LoadChunked reads the chunked result h describes, under the head
// ConfigMap namespace/head, within budget.
func LoadChunked(ctx context.Context, c client.Reader, namespace, head string, h chunks.Head, budget result.Budget) (*result.Document, error) {
	fetch := func(k int) ([]byte, error) {
		name := chunks.Name(head, k)
		cm := &corev1.ConfigMap{}
		err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cm)
		switch {
		case apierrors.IsNotFound(err):
			return nil, fmt.Errorf("is missing")
		case err != nil:
			return nil, &UnavailableError{Err: err}
		}
		b, ok := cm.BinaryData[chunks.KeyChunk]
		if !ok {
			return nil, fmt.Errorf("has no key %s", chunks.KeyChunk)
		}
		return b, nil
	}
	return decodeResultFrom(chunks.NewReader(h, head, fetch), budget)
}
