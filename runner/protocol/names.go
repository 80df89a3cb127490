package protocol

import (
	"fmt"
	"strconv"

	"github.com/spanbench/spanbench/runner/protocol/bucket"
	"github.com/spanbench/spanbench/runner/protocol/chunks"
)

// Version is the protocol version this build speaks. The controller writes
// it into the control document, pods into their reports; a reader refuses
// any other (a missing version is version 1, the format written before the
// field existed).
const Version = 1

// LabelShard carries a shard ConfigMap's index.
const LabelShard = "bench.spanbench.io/shard"

// Keys of the control ConfigMap.
const (
	KeyControl   = "control.json"
	KeyStartTime = "startTime"
)

// Keys of a loader or shard ConfigMap.
const (
	KeyVersion    = "version"
	KeyState      = "state"
	KeyMessage    = "message"
	KeyLoaded     = "loaded"
	KeyResumeFrom = "resumeFrom"
	KeyRetries    = "retries"
	KeyResumedAt  = "resumedAt"
	KeyReady      = "ready"
	KeyResult     = "result.json.gz"
)

// ControlKeys, LoaderKeys and ShardKeys are every key of each map, in the
// order the protocol table lists them.
func ControlKeys() []string {
	return []string{KeyControl, KeyStartTime, KeySearchStep, KeySearchJudged}
}

// LoaderKeys are the keys of a loader ConfigMap's data.
func LoaderKeys() []string {
	return []string{KeyVersion, KeyState, KeyMessage, KeyLoaded, KeyResumeFrom, KeyRetries, KeyResumedAt}
}

// ShardKeys are the keys of a shard ConfigMap: data (a chunked result's
// head among them), then binaryData.
func ShardKeys() []string {
	keys := append([]string{KeyVersion, KeyReady, KeyState, KeyMessage, KeyLive, KeySearchReport}, chunks.HeadKeys()...)
	return append(append(keys, bucket.PointerKeys()...), KeyResult)
}

// ChunkKeys are the keys of a chunk ConfigMap: binaryData.
func ChunkKeys() []string { return []string{chunks.KeyChunk} }

// State is what a pod reports in KeyState.
type State string

// States a pod reports. The zero State is a pod that has not reported one
// yet (a runner before its end). Only loaders report StateLoading.
const (
	StateNone      State = ""
	StateLoading   State = "Loading"
	StateSucceeded State = "Succeeded"
	StateFailed    State = "Failed"
)

// States are the states a pod may report, for the protocol table.
func States() []State { return []State{StateLoading, StateSucceeded, StateFailed} }

// Final says a pod has ended: it succeeded or failed.
func (s State) Final() bool { return s == StateSucceeded || s == StateFailed }

// ControlConfigMapName names a run's control ConfigMap.
func ControlConfigMapName(run string) string { return run + "-control" }

// ShardConfigMapName names shard i's ConfigMap.
func ShardConfigMapName(run string, i int) string { return fmt.Sprintf("%s-shard-%d", run, i) }

// ShardChunkNames are every name a chunk of shard i's result may take
// (chunks.MaxShardChunks of them), for the runners' Role.
func ShardChunkNames(run string, i int) []string {
	return chunks.Names(ShardConfigMapName(run, i), chunks.MaxShardChunks)
}

// LoaderConfigMapName names loader i's ConfigMap.
func LoaderConfigMapName(run string, i int) string { return fmt.Sprintf("%s-load-%d", run, i) }

// SliceBounds is loader i of n's share [from, to) of rows keys, so that
// the n slices cover every key exactly once: the loader loads it, and the
// controller names it when it reports a retry. It avoids i*rows, which
// could overflow.
func SliceBounds(rows int64, i, n int) (from, to int64) {
	at := func(i int) int64 {
		q, rem := rows/int64(n), rows%int64(n)
		return q*int64(i) + rem*int64(i)/int64(n)
	}
	return at(i), at(i + 1)
}

// ShardLabelValue is shard i's LabelShard value.
func ShardLabelValue(i int) string { return strconv.Itoa(i) }
