package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	sigsjson "sigs.k8s.io/json"
)

// KeyLive holds a runner's live report (LiveReport) in its shard map while
// it runs. The shard map is the runner's own, writable by it alone (by
// name, in the run's Role), and already in the manager's cache: live
// progress costs no new permission and no read beyond the cache.
const KeyLive = "live.json"

// MinLivePeriod is the shortest period of live reports: a runner writes
// its live report, and the manager its live status, at most once per
// LivePeriod, which is never shorter. At 64 shards and 50 concurrent runs
// that is 320 small ConfigMap writes a second at most, and 5 status
// writes.
const MinLivePeriod = 10 * time.Second

// MaxLiveBytes bounds a live report: it shares the shard map, whose result
// takes up to MaxResultBytes, with the 1 MiB a ConfigMap may hold. One
// interval's latency histogram is a few hundred bytes to a few KiB; a
// runner that would write more writes no live report.
const MaxLiveBytes = 32 << 10

// LivePeriod is how often a run's live figures move: every interval or
// MinLivePeriod, whichever is longer, rounded up to whole intervals so
// that every runner reports the same interval (LiveDue). It is the one
// owner of the live write rate: the runners write when it says, and the
// manager accepts no more.
func LivePeriod(interval time.Duration) time.Duration {
	if interval <= 0 {
		return MinLivePeriod
	}
	n := (MinLivePeriod + interval - 1) / interval
	return n * interval
}

// LiveDue says whether interval index (counted from the run's start) is
// one runners report: the interval that ends at a multiple of LivePeriod.
// Every runner shares the start time and the interval, so all of them
// report the same intervals and the manager merges like with like.
func LiveDue(index int, interval time.Duration) bool {
	if index < 0 || interval <= 0 {
		return false
	}
	per := int(LivePeriod(interval) / interval)
	return (index+1)%per == 0
}

// LiveReport is a runner's live figures after interval Interval, exact
// (from the intervals its engine completed, not sampled), so that the
// manager can merge the shards' into the run's.
type LiveReport struct {
	// Start is the run's start time the runner got (the control map's):
	// it binds the report to this run's life, so that a report left by an
	// earlier run of the same name is never read as this one's.
	Start time.Time
	// Interval is the index of the last complete interval the report
	// covers (LiveDue).
	Interval int
	// Operations and Errors count the operations completed (successful,
	// not found and failed) and the failed ones in intervals 0..Interval.
	Operations, Errors uint64
	// IntervalOperations counts the operations completed in interval
	// Interval alone.
	IntervalOperations uint64
	// Latency is interval Interval's latency histogram of successful
	// operations, all operations merged, encoded as result documents
	// encode theirs; empty when none succeeded.
	Latency string `json:",omitempty"`
}

// EncodeLiveReport is r as the runner patches it into its shard map: the
// live key alone, so that it leaves the map's other keys (ready, state,
// the result) as they are.
func EncodeLiveReport(r LiveReport) (Maps, error) {
	r.Start = r.Start.UTC()
	b, err := json.Marshal(r)
	if err != nil {
		return Maps{}, err
	}
	if len(b) > MaxLiveBytes {
		return Maps{}, fmt.Errorf("the live report is %d bytes, more than the %d it may take", len(b), MaxLiveBytes)
	}
	return Maps{Data: map[string]string{KeyLive: string(b)}}, nil
}

// DecodeLiveReport reads a live report strictly: it comes from a pod.
// Counts that contradict each other (more errors than operations, an
// interval counting more than the run so far) are refused; whether the
// report belongs to the run and moves forward is the manager's check.
func DecodeLiveReport(s string) (LiveReport, error) {
	var r LiveReport
	if len(s) > MaxLiveBytes {
		return r, &DecodeError{Key: KeyLive, Problem: fmt.Sprintf("is %d bytes, more than %d", len(s), MaxLiveBytes)}
	}
	strict, err := sigsjson.UnmarshalStrict([]byte(s), &r, sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	if err == nil && len(strict) > 0 {
		err = errors.Join(strict...)
	}
	switch {
	case err != nil:
		return LiveReport{}, &DecodeError{Key: KeyLive, Problem: "is not a live report: " + err.Error()}
	case r.Start.IsZero():
		return LiveReport{}, &DecodeError{Key: KeyLive, Problem: "names no start time"}
	case r.Interval < 0:
		return LiveReport{}, &DecodeError{Key: KeyLive, Problem: fmt.Sprintf("names interval %d", r.Interval)}
	case r.Errors > r.Operations || r.IntervalOperations > r.Operations:
		return LiveReport{}, &DecodeError{Key: KeyLive, Problem: fmt.Sprintf(
			"counts %d errors and %d operations in its interval, more than its %d operations", r.Errors, r.IntervalOperations, r.Operations)}
	}
	return r, nil
}
