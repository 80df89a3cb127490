package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/spanner/customcheck"
)

// Limits the controller and the CLI hold every shard result to, besides
// ResultBudget (docs/security.md, "Untrusted shard data").
const (
	// MaxClockSkew is how far a runner's clock may be from the manager's:
	// a shard's times must fall within the run's, give or take this.
	MaxClockSkew = time.Minute
	// MaxMergedHistogramBytes bounds the memory of a run's merged
	// histograms (one compact histogram per interval, operation and kind;
	// 256 dense 30-minute shards of 10 operations take about 48 MiB).
	MaxMergedHistogramBytes = 96 << 20
)

// RecordedSpec is a resolved workload spec as a result records it: the
// runner writes it into its result, and the controller compares it, by
// hash, with the run's.
func RecordedSpec(spec *v1alpha1.WorkloadSpec) (result.Spec, error) {
	raw, err := json.Marshal(spec)
	if err != nil {
		return result.Spec{}, err
	}
	return result.NewSpec(raw)
}

// ResultExpectation is what shard `shard` (-1: any) of `shards` of run
// must fit: the run's recorded spec, its interval and duration, a start
// within MaxClockSkew of start, and an end within overrun of the load's.
// workload is the run's, resolved here; nothing comes from the result.
func ResultExpectation(run string, workload *v1alpha1.WorkloadSpec, start time.Time, overrun time.Duration, shard, shards int) (result.Expect, error) {
	w := workload.Resolved()
	spec, err := RecordedSpec(&w)
	if err != nil {
		return result.Expect{}, err
	}
	e := result.Expect{
		Run: run, Spec: spec, Interval: w.Interval.Duration, Duration: w.TotalDuration(), Overrun: overrun,
		Start: start, Skew: MaxClockSkew, Shard: shard, Shards: shards, HistogramMemory: MaxMergedHistogramBytes,
	}
	for i := range w.Streams {
		s := &w.Streams[i]
		offset, length := s.Window(w.TotalDuration())
		e.Streams = append(e.Streams, result.StreamWindow{Name: s.Name, Offset: offset, Duration: length})
	}
	return e, nil
}

// FileExpectation is what documents claiming to be d's run must fit when
// there is no run to ask (spanbench report on files): d's own recorded
// spec, decoded strictly and validated as the API server would, then
// recorded again, so that d's spec must be one spanbench writes; d's start;
// the default overrun; and d's shard count, within MaxShards.
func FileExpectation(d *result.Document) (result.Expect, error) {
	var w v1alpha1.WorkloadSpec
	strictErrs, err := sigsjson.UnmarshalStrict(d.Spec.Raw(), &w, sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	if err == nil {
		err = errors.Join(strictErrs...)
	}
	if err != nil {
		return result.Expect{}, fmt.Errorf("the result's spec is not a workload spec: %w", err)
	}
	if errs := customcheck.Workload(field.NewPath("spec"), &w, v1alpha1.Dialect(d.Target.Dialect)); len(errs) > 0 {
		return result.Expect{}, fmt.Errorf("the result's spec is not valid: %w", errs.ToAggregate())
	}
	if len(d.Shards) == 0 || d.Shards[0].Count < 1 || d.Shards[0].Count > result.MaxShards {
		return result.Expect{}, fmt.Errorf("the result does not say how many shards its run had (1 to %d)", result.MaxShards)
	}
	return ResultExpectation(d.Run, &w, d.Start, v1alpha1.DefaultOverrunDeadline, -1, d.Shards[0].Count)
}
