package shardrun

import (
	"fmt"
	"slices"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/runner/engine"
	"github.com/spanbench/spanbench/spanner/session"
	"github.com/spanbench/spanbench/spanner/workload"
)

// StreamsConfig is Config for a workload with streams, and the streams
// shard i of n runs (engine.RunStreams), bound to the same operations.
func StreamsConfig(run string, spec *v1alpha1.WorkloadSpec, s *session.Session, shard, shards int) (engine.Config, []engine.Stream, error) {
	cfg, w, err := bound(run, spec, s, shard, shards)
	if err != nil {
		return engine.Config{}, nil, err
	}
	streams, err := Streams(spec, w, shard, shards)
	return cfg, streams, err
}

// Streams are the engine streams shard runs of a resolved workload with
// streams, their operations bound through w (whose operations are the
// workload's): the streams pinned to other runners are left out. A
// stream's load is split among the runners it runs on.
func Streams(spec *v1alpha1.WorkloadSpec, w *workload.Workload, shard, shards int) ([]engine.Stream, error) {
	ops := map[string]engine.Operation{}
	for _, op := range w.Ops() {
		ops[op.Spec.Name] = engine.Operation{Name: op.Spec.Name, Op: op}
	}
	run := spec.TotalDuration()
	var out []engine.Stream
	for i := range spec.Streams {
		s := &spec.Streams[i]
		if !s.RunsOn(int32(shard)) {
			continue
		}
		offset, length := s.Window(run)
		es := engine.Stream{Name: s.Name, Load: loadOf(&s.Load, length), Offset: offset, Share: engine.Share{Index: shard, Count: shards}}
		if s.Runners != nil {
			pinned := slices.Sorted(slices.Values(s.Runners))
			es.Share = engine.Share{Index: slices.Index(pinned, int32(shard)), Count: len(pinned)}
		}
		if s.Iterations != nil {
			es.Load.Iterations = iterationsShare(uint64(*s.Iterations), es.Share.Index, es.Share.Count)
			if es.Load.Iterations == 0 {
				continue // fewer iterations than runners: this one has none
			}
		}
		for _, so := range s.Operations {
			op, ok := ops[so.Name]
			if !ok {
				return nil, fmt.Errorf("stream %s: operation %q is not the workload's", s.Name, so.Name)
			}
			op.Weight = int(so.Weight)
			es.Operations = append(es.Operations, op)
		}
		out = append(out, es)
	}
	return out, nil
}

// iterationsShare is shard i of n's part of a batch of total iterations:
// the parts differ by at most one and add up to total.
func iterationsShare(total uint64, i, n int) uint64 {
	share := total / uint64(n)
	if uint64(i) < total%uint64(n) {
		share++
	}
	return share
}
