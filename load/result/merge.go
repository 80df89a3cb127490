package result

import (
	"errors"
	"fmt"
	"sort"
)

// Merge combines shard documents of one run exactly: intervals are matched
// by index and their counts and histograms added, then Finalize derives the
// warm-up and the totals from the merged intervals. Percentiles are never
// averaged. Shards whose intervals a runner coarsened to fit its result
// (see Coarsen) are merged at the coarsest interval: the finer ones are
// coarsened to it first. The inputs are not modified.
func Merge(docs ...*Document) (*Document, error) {
	if len(docs) == 0 {
		return nil, errors.New("nothing to merge")
	}
	docs, err := alignIntervals(docs)
	if err != nil {
		return nil, err
	}
	if err := checkMergeable(docs); err != nil {
		return nil, err
	}
	out := &Document{
		SchemaVersion:   SchemaVersion,
		Run:             docs[0].Run,
		Spec:            docs[0].Spec,
		Target:          docs[0].Target,
		Environment:     docs[0].Environment,
		Start:           docs[0].Start,
		End:             docs[0].End,
		IntervalSeconds: docs[0].IntervalSeconds,
	}
	acc := newIntervalAccumulator()
	seenShard := map[int]bool{}
	for _, d := range docs {
		if d.End.After(out.End) {
			out.End = d.End
		}
		for _, s := range d.Shards {
			if seenShard[s.Index] {
				return nil, fmt.Errorf("shard %d appears in more than one document", s.Index)
			}
			seenShard[s.Index] = true
			out.Shards = append(out.Shards, s)
		}
		out.Notes = appendNew(out.Notes, d.Notes...)
		if err := acc.add(d.Intervals); err != nil {
			return nil, fmt.Errorf("run %s: %w", d.Run, err)
		}
	}
	sort.Slice(out.Shards, func(i, j int) bool { return out.Shards[i].Index < out.Shards[j].Index })
	intervals, err := acc.intervals()
	if err != nil {
		return nil, err
	}
	out.Intervals = intervals
	return out, Finalize(out)
}

// alignIntervals brings every document to the longest interval among
// them, when it is a whole multiple of theirs; others are left for
// checkMergeable to refuse.
func alignIntervals(docs []*Document) ([]*Document, error) {
	longest := 0.0
	for _, d := range docs {
		longest = max(longest, d.IntervalSeconds)
	}
	out := make([]*Document, len(docs))
	for i, d := range docs {
		out[i] = d
		if d.IntervalSeconds <= 0 || d.IntervalSeconds == longest {
			continue
		}
		factor := longest / d.IntervalSeconds
		if factor != float64(int(factor)) {
			continue
		}
		c, err := d.Coarsened(int(factor))
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

func checkMergeable(docs []*Document) error {
	first := docs[0]
	for _, d := range docs {
		if d.SchemaVersion != SchemaVersion {
			return fmt.Errorf("schema version %q is not %q", d.SchemaVersion, SchemaVersion)
		}
		if d.Run != first.Run {
			return fmt.Errorf("results of different runs (%q and %q) cannot be merged", first.Run, d.Run)
		}
		if !d.Start.Equal(first.Start) || d.IntervalSeconds != first.IntervalSeconds {
			return fmt.Errorf("run %s: shards started at different times or with different intervals; their intervals do not line up", d.Run)
		}
		if !d.Spec.Equal(first.Spec) {
			return fmt.Errorf("run %s: shards ran different workload specs", d.Run)
		}
	}
	return nil
}

// intervalAccumulator adds intervals by index, keeping histograms decoded
// until the end so each is decoded and encoded once.
type intervalAccumulator struct {
	byIndex map[int]*mergedInterval
}

type mergedInterval struct {
	Interval
	ops map[string]*mergedOp
}

type mergedOp struct {
	IntervalOperation
	hists histSet
}

func newIntervalAccumulator() *intervalAccumulator {
	return &intervalAccumulator{byIndex: map[int]*mergedInterval{}}
}

func (a *intervalAccumulator) add(intervals []Interval) error {
	for _, in := range intervals {
		m := a.byIndex[in.Index]
		if m == nil {
			m = &mergedInterval{Interval: Interval{Index: in.Index}, ops: map[string]*mergedOp{}}
			a.byIndex[in.Index] = m
		}
		m.TargetRate += in.TargetRate
		m.Missed += in.Missed
		for _, op := range in.Operations {
			if err := m.addOp(op); err != nil {
				return fmt.Errorf("interval %d, operation %s: %w", in.Index, op.Name, err)
			}
		}
	}
	return nil
}

func (m *mergedInterval) addOp(op IntervalOperation) error {
	dst := m.ops[op.Name]
	if dst == nil {
		dst = &mergedOp{IntervalOperation: IntervalOperation{Name: op.Name}, hists: newHistSet()}
		m.ops[op.Name] = dst
	}
	dst.Counts.Add(op.Counts)
	hists, err := op.Histograms.decode()
	if err != nil {
		return err
	}
	return dst.hists.add(hists)
}

func (a *intervalAccumulator) intervals() ([]Interval, error) {
	out := make([]Interval, 0, len(a.byIndex))
	for _, m := range a.byIndex {
		in := m.Interval
		for _, op := range m.ops {
			if err := op.Histograms.encode(op.hists); err != nil {
				return nil, err
			}
			in.Operations = append(in.Operations, op.IntervalOperation)
		}
		sort.Slice(in.Operations, func(i, j int) bool { return in.Operations[i].Name < in.Operations[j].Name })
		out = append(out, in)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out, nil
}

func addCounts(dst, src map[string]uint64) map[string]uint64 {
	if len(src) == 0 {
		return dst
	}
	if dst == nil {
		dst = map[string]uint64{}
	}
	for k, v := range src {
		dst[k] += v
	}
	return dst
}

func appendNew(dst []string, items ...string) []string {
	for _, s := range items {
		found := false
		for _, d := range dst {
			found = found || d == s
		}
		if !found {
			dst = append(dst, s)
		}
	}
	return dst
}
