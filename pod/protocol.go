// Package shard is the pod side of a BenchmarkRun. A loader pod (Load)
// loads its slice of the dataset; a runner pod (Run) reads the run's
// control ConfigMap, connects, reports ready, waits for the common start
// time, runs its shard of the load and writes its result durably into its
// own shard ConfigMap.
//
// The protocol between the controller and the pods is only ConfigMaps
// (RBAC can confine each run's pods to its own objects by name):
//
//	<run>-control   written by the controller:
//	                  data["control.json"]  Control: the resolved spec
//	                  data["startTime"]     RFC 3339 start instant, once all
//	                                        shards are ready
//	<run>-load-<i>  created empty by the controller, written by loader i
//	                (only when the database does not hold the dataset):
//	                  data["loaded"]        rows of its slice loaded so far
//	                                        (decimal)
//	                  data["resumeFrom"]    every row of the slice below this
//	                                        one is loaded: a retry starts there
//	                  data["state"]         Loading, then Succeeded or Failed
//	                                        (a retried loader resumes)
//	                  data["message"]       why it failed (no credentials)
//	<run>-shard-<i> created empty by the controller, written by runner i:
//	                  data["ready"]         RFC 3339 time the runner was ready
//	                  data["state"]         Succeeded or Failed, at the end
//	                  data["message"]       why it failed (no credentials)
//	                  binaryData["result.json.gz"]  the shard's result
package pod

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/load/result"
)

// Keys of the control ConfigMap.
const (
	KeyControl   = "control.json"
	KeyStartTime = "startTime"
)

// Keys of a shard or loader ConfigMap.
const (
	KeyLoaded     = "loaded"
	KeyResumeFrom = "resumeFrom"
	KeyRetries    = "retries"
	KeyResumedAt  = "resumedAt"
	KeyReady      = "ready"
	KeyState      = "state"
	KeyMessage    = "message"
	KeyResult     = "result.json.gz"
)

// States a pod reports in KeyState. Only loaders report StateLoading.
const (
	StateLoading   = "Loading"
	StateSucceeded = "Succeeded"
	StateFailed    = "Failed"
)

// LabelShard carries a shard ConfigMap's index.
const LabelShard = "bench.spanbench.io/shard"

// MaxResultBytes is the most a compressed shard result may take: a
// ConfigMap holds at most 1 MiB, and the object needs some room besides.
const MaxResultBytes = 900 << 10

// Control is what the controller tells every runner of a run.
type Control struct {
	// Run is the BenchmarkRun's name; Namespace its namespace.
	Run, Namespace string
	// Shards is the number of runners.
	Shards int
	// Target is the Spanner target, without credentials.
	Target v1alpha1.TargetSpec
	// Workload is the resolved (defaulted) workload.
	Workload v1alpha1.WorkloadSpec
	// Region is where the runners run, recorded with the results.
	Region string
}

// ControlConfigMapName names a run's control ConfigMap.
func ControlConfigMapName(run string) string { return run + "-control" }

// ShardConfigMapName names shard i's ConfigMap.
func ShardConfigMapName(run string, i int) string { return fmt.Sprintf("%s-shard-%d", run, i) }

// LoaderConfigMapName names loader i's ConfigMap.
func LoaderConfigMapName(run string, i int) string { return fmt.Sprintf("%s-load-%d", run, i) }

// maxCoarsening bounds how far EncodeResult coarsens a result's intervals
// to make it fit: 10 s intervals become at most 10m40s.
const maxCoarsening = 64

// EncodeResult compresses a result for a ConfigMap. A result too large for
// one (a long run with many operations) has its intervals coarsened, by 2,
// 4, ... up to 64, until it fits: the totals are exact still, the time
// series coarser, and the result says so in a note. One that does not fit
// even then is refused. d is not modified.
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

// DecodeResult reads a shard result. The data come from a pod and are
// untrusted: size, gzip, JSON and schema version are all checked.
func DecodeResult(b []byte) (*result.Document, error) {
	if len(b) > MaxResultBytes {
		return nil, fmt.Errorf("shard result is %d bytes, more than %d", len(b), MaxResultBytes)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("shard result is not gzip: %w", err)
	}
	// Bound the decompressed size too: a small gzip can expand enormously.
	d, err := result.Read(io.LimitReader(zr, result.MaxDocumentBytes+1))
	if err != nil {
		return nil, err
	}
	return d, nil
}

// FormatTime and ParseTime encode protocol timestamps.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// ParseTime parses a protocol timestamp.
func ParseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }
