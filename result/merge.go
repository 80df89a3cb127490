package result

import (
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/spanbench/spanbench/result/histogram"
)

// Merge combines shard documents of one run exactly: intervals are matched
// by index and their counts and histograms added, then the warm-up and the
// totals are derived from the merged intervals. Percentiles are never
// averaged. Shards whose intervals a runner of an earlier release coarsened
// to fit its result in one ConfigMap (see Coarsen) are merged at the coarsest interval: the finer ones are
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
	// expect, when set, is the run every document must fit.
	expect *Expect
	// streams merges a streams run's sections, once a document had some.
	streams *streamMerger
}

// NewMerger returns an empty merger of trusted documents (written by this
// process).
func NewMerger() *Merger {
	return &Merger{acc: newIntervalAccumulator(), seenShard: map[int]bool{}}
}

// NewCheckedMerger returns an empty merger of untrusted documents (from
// runner pods, or files): each must pass e.Check, its histograms must hold
// exactly its counts and its counts' sums must fit MaxCount, and the merged
// histograms may take at most e.HistogramMemory. The merged document takes
// its run, spec and settings from e, never from a document. A document is
// added all or nothing: a refused one leaves the merge as it was, so the
// others still merge (the one exception: a coarser document whose counts
// overflow only once the merged intervals are coarsened to its length
// leaves them coarsened).
func NewCheckedMerger(e Expect) *Merger {
	m := NewMerger()
	m.expect = &e
	m.acc.checked, m.acc.memoryLimit = true, e.HistogramMemory
	return m
}

// Add merges d into the result; d is not modified.
func (m *Merger) Add(d *Document) error {
	if m.expect != nil {
		if err := m.expect.Check(d); err != nil {
			return err
		}
		if err := d.Server.Check(d); err != nil {
			return err
		}
		if err := d.Monitoring.Check(); err != nil {
			return err
		}
		if err := d.Cost.Check(); err != nil {
			return err
		}
	}
	first := m.out == nil
	if first {
		m.out = &Document{
			SchemaVersion: SchemaVersion, Run: d.Run, Stream: d.Stream, Spec: d.Spec, Target: d.Target, Environment: d.Environment,
			Start: d.Start, End: d.End, IntervalSeconds: d.IntervalSeconds,
		}
		if m.expect != nil {
			m.out.Run, m.out.Stream, m.out.Spec = m.expect.Run, m.expect.Stream, m.expect.Spec
		}
	}
	if err := m.addAll(d); err != nil {
		if first {
			m.out = nil // the next document sets the merged one's fields
		}
		return err
	}
	m.keepServer(d, first)
	m.keepTPCCChecks(d, first)
	m.keepCost(d, first)
	return nil
}

// keepServer carries a document's server, monitoring and search sections
// through a merge of that one document (a run's report read back); merged
// with others they are dropped: they were joined to that document's
// client counts, not to the merge's.
func (m *Merger) keepServer(d *Document, first bool) {
	notes := &m.out.Notes
	keepOne(&m.out.Server, d.Server, first, notes, "server statistics left out: they were joined to one document's counts, not to this merge's")
	keepOne(&m.out.Search, d.Search, first, notes, "capacity search left out: its steps were judged on one document's intervals, not this merge's")
	keepOne(&m.out.Monitoring, d.Monitoring, first, notes, "Cloud Monitoring figures left out: they were read for one run's window, not this merge's")
}

// keepOne keeps the first document's section in out; when a later one is
// merged and either has the section, it drops it and notes why.
func keepOne[T any](out **T, in *T, first bool, notes *[]string, why string) {
	switch {
	case first:
		*out = in
	case *out != nil || in != nil:
		*out = nil
		*notes = appendNew(*notes, why)
	}
}

// addAll merges d, its stream sections included: d's shards must be new
// and d must agree with what was merged before on having streams before
// its sections are merged, all or nothing (addStreams), then its top
// level.
func (m *Merger) addAll(d *Document) error {
	streams := m.streams != nil || (m.expect != nil && len(m.expect.Streams) > 0)
	switch {
	case len(d.Streams) > 0 && len(m.acc.byIndex) > 0, len(d.Intervals) > 0 && streams:
		return fmt.Errorf("run %s: a document with stream sections and one with top-level intervals do not merge", d.Run)
	case len(d.Streams) == 0:
		return m.add(d)
	}
	if err := checkMergeable([]*Document{m.out, d}); err != nil {
		return err
	}
	for _, s := range d.Shards {
		if m.seenShard[s.Index] {
			return fmt.Errorf("shard %d appears in more than one document", s.Index)
		}
	}
	if err := m.addStreams(d); err != nil {
		return err
	}
	return m.add(d)
}

// add merges d, changing nothing but the intervals' resolution when it
// fails.
func (m *Merger) add(d *Document) error {
	d, err := m.align(d)
	if err != nil {
		return err
	}
	if err := checkMergeable([]*Document{m.out, d}); err != nil {
		return err
	}
	for _, s := range d.Shards {
		if m.seenShard[s.Index] {
			return fmt.Errorf("shard %d appears in more than one document", s.Index)
		}
	}
	if err := m.acc.add(d.Intervals); err != nil {
		return fmt.Errorf("run %s: %w", d.Run, err)
	}
	if d.End.After(m.out.End) {
		m.out.End = d.End
	}
	for _, s := range d.Shards {
		m.seenShard[s.Index] = true
		m.out.Shards = append(m.out.Shards, s)
	}
	m.out.Notes = appendNew(m.out.Notes, d.Notes...)
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
		if factor == float64(int(factor)) && factor <= maxFactor {
			if err := m.probe(d); err != nil {
				return nil, err
			}
			if err := m.acc.coarsen(int(factor)); err != nil {
				return nil, err
			}
			m.out.Notes = appendNew(m.out.Notes, coarsenedNote(cur, d.IntervalSeconds))
			m.out.IntervalSeconds = d.IntervalSeconds
		}
		return d, nil
	default:
		factor := cur / d.IntervalSeconds
		if factor != float64(int(factor)) || factor > maxFactor {
			return d, nil
		}
		// Coarsening decodes d's histograms: as checked as merging them.
		acc := newIntervalAccumulator()
		acc.checked, acc.memoryLimit = m.acc.checked, m.acc.memoryLimit
		return d.coarsenedWith(int(factor), acc)
	}
}

// probe checks, for a checked merger, that d's intervals would merge
// (histograms that hold their counts, within the memory left) before the
// merged intervals are coarsened to d's: a refused document must not leave
// the others' time series coarser. It decodes d once more; only a shard
// coarser than those before it needs it.
func (m *Merger) probe(d *Document) error {
	if !m.acc.checked {
		return nil
	}
	p := newIntervalAccumulator()
	p.checked, p.memoryLimit = true, m.acc.memoryLimit-m.acc.memory.Load()
	return p.add(d.Intervals)
}

// Result derives the merged document's figures and returns it. The merger
// is spent: each merged interval's histograms are released once encoded.
func (m *Merger) Result() (*Document, error) {
	if m.out == nil {
		return nil, errors.New("nothing to merge")
	}
	out := m.out
	sort.Slice(out.Shards, func(i, j int) bool { return out.Shards[i].Index < out.Shards[j].Index })
	if m.streams != nil || (m.expect != nil && len(m.expect.Streams) > 0) {
		if m.streams == nil {
			m.streams = &streamMerger{byName: map[string]*Merger{}}
		}
		return out, m.resultStreams(out)
	}
	if err := m.acc.finish(out); err != nil {
		return out, err
	}
	if m.expect != nil {
		// Each shard was checked as it came; the merge is too, so that a
		// shard merged twice, or intervals added twice, cannot pass.
		return out, m.expect.checkArrivals(out)
	}
	return out, nil
}

func checkMergeable(docs []*Document) error {
	first := docs[0]
	for _, d := range docs {
		if !KnownSchemaVersion(d.SchemaVersion) {
			return fmt.Errorf("schema version %q is not %q, %q, %q or %q", d.SchemaVersion, SchemaVersion, SchemaVersionStreams, SchemaVersionSearch, SchemaVersionV1)
		}
		if d.Run != first.Run {
			return fmt.Errorf("results of different runs (%q and %q) cannot be merged", first.Run, d.Run)
		}
		if d.Stream != first.Stream {
			return fmt.Errorf("run %s: results of different streams (%q and %q) cannot be merged", d.Run, first.Stream, d.Stream)
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
	// checked says every decoded histogram must hold its counts exactly;
	// memoryLimit, when positive, bounds memory, the merged histograms'
	// bytes.
	checked     bool
	memoryLimit int64
	memory      atomic.Int64
	// c encodes; codecs[w] decodes for worker w, a checked add's into
	// bufs[w].
	c      codec
	codecs [maxDecoders]codec
	bufs   [maxDecoders][]byte
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
	if a.checked {
		return a.addChecked(intervals)
	}
	// Counts first, in order; then the histograms, decoded in parallel.
	jobs := make([]decodeJob, 0, len(intervals)*4)
	for _, in := range intervals {
		m := a.interval(in.Index)
		m.TargetRate += in.TargetRate
		var fits bool
		if m.Missed, fits = addCount(m.Missed, in.Missed); !fits {
			return fmt.Errorf("interval %d: missed sends overflow", in.Index)
		}
		for _, op := range in.Operations {
			into, err := m.op(op.Name, op.Counts)
			if err != nil {
				return fmt.Errorf("interval %d, operation %s: %w", in.Index, op.Name, err)
			}
			jobs = append(jobs, decodeJob{index: in.Index, op: op.Name, from: op.Histograms, counts: op.Counts, into: into})
		}
	}
	return a.decodeAll(jobs)
}

// addChecked adds untrusted intervals all or nothing: their counts' sums
// are checked first, then each histogram is checked as it is added
// straight into its merged one (against its encoding, its counts and the
// memory limit), and only then the counts. A refused document leaves the
// accumulator's counts and histograms as they were: what was added is
// taken back out (decoded once more: refusals are rare), so the other
// shards still merge. (Decoding each shard into
// histograms of its own, merged once all were checked, allocated 13.6 GB
// in a merge of 256 dense shards.)
func (a *intervalAccumulator) addChecked(intervals []Interval) error {
	if err := a.checkSums(intervals); err != nil {
		return err
	}
	jobs := make([]decodeJob, 0, len(intervals)*4)
	for _, in := range intervals {
		for _, op := range in.Operations {
			jobs = append(jobs, decodeJob{index: in.Index, op: op.Name, from: op.Histograms, counts: op.Counts})
		}
	}
	undo := a.targets(jobs)
	if err := a.forEach(jobs, a.apply); err != nil {
		_ = a.forEach(jobs, func(w int, j *decodeJob) error { a.takeBack(w, j); return nil })
		undo()
		return err
	}
	for _, in := range intervals {
		m := a.interval(in.Index)
		m.TargetRate += in.TargetRate
		m.Missed += in.Missed // checkSums checked it
	}
	for _, j := range jobs {
		_ = a.byIndex[j.index].ops[j.op].Counts.Add(j.counts) // checkSums checked it
	}
	return nil
}

// apply checks j's histograms as it adds them into its merged ones, then
// holds them to j's counts and the memory limit.
func (a *intervalAccumulator) apply(w int, j *decodeJob) error {
	before := j.into.bytes()
	var totals [numKinds]int64
	for i, enc := range j.from.fields() {
		var p histogram.Payload
		var err error
		a.bufs[w], p, err = a.codecs[w].dec.AddToFrom(j.into[i], a.bufs[w][:0], *enc)
		if err != nil {
			a.memory.Add(j.into.bytes() - before)
			return fmt.Errorf("interval %d, operation %s: %w", j.index, j.op, err)
		}
		j.added[i], totals[i] = true, p.TotalCount()
	}
	if a.memory.Add(j.into.bytes()-before) > a.memoryLimit && a.memoryLimit > 0 {
		return fmt.Errorf("the merged histograms take more than %d MiB", a.memoryLimit>>20)
	}
	want := [...]uint64{j.counts.OK, j.counts.OK, j.counts.ErrorCount() + j.counts.NotFound}
	for i, name := range [...]string{"latency", "service", "error latency"} {
		if got := uint64(totals[i]); got != want[i] {
			return fmt.Errorf("interval %d, operation %s: the %s histogram holds %d values, but its counts say %d", j.index, j.op, name, got, want[i])
		}
	}
	// Only successful operations whose responses carried the GFE's
	// timing are in its histogram: at most the OK count.
	if got := uint64(totals[3]); got > j.counts.OK {
		return fmt.Errorf("interval %d, operation %s: the GFE latency histogram holds %d values, more than the %d successful operations", j.index, j.op, got, j.counts.OK)
	}
	return nil
}

// targets points each job at its merged histograms, creating the
// intervals and operations it is the first to name, and returns what
// removes those again.
func (a *intervalAccumulator) targets(jobs []decodeJob) (undo func()) {
	var newIntervals []int
	type opAt struct {
		index int
		op    string
	}
	var newOps []opAt
	for i := range jobs {
		j := &jobs[i]
		if a.byIndex[j.index] == nil {
			newIntervals = append(newIntervals, j.index)
		}
		m := a.interval(j.index)
		if m.ops[j.op] == nil {
			newOps = append(newOps, opAt{j.index, j.op})
			m.ops[j.op] = &mergedOp{IntervalOperation: IntervalOperation{Name: j.op}, hists: newHistSet()}
		}
		j.into = m.ops[j.op].hists
	}
	return func() {
		for _, o := range newOps {
			a.memory.Add(-a.byIndex[o.index].ops[o.op].hists.bytes())
			delete(a.byIndex[o.index].ops, o.op)
		}
		for _, index := range newIntervals {
			delete(a.byIndex, index)
		}
	}
}

// takeBack takes j's histograms, if added, back out of its merged ones.
func (a *intervalAccumulator) takeBack(w int, j *decodeJob) {
	before := j.into.bytes()
	for i, enc := range j.from.fields() {
		if !j.added[i] {
			continue
		}
		// Checked once already: never fails.
		var p histogram.Payload
		a.bufs[w], p, _ = a.codecs[w].dec.AppendPayload(a.bufs[w][:0], *enc)
		j.into[i].SubPayload(p)
		j.added[i] = false
	}
	a.memory.Add(j.into.bytes() - before)
}

// checkSums reports the first count of intervals whose sum with the
// merged one would pass MaxCount, changing nothing.
func (a *intervalAccumulator) checkSums(intervals []Interval) error {
	for _, in := range intervals {
		var merged *mergedInterval
		if merged = a.byIndex[in.Index]; merged == nil {
			merged = &mergedInterval{}
		}
		if _, fits := addCount(merged.Missed, in.Missed); !fits {
			return fmt.Errorf("interval %d: missed sends overflow", in.Index)
		}
		for _, op := range in.Operations {
			var sum Counts
			if m := merged.ops[op.Name]; m != nil {
				sum = m.Counts
			}
			if err := sum.Add(op.Counts); err != nil {
				return fmt.Errorf("interval %d, operation %s: %w", in.Index, op.Name, err)
			}
		}
	}
	return nil
}

// decodeAll decodes the jobs' histograms into their merged ones.
func (a *intervalAccumulator) decodeAll(jobs []decodeJob) error {
	return a.forEach(jobs, func(w int, j *decodeJob) error { return a.decode(&a.codecs[w], *j) })
}

// workers is the number of goroutines decoding a document's histograms.
func (a *intervalAccumulator) workers() int { return min(runtime.GOMAXPROCS(0), maxDecoders) }

// forEach calls fn for every job in parallel, each worker w taking, in
// order, every job whose interval index it owns, so each merged histogram
// has one writer. A worker stops at its first error.
func (a *intervalAccumulator) forEach(jobs []decodeJob, fn func(w int, j *decodeJob) error) error {
	workers := a.workers()
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				j := &jobs[i]
				if (j.index%workers+workers)%workers != w {
					continue
				}
				if err := fn(w, j); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// decode adds j's histograms into its merged ones (an unchecked add: a
// checked one checks them all first, see addChecked).
func (a *intervalAccumulator) decode(c *codec, j decodeJob) error {
	bytesBefore := j.into.bytes()
	err := j.from.addTo(c, j.into)
	grown := a.memory.Add(j.into.bytes() - bytesBefore)
	if err != nil {
		return fmt.Errorf("interval %d, operation %s: %w", j.index, j.op, err)
	}
	if grown > a.memoryLimit && a.memoryLimit > 0 {
		return fmt.Errorf("the merged histograms take more than %d MiB", a.memoryLimit>>20)
	}
	return nil
}

// maxDecoders bounds the goroutines decoding a document's histograms.
const maxDecoders = 4

// decodeJob is one operation's histograms of one interval, and the merged
// histograms they are added to.
type decodeJob struct {
	index  int
	op     string
	from   Histograms
	counts Counts
	into   histSet
	// added says which of from's histograms a checked add has added.
	added [numKinds]bool
}

// op adds c to the operation's counts and returns its histograms.
func (m *mergedInterval) op(name string, c Counts) (histSet, error) {
	dst := m.ops[name]
	if dst == nil {
		dst = &mergedOp{IntervalOperation: IntervalOperation{Name: name}, hists: newHistSet()}
		m.ops[name] = dst
	}
	return dst.hists, dst.Counts.Add(c)
}

// coarsen merges every factor consecutive merged intervals into one;
// target rates are averaged over the intervals merged, as Coarsen does.
func (a *intervalAccumulator) coarsen(factor int) error {
	coarse := map[int]*mergedInterval{}
	for _, m := range a.byIndex {
		c := coarse[m.Index/factor]
		if c == nil {
			c = &mergedInterval{Interval: Interval{Index: m.Index / factor}, ops: map[string]*mergedOp{}}
			coarse[c.Index] = c
		}
		c.TargetRate += m.TargetRate
		var fits bool
		if c.Missed, fits = addCount(c.Missed, m.Missed); !fits {
			return fmt.Errorf("interval %d: missed sends overflow", c.Index)
		}
		c.members++
		for name, op := range m.ops {
			hists, err := c.op(name, op.Counts)
			if err != nil {
				return fmt.Errorf("interval %d, operation %s: %w", c.Index, name, err)
			}
			hists.add(op.hists)
		}
	}
	for _, c := range coarse {
		c.TargetRate /= float64(c.members)
		c.members = 0
	}
	a.byIndex = coarse
	return nil
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
