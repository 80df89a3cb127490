// Package result defines spanbench's result document: what one runner (a
// shard) measured, or the exact merge of several, with everything the result
// depends on. The format is versioned and documented in docs/result-format.md.
//
// Intervals are the source of truth: each holds, per operation, the counts
// and the encoded HDR histograms of the operations intended in it (sent in
// it, in a closed loop), wherever they completed. Totals are derived
// from the intervals after the warm-up by Finalize, so a merge of shards
// (intervals merged by index, then Finalize) is exact by construction.
package result

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/spanbench/spanbench/result/histogram"
)

// SchemaVersion identifies the document format writers write for a run
// without streams (a streams run's is SchemaVersionStreams). Readers
// accept both and SchemaVersionV1 (KnownSchemaVersion), and refuse others.
//
// v2 encodes each histogram as base64 of HdrHistogram's V2 payload,
// uncompressed; v1 as base64 of HdrHistogram's base64 text of the
// zlib-compressed V2 encoding, which a v1 reader expects. The document's
// own gzip compresses the payloads about as well as zlib did, and reading
// them skips an inflate per histogram (docs/result-format.md).
const SchemaVersion = "spanbench.io/result/v2"

// SchemaVersionV1 is the previous format: old result files and the shard
// ConfigMaps of runners of an older release. Readers still accept it; its
// histograms decode exactly as before.
const SchemaVersionV1 = "spanbench.io/result/v1"

// KnownSchemaVersion reports whether readers accept documents of version
// v. A v2 document may hold histograms of either encoding (a v1 shard
// merged into it keeps its intervals'); the decoder tells them apart.
func KnownSchemaVersion(v string) bool {
	return v == SchemaVersion || v == SchemaVersionV1 || v == SchemaVersionStreams || v == SchemaVersionSearch
}

// Document is a shard's result or the merge of several.
type Document struct {
	// SchemaVersion is SchemaVersion.
	SchemaVersion string `json:"schemaVersion"`
	// Run names the run (the BenchmarkRun's name, or the CLI's).
	Run string `json:"run"`
	// Stream is, in memory only, the load stream whose section this
	// document is (Document.StreamDocument); empty for a whole document.
	// Documents of different streams do not merge.
	Stream string `json:"-"`
	// Spec is the resolved (defaulted) workload that ran, as recorded.
	Spec Spec `json:"spec"`
	// Target is the Spanner target, without credentials.
	Target Target `json:"target"`
	// Environment is the software and placement the result depends on.
	Environment Environment `json:"environment"`
	// Shards describes each runner merged into this document.
	Shards []Shard `json:"shards"`
	// Start is the common intended start of the load.
	Start time.Time `json:"start"`
	// End is when the last shard stopped measuring.
	End time.Time `json:"end"`
	// IntervalSeconds is the length of one interval.
	IntervalSeconds float64 `json:"intervalSeconds"`
	// WarmUp says where the warm-up ended and how.
	WarmUp WarmUp `json:"warmUp"`
	// Totals are per-operation results after the warm-up.
	Totals []Operation `json:"totals"`
	// Overall merges every operation's totals.
	Overall Operation `json:"overall"`
	// Intervals is the time series, warm-up included and marked; empty
	// in a streams run's document, whose series are its streams'.
	Intervals []Interval `json:"intervals"`
	// Streams are a streams run's (workload.streams) results, one section
	// per stream the document's shards ran, in name order; absent for a
	// run without streams. With streams, Totals and Overall merge the
	// streams' totals (streams.go).
	Streams []StreamSection `json:"streams,omitempty"`
	// Notes are caveats a reader must see, such as transactions serialized
	// against the emulator.
	Notes []string `json:"notes,omitempty"`
	// Server is what Spanner's statistics tables say about the run's
	// operations, added to a run's merged result once collected; nil when
	// they were not (server.go).
	Server *Server `json:"server,omitempty"`
	// Search is a capacity search's parameters, steps and outcome; absent
	// for other loads. A document with it is SchemaVersionSearch.
	Search *Search `json:"search,omitempty"`
	// TPCC is a TPC-C run's tpmC, executed mix and consistency checks;
	// absent for other workloads.
	TPCC *TPCC `json:"tpcc,omitempty"`
	// Monitoring is what Cloud Monitoring says about the run's instance
	// and database, added to a run's merged result once read; nil when it
	// was not (monitoring.go).
	Monitoring *Monitoring `json:"monitoring,omitempty"`
	// Cost is what the run cost, added to a run's merged result once it
	// ended; nil before (cost.go).
	Cost *Cost `json:"cost,omitempty"`
}

// Target describes what was benchmarked. It never holds credentials.
type Target struct {
	// Endpoint is "emulator" or "spanner".
	Endpoint string `json:"endpoint"`
	// Project, Instance and Database name the database.
	Project  string `json:"project"`
	Instance string `json:"instance"`
	Database string `json:"database"`
	// InstanceConfig is the instance's configuration, e.g. regional-asia-northeast1.
	InstanceConfig string `json:"instanceConfig,omitempty"`
	// ProcessingUnits is the instance's compute capacity (1 node = 1000).
	ProcessingUnits int32 `json:"processingUnits,omitempty"`
	// Dialect is the database's SQL dialect, GoogleSQL or PostgreSQL: the
	// SQL API's statements differ between them.
	Dialect string `json:"dialect,omitempty"`
}

// Environment is the software and placement of the runners.
type Environment struct {
	// SpanbenchVersion is the spanbench build.
	SpanbenchVersion string `json:"spanbenchVersion"`
	// ClientVersion is the Cloud Spanner Go client's version.
	ClientVersion string `json:"clientVersion"`
	// GoVersion is the Go runtime's version.
	GoVersion string `json:"goVersion"`
	// Region is where the runners ran, when known.
	Region string `json:"region,omitempty"`
}

// Shard describes one runner.
type Shard struct {
	// Index is i of i/Count.
	Index int `json:"index"`
	// Count is the number of shards in the run.
	Count int `json:"count"`
	// Host is the runner's host or pod name.
	Host string `json:"host,omitempty"`
	// Started is when this runner's schedule actually began: its first
	// operation's actual send less that operation's scheduled offset from
	// the run's start (open loop; in a closed loop the first send itself),
	// or the scheduled start if it sent nothing. Across shards, their
	// spread is the start skew, free of the arrivals' designed phase
	// offsets between shards.
	Started time.Time `json:"started"`
	// Ended is when it stopped.
	Ended time.Time `json:"ended"`
	// Missed counts sends skipped because the in-flight cap was reached.
	Missed uint64 `json:"missed"`
	// TargetRate is this shard's share of the target rate at the start (0 in
	// closed loop).
	TargetRate float64 `json:"targetRate"`
	// WallTimeSeconds is a batch stream's time on this shard from its first
	// send to its last operation's return; absent for other loads and for
	// a batch its window cut short.
	WallTimeSeconds float64 `json:"wallTimeSeconds,omitempty"`
}

// WarmUp is where the warm-up ended.
type WarmUp struct {
	// Mode is the spec's warm-up mode.
	Mode WarmUpMode `json:"mode"`
	// Intervals is the number of leading intervals excluded from Totals.
	Intervals int `json:"intervals"`
	// End is when the warm-up ended (Start when there is none).
	End time.Time `json:"end"`
	// Stable is false when an Auto warm-up hit its maximum without the
	// load stabilising: the totals are then suspect.
	Stable bool `json:"stable"`
	// EndedBy is WarmUpEndedByServer when the server's warm-up signal
	// (the monitoring section's, docs/server-stats.md) ended the warm-up
	// later than the client's and cut the intervals between; absent, the
	// client's warm-up (Mode) ended it.
	EndedBy string `json:"endedBy,omitempty"`
	// ServerIntervals counts the intervals the server's signal cut beyond
	// the client's: indexes Intervals-ServerIntervals to Intervals-1.
	ServerIntervals int `json:"serverIntervals,omitempty"`
}

// Counts are an operation's counters.
type Counts struct {
	// OK counts successful operations.
	OK uint64 `json:"ok"`
	// NotFound counts reads of keys expected to exist (point reads, key
	// lists, scans of loaded key ranges) that found no row: neither OK nor
	// errors. Their latency is in the error-latency histogram.
	NotFound uint64 `json:"notFound,omitempty"`
	// Errors counts failed operations by gRPC code name.
	Errors map[string]uint64 `json:"errors,omitempty"`
	// Retries counts read-write transaction attempts beyond the first
	// (aborted and retried by the client).
	Retries uint64 `json:"retries,omitempty"`
	// Rows counts rows read or written by successful operations.
	Rows uint64 `json:"rows"`
	// Mutations counts mutations committed, from commit statistics, when
	// the operation asked for them (commit.returnCommitStats).
	Mutations uint64 `json:"mutations,omitempty"`
	// Rollbacks counts successful operations that rolled their transaction
	// back by design (TPC-C's New-Order on an unused item, 1 %); they are
	// in OK too.
	Rollbacks uint64 `json:"rollbacks,omitempty"`
}

// MaxCount is the largest count a result holds: every count, and the sum
// of an operation's errors, must fit the status's int64 figures. Counts
// come from pods; a merge that would pass it is refused, never wrapped.
const MaxCount = math.MaxInt64

// Add adds o's counts to c, or fails, leaving c unchanged, when a sum
// would pass MaxCount.
func (c *Counts) Add(o Counts) error {
	sum := *c
	var ok [7]bool
	sum.OK, ok[0] = addCount(c.OK, o.OK)
	sum.NotFound, ok[1] = addCount(c.NotFound, o.NotFound)
	sum.Retries, ok[2] = addCount(c.Retries, o.Retries)
	sum.Rows, ok[3] = addCount(c.Rows, o.Rows)
	sum.Mutations, ok[4] = addCount(c.Mutations, o.Mutations)
	sum.Rollbacks, ok[6] = addCount(c.Rollbacks, o.Rollbacks)
	ok[5] = true
	if len(o.Errors) > 0 {
		sum.Errors = make(map[string]uint64, len(c.Errors)+len(o.Errors))
		maps.Copy(sum.Errors, c.Errors)
		for code, n := range o.Errors {
			var fits bool
			if sum.Errors[code], fits = addCount(sum.Errors[code], n); !fits {
				ok[5] = false
			}
		}
	}
	if _, fits := addCount(sum.ErrorCount(), sum.NotFound); !fits || slices.Contains(ok[:], false) {
		return fmt.Errorf("counts overflow: a sum passes %d", uint64(MaxCount))
	}
	*c = sum
	return nil
}

// addCount is a+b, and whether it is at most MaxCount.
func addCount(a, b uint64) (uint64, bool) {
	s := a + b
	return s, a <= MaxCount && b <= MaxCount && s <= MaxCount
}

// Histograms are an operation's encoded HDR histograms (see
// histogram.Encode; a v1 document's are in the older form, which
// histogram.Decoder reads too); an empty one is "".
type Histograms struct {
	// LatencyHistogram is the latency of successful operations from their
	// intended send time.
	LatencyHistogram string `json:"latencyHistogram,omitempty"`
	// ServiceHistogram is the latency of successful operations from their
	// actual send time.
	ServiceHistogram string `json:"serviceHistogram,omitempty"`
	// ErrorLatencyHistogram is the latency of operations that did not
	// succeed (failed or not found) from their intended send time.
	ErrorLatencyHistogram string `json:"errorLatencyHistogram,omitempty"`
	// GFELatencyHistogram is, for successful operations whose responses
	// carried Google's frontend timing (Cloud Spanner's server-timing
	// header), the time their RPCs spent in the frontend and behind it,
	// summed over an operation's RPCs. Absent in documents of older
	// runners and of runs on the emulator, which never sets the header.
	GFELatencyHistogram string `json:"gfeLatencyHistogram,omitempty"`
}

// Operation is the result of one operation (or, as Overall, of all).
type Operation struct {
	// Name is the operation's name in the spec.
	Name string `json:"name"`
	// Type is the operation's type.
	Type OperationType `json:"type,omitempty"`
	Counts
	// Throughput is OK per second over the measured time.
	Throughput float64 `json:"throughput"`
	// Latency is measured from the intended send time (no coordinated
	// omission), for successful operations.
	Latency histogram.Summary `json:"latency"`
	// Service is measured from the actual send time.
	Service histogram.Summary `json:"service"`
	// ErrorLatency is the latency of failed and not-found operations, when
	// there were any: a failure mode that times out looks very different from one
	// that fails fast.
	ErrorLatency *histogram.Summary `json:"errorLatency,omitempty"`
	// GFELatency summarises GFELatencyHistogram, when any successful
	// operation's responses carried the GFE's timing; its count is how many
	// did. Absent means not available (see GFEUnavailable), never zero.
	GFELatency *histogram.Summary `json:"gfeLatency,omitempty"`
	Histograms
}

// ErrorCount sums Errors, saturating past MaxCount (which Add refuses).
func (c *Counts) ErrorCount() uint64 {
	var n uint64
	for _, e := range c.Errors {
		var ok bool
		if n, ok = addCount(n, e); !ok {
			return math.MaxUint64
		}
	}
	return n
}

// Interval is one point of the time series.
type Interval struct {
	// Index counts intervals from Start.
	Index int `json:"index"`
	// WarmUp marks intervals excluded from Totals.
	WarmUp bool `json:"warmUp,omitempty"`
	// TargetRate is the target rate over the interval across merged shards.
	TargetRate float64 `json:"targetRate"`
	// Missed counts sends missed in the interval.
	Missed uint64 `json:"missed,omitempty"`
	// Operations are the per-operation figures of the interval.
	Operations []IntervalOperation `json:"operations"`
}

// IntervalOperation is one operation's figures in one interval.
type IntervalOperation struct {
	// Name is the operation's name.
	Name string `json:"name"`
	Counts
	// P50, P99 and Max are latency figures in microseconds, derived from
	// LatencyHistogram.
	P50 int64 `json:"p50Micros"`
	P99 int64 `json:"p99Micros"`
	Max int64 `json:"maxMicros"`
	Histograms
}
