package pod

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/runner/protocol/bucket"
)

// Bounds of the runner's calls to the API server.
const (
	// callTimeout bounds one call, so a hung connection becomes a retry.
	callTimeout = 15 * time.Second
	// writeAttempts bounds the tries of one write or read of the shard map.
	writeAttempts = 6
	// firstBackoff and maxBackoff space the tries.
	firstBackoff = 200 * time.Millisecond
	maxBackoff   = 5 * time.Second
	// finalWriteTimeout bounds the last write (result or failure), which
	// runs even when the runner's context has ended: the pod is going away
	// and the controller must still learn what happened. It retries
	// transient errors for all of this time (patchFinal), so that a result
	// outlives an API server restart (measured on the local cluster: down
	// 19 s; docs/security.md).
	finalWriteTimeout = time.Minute
)

// backoff doubles a pause up to maxBackoff.
type backoff struct{ next time.Duration }

// sleep waits for the next pause or the end of ctx.
func (b *backoff) sleep(ctx context.Context) error {
	if b.next == 0 {
		b.next = firstBackoff
	}
	t := time.NewTimer(b.next)
	defer t.Stop()
	b.next = min(2*b.next, maxBackoff)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retriable tells a transient failure (conflict, throttling, timeout,
// server or connection error) from one a retry cannot fix.
func retriable(err error) bool {
	var perm *permanentError
	switch {
	case errors.As(err, &perm), apierrors.IsNotFound(err), apierrors.IsForbidden(err), apierrors.IsUnauthorized(err),
		apierrors.IsInvalid(err), apierrors.IsBadRequest(err), apierrors.IsRequestEntityTooLargeError(err),
		apierrors.IsMethodNotSupported(err), apierrors.IsGone(err),
		errors.Is(err, context.Canceled):
		return false
	}
	return true
}

// untilDone as a number of attempts retries transient failures until the
// context ends.
const untilDone = 0

// withRetries calls fn up to attempts times (untilDone: until ctx ends)
// while it fails transiently, each call bounded by callTimeout.
func withRetries(ctx context.Context, attempts int, fn func(context.Context) error) error {
	var b backoff
	var err error
	for attempt := 1; ; attempt++ {
		callCtx, cancel := context.WithTimeout(ctx, callTimeout)
		err = fn(callCtx)
		cancel()
		if err == nil || !retriable(err) || attempt == attempts {
			return err
		}
		if b.sleep(ctx) != nil {
			return err
		}
	}
}

// waitForControl gets the control ConfigMap, retrying every error until
// ControlTimeout: the map may not exist yet, and a fresh RoleBinding can
// take a moment to be honoured (Forbidden).
func (r *runner) waitForControl(ctx context.Context) (*corev1.ConfigMap, error) {
	waitCtx, cancel := context.WithTimeout(ctx, r.o.ControlTimeout)
	defer cancel()
	var b backoff
	for {
		var cm corev1.ConfigMap
		callCtx, cancelCall := context.WithTimeout(waitCtx, callTimeout)
		err := r.c.Get(callCtx, r.control, &cm)
		cancelCall()
		if err == nil {
			return &cm, nil
		}
		r.log.V(1).Info("control ConfigMap not readable yet", "configMap", r.control.Name, "error", err.Error())
		if b.sleep(waitCtx) != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("interrupted while waiting for ConfigMap %s: %w", r.control, ctx.Err())
			}
			return nil, fmt.Errorf("ConfigMap %s was not readable within %s: %w", r.control, r.o.ControlTimeout, err)
		}
	}
}

// getOwn reads the pod's own ConfigMap (its shard or loader map).
func (r *runner) getOwn(ctx context.Context) (*corev1.ConfigMap, error) {
	return getMap(ctx, r.c, r.own, writeAttempts)
}

// getMap reads a ConfigMap, retrying transient errors up to attempts
// times (untilDone: until ctx ends).
func getMap(ctx context.Context, c client.Client, key client.ObjectKey, attempts int) (*corev1.ConfigMap, error) {
	var cm corev1.ConfigMap
	err := withRetries(ctx, attempts, func(ctx context.Context) error { return c.Get(ctx, key, &cm) })
	if err != nil {
		return nil, fmt.Errorf("reading ConfigMap %s: %w", key, err)
	}
	return &cm, nil
}

// patchOwn writes a report (protocol.Maps) into the pod's own ConfigMap as
// a JSON merge patch, retrying transient errors writeAttempts times: it
// needs no resourceVersion, so it cannot conflict with the controller's
// writes (labels, owner references), and it never creates the object: the
// pods' Role has no create verb. When it returns nil the write is stored.
func (r *runner) patchOwn(ctx context.Context, m protocol.Maps) error {
	return patchMap(ctx, r.c, r.own, writeAttempts, m)
}

// patchFinal is patchOwn for the pod's last report (its failure, a
// loader's done; the result goes through StoreShardResult): it retries
// transient errors until ctx ends (a durable one, finalWriteTimeout), not
// writeAttempts times, which an API server restart outlasts; a result
// given up on is a run lost.
func (r *runner) patchFinal(ctx context.Context, m protocol.Maps) error {
	return patchMap(ctx, r.c, r.own, untilDone, m)
}

// patchMap is patchOwn of the ConfigMap key, retrying transient errors up
// to attempts times (untilDone: until ctx ends).
func patchMap(ctx context.Context, c client.Client, key client.ObjectKey, attempts int, m protocol.Maps) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	err = withRetries(ctx, attempts, func(ctx context.Context) error {
		return c.Patch(ctx, cm, client.RawPatch(types.MergePatchType, body))
	})
	if err != nil {
		return fmt.Errorf("writing ConfigMap %s: %w", key, err)
	}
	return nil
}

// durable is a context for a final write: it outlives ctx (a SIGTERM must
// not lose the result or the failure) but is bounded.
func durable(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), finalWriteTimeout)
}

// waitForStart polls the control ConfigMap until the controller publishes
// the start time, for at most ReadyTimeout. A missing or forbidden control
// map ends the wait at once: the run was deleted.
func (r *runner) waitForStart(ctx context.Context) (time.Time, error) {
	waitCtx, cancel := context.WithTimeout(ctx, r.o.ReadyTimeout)
	defer cancel()
	tick := time.NewTicker(r.o.PollInterval)
	defer tick.Stop()
	for {
		start, ok, err := r.readStart(waitCtx)
		if ok || err != nil {
			return start, err
		}
		select {
		case <-waitCtx.Done():
			if ctx.Err() != nil {
				return time.Time{}, fmt.Errorf("interrupted while waiting for the start time: %w", ctx.Err())
			}
			return time.Time{}, fmt.Errorf("the runners never got a start time: ConfigMap %s had no %s %s after shard %d reported ready "+
				"(did another shard fail to get ready?)", r.control, protocol.KeyStartTime, r.o.ReadyTimeout, r.o.Index)
		case <-tick.C:
		}
	}
}

// readStart reads the start time once; transient errors read as "not yet".
func (r *runner) readStart(ctx context.Context) (time.Time, bool, error) {
	var cm corev1.ConfigMap
	callCtx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := r.c.Get(callCtx, r.control, &cm); err != nil {
		if retriable(err) {
			r.log.V(1).Info("reading the start time failed; retrying", "error", err.Error())
			return time.Time{}, false, nil
		}
		return time.Time{}, false, fmt.Errorf("reading ConfigMap %s while waiting for the start time: %w", r.control, err)
	}
	start, ok, err := protocol.DecodeStart(cm.Data)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("ConfigMap %s: %w", r.control, err)
	}
	return start, ok, nil
}

// failureReport is the pod's own report with the failure recorded. The
// report is read afresh, so that what it held survives the failure: a
// loader's resume watermark and retries (the Job's retry resumes there), a
// runner's ready time. An unreadable report is replaced.
func (r *runner) failureReport(ctx context.Context, message string) protocol.Maps {
	var data map[string]string
	if cm, err := r.getOwn(ctx); err == nil {
		data = cm.Data
	}
	if r.loads {
		rep, err := protocol.DecodeLoaderReport(data)
		if err != nil {
			rep = protocol.LoaderReport{}
		}
		rep.State, rep.Message = protocol.StateFailed, message
		return protocol.EncodeLoaderReport(rep)
	}
	rep, err := protocol.DecodeShardReport(data, nil)
	if err != nil {
		rep = protocol.ShardReport{}
	}
	rep.State, rep.Message = protocol.StateFailed, message
	return protocol.EncodeShardReport(rep)
}

// ResultObject is where a runner stores its shard's result when the
// manager has a results bucket: the bucket, and the object's key
// (bucket.ShardKey).
type ResultObject struct {
	Bucket *bucket.Bucket
	Key    string
}

// StoreShardResult stores doc as the result of the shard whose ConfigMap
// is own, with its ready time and the Succeeded state, acting through c
// (the runner's service account). With obj (a results bucket), the result
// is one object of the bucket, written first (protocol.StoreResultObject),
// and the ConfigMap gets a pointer to it. Without, a result too long for
// the shard's ConfigMap goes into chunk ConfigMaps first
// (protocol.StoreResult), each owned by what owns the shard's ConfigMap
// (the run), so that they are deleted with it. Then the state and the
// result, its chunks' head or its pointer go in one patch, so the
// controller never sees one without the other, nor a head before its
// chunks, nor a pointer before its object. It is the pod's last write:
// every call retries transient errors until ctx ends, so ctx must be
// bounded (the runner's is durable: finalWriteTimeout), and an API server
// restart does not lose the result. It returns how the result was stored,
// for the log.
func StoreShardResult(ctx context.Context, c client.Client, own client.ObjectKey, ready time.Time, doc *result.Document, obj *ResultObject) (protocol.StoredResult, error) {
	var stored protocol.StoredResult
	var err error
	if obj != nil {
		stored, err = storeObject(ctx, obj, doc)
	} else {
		stored, err = storeInConfigMaps(ctx, c, own, doc)
	}
	if err != nil {
		return protocol.StoredResult{}, err
	}
	p := protocol.EncodeShardReport(protocol.ShardReport{Ready: ready, State: protocol.StateSucceeded,
		Result: stored.Inline, Chunked: stored.Head, Object: stored.Object})
	if err := patchMap(ctx, c, own, untilDone, p); err != nil {
		return protocol.StoredResult{}, fmt.Errorf("storing the result: %w", err)
	}
	return stored, nil
}

// storeInConfigMaps encodes doc for the shard's ConfigMap, inline, and
// stores its chunks first when it is too long.
func storeInConfigMaps(ctx context.Context, c client.Client, own client.ObjectKey, doc *result.Document) (protocol.StoredResult, error) {
	enc, err := protocol.EncodeResult(doc)
	if err != nil {
		return protocol.StoredResult{}, err
	}
	if len(enc) <= protocol.MaxResultBytes {
		return protocol.StoredResult{Inline: enc}, nil
	}
	stored, err := storeChunks(ctx, c, own, doc.Run, enc)
	if err != nil {
		return protocol.StoredResult{}, fmt.Errorf("storing the result: %w", err)
	}
	return stored, nil
}

// storeObject writes doc as the object obj names, retrying the store's
// transient errors; a result over its limits is not retried.
func storeObject(ctx context.Context, obj *ResultObject, doc *result.Document) (protocol.StoredResult, error) {
	var p bucket.Pointer
	err := withRetries(ctx, untilDone, func(ctx context.Context) error {
		var err error
		p, err = protocol.StoreResultObject(ctx, obj.Bucket, obj.Key, doc, protocol.ShardLimits())
		var tooLarge *bucket.TooLargeError
		var budget *result.BudgetError
		if errors.As(err, &tooLarge) || errors.As(err, &budget) {
			return &permanentError{err: err}
		}
		return err
	})
	var perm *permanentError
	if errors.As(err, &perm) {
		err = perm.err
	}
	if err != nil {
		return protocol.StoredResult{}, fmt.Errorf("storing the result in the results bucket: %w", err)
	}
	return protocol.StoredResult{Object: &p}, nil
}

// permanentError is an error withRetries does not retry.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }

// storeChunks lays a long encoded result of run out in chunks and stores
// them, labelled with the run so that the controller deletes them once the
// run has ended.
func storeChunks(ctx context.Context, c client.Client, own client.ObjectKey, run string, enc []byte) (protocol.StoredResult, error) {
	head, err := getMap(ctx, c, own, untilDone)
	if err != nil {
		return protocol.StoredResult{}, err
	}
	stored, err := protocol.StoreResult(enc, protocol.ShardLimits(), own.Namespace, own.Name, chunkOwners(head),
		map[string]string{protocol.LabelShardChunkOfRun: run})
	if err != nil {
		return protocol.StoredResult{}, err
	}
	for _, cm := range stored.Chunks {
		err := withRetries(ctx, untilDone, func(ctx context.Context) error { return protocol.ApplyChunk(ctx, c, cm, chunkFieldOwner) })
		if err != nil {
			return protocol.StoredResult{}, fmt.Errorf("writing ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
		}
	}
	return stored, nil
}

// chunkFieldOwner is the runner's field manager of its chunk ConfigMaps.
const chunkFieldOwner = "spanbench-runner"

// chunkOwners are the owner references of a shard's chunks: the shard
// ConfigMap's own (the run), without blockOwnerDeletion, which would need
// a permission on the run the runner has not; the shard ConfigMap itself
// when it has none.
func chunkOwners(own *corev1.ConfigMap) []metav1.OwnerReference {
	var refs []metav1.OwnerReference
	for _, o := range own.OwnerReferences {
		o.BlockOwnerDeletion, o.Controller = nil, nil
		refs = append(refs, o)
	}
	if len(refs) == 0 {
		refs = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: own.Name, UID: own.UID}}
	}
	return refs
}
