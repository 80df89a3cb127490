package result

import (
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
)

// Merge combines shard documents of one run exactly: intervals are matched
// by index and their counts and histograms added, then the warm-up and the
// totals are derived from the merged intervals. Percentiles are never
// averaged. Shards whose intervals a runner coarsened to fit its result
// (see Coarsen) are merged at the coarsest interval: the finer ones are
// coarsened to it. The inputs are not modified. See Merger to merge shards
// one at a time.
func Merge(docs ...*Document) (*Document, error) {
	if len(docs) == 0 {
		return nil, errors.New("nothing to merge")
	}
	m := NewMerger()
	for _, d := range docs {
		if err := m.Add(d); err != nil {
			return nil, err
		}
	}
	return m.Result()
}

// Merger merges shard documents one at a time: each is decoded into one
// compact histogram per interval, operation and kind and can then be
// dropped, so merging many long shards holds the merged intervals and one
// shard, never every shard's intervals at once.
type Merger struct {
	out       *Document
	acc       *intervalAccumulator
	seenShard map[int]bool
}

// NewMerger returns an empty merger.
func NewMerger() *Merger {
	return &Merger{acc: newIntervalAccumulator(), seenShard: map[int]bool{}}
}

// Add merges d into the result; d is not modified.
func (m *Merger) Add(d *Document) error {
	if m.out == nil {
		m.out = &Document{
			SchemaVersion: SchemaVersion, Run: d.Run, Spec: d.Spec, Target: d.Target, Environment: d.Environment,
			Start: d.Start, End: d.End, IntervalSeconds: d.IntervalSeconds,
		}
	}
	d, err := m.align(d)
	if err != nil {
		return err
	}
	if err := checkMergeable([]*Document{m.out, d}); err != nil {
		return err
	}
	if d.End.After(m.out.End) {
		m.out.End = d.End
	}
	for _, s := range d.Shards {
		if m.seenShard[s.Index] {
			return fmt.Errorf("shard %d appears in more than one document", s.Index)
		}
		m.seenShard[s.Index] = true
		m.out.Shards = append(m.out.Shards, s)
	}
	m.out.Notes = appendNew(m.out.Notes, d.Notes...)
	if err := m.acc.add(d.Intervals); err != nil {
		return fmt.Errorf("run %s: %w", d.Run, err)
	}
	return nil
}

// align brings d and the merged intervals to the longer of their
// intervals, when it is a whole multiple of the other; others are left for
// checkMergeable to refuse.
func (m *Merger) align(d *Document) (*Document, error) {
	cur := m.out.IntervalSeconds
	switch {
	case d.IntervalSeconds <= 0 || cur <= 0 || d.IntervalSeconds == cur:
		return d, nil
	case d.IntervalSeconds > cur:
		factor := d.IntervalSeconds / cur
		if factor == float64(int(factor)) {
			m.acc.coarsen(int(factor))
			m.out.Notes = appendNew(m.out.Notes, coarsenedNote(cur, d.IntervalSeconds))
			m.out.IntervalSeconds = d.IntervalSeconds
		}
		return d, nil
	default:
		factor := cur / d.IntervalSeconds
		if factor != float64(int(factor)) {
			return d, nil
		}
		return d.Coarsened(int(factor))
	}
}

// Result derives the merged document's figures and returns it. The merger
// is spent: each merged interval's histograms are released once encoded.
func (m *Merger) Result() (*Document, error) {
	if m.out == nil {
		return nil, errors.New("nothing to merge")
	}
	out := m.out
	sort.Slice(out.Shards, func(i, j int) bool { return out.Shards[i].Index < out.Shards[j].Index })
	return out, m.acc.finish(out)
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

// intervalAccumulator adds intervals by index into compact histograms,
// decoding each encoded histogram once and encoding each merged one once.
type intervalAccumulator struct {
	byIndex map[int]*mergedInterval
	// c encodes; codecs[w] decodes for worker w.
	c      codec
	codecs [maxDecoders]codec
}

type mergedInterval struct {
	Interval
	ops map[string]*mergedOp
	// members counts the intervals coarsened into this one.
	members int
}

type mergedOp struct {
	IntervalOperation
	hists histSet
}

func newIntervalAccumulator() *intervalAccumulator {
	return &intervalAccumulator{byIndex: map[int]*mergedInterval{}}
}

func (a *intervalAccumulator) interval(index int) *mergedInterval {
	m := a.byIndex[index]
	if m == nil {
		m = &mergedInterval{Interval: Interval{Index: index}, ops: map[string]*mergedOp{}}
		a.byIndex[index] = m
	}
	return m
}

func (a *intervalAccumulator) add(intervals []Interval) error {
	// Counts first, in order; then the histograms, decoded in parallel: a
	// worker takes every interval whose index it owns, so each merged
	// histogram has one writer.
	jobs := make([]decodeJob, 0, len(intervals)*4)
	for _, in := range intervals {
		m := a.interval(in.Index)
		m.TargetRate += in.TargetRate
		m.Missed += in.Missed
		for _, op := range in.Operations {
			jobs = append(jobs, decodeJob{index: in.Index, op: op.Name, from: op.Histograms, into: m.op(op.Name, op.Counts)})
		}
	}
	workers := min(runtime.GOMAXPROCS(0), maxDecoders)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, j := range jobs {
				if (j.index%workers+workers)%workers != w {
					continue
				}
				if err := j.from.addTo(&a.codecs[w], j.into); err != nil {
					errs[w] = fmt.Errorf("interval %d, operation %s: %w", j.index, j.op, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// maxDecoders bounds the goroutines decoding a document's histograms.
const maxDecoders = 4

// decodeJob is one operation's histograms of one interval, and the merged
// histograms they are added to.
type decodeJob struct {
	index int
	op    string
	from  Histograms
	into  histSet
}

// op adds c to the operation's counts and returns its histograms.
func (m *mergedInterval) op(name string, c Counts) histSet {
	dst := m.ops[name]
	if dst == nil {
		dst = &mergedOp{IntervalOperation: IntervalOperation{Name: name}, hists: newHistSet()}
		m.ops[name] = dst
	}
	dst.Counts.Add(c)
	return dst.hists
}

// coarsen merges every factor consecutive merged intervals into one;
// target rates are averaged over the intervals merged, as Coarsen does.
func (a *intervalAccumulator) coarsen(factor int) {
	coarse := map[int]*mergedInterval{}
	for _, m := range a.byIndex {
		c := coarse[m.Index/factor]
		if c == nil {
			c = &mergedInterval{Interval: Interval{Index: m.Index / factor}, ops: map[string]*mergedOp{}}
			coarse[c.Index] = c
		}
		c.TargetRate += m.TargetRate
		c.Missed += m.Missed
		c.members++
		for name, op := range m.ops {
			c.op(name, op.Counts).add(op.hists)
		}
	}
	for _, c := range coarse {
		c.TargetRate /= float64(c.members)
		c.members = 0
	}
	a.byIndex = coarse
}

// intervals lists the merged intervals in index order, without
// histograms.
func (a *intervalAccumulator) intervals() []*mergedInterval {
	out := make([]*mergedInterval, 0, len(a.byIndex))
	for _, m := range a.byIndex {
		m.Operations = m.Operations[:0]
		for _, op := range m.ops {
			m.Operations = append(m.Operations, op.IntervalOperation)
		}
		sort.Slice(m.Operations, func(i, j int) bool { return m.Operations[i].Name < m.Operations[j].Name })
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out
}

// finish derives d's figures from the merged histograms, computing each
// summary once, then encodes each merged interval into d and releases its
// histograms.
func (a *intervalAccumulator) finish(d *Document) error {
	merged := a.intervals()
	d.Intervals = make([]Interval, len(merged))
	for i, m := range merged {
		d.Intervals[i] = m.Interval
	}
	src := func(want func(*Interval) bool, fn func(*Interval, map[string]histSet) error) error {
		sets := map[string]histSet{}
		for i, m := range merged {
			if !want(&d.Intervals[i]) {
				continue
			}
			clear(sets)
			for name, op := range m.ops {
				sets[name] = op.hists
			}
			if err := fn(&d.Intervals[i], sets); err != nil {
				return err
			}
		}
		return nil
	}
	if err := derive(d, &a.c, src); err != nil {
		return err
	}
	for i, m := range merged {
		in := &d.Intervals[i]
		for j := range in.Operations {
			op := &in.Operations[j]
			if err := op.Histograms.encode(&a.c, m.ops[op.Name].hists); err != nil {
				return err
			}
		}
		merged[i], m.ops = nil, nil
	}
	a.byIndex = map[int]*mergedInterval{}
	return nil
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
