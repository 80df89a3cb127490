package result

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

// A run with load streams (workload.streams) writes one document per
// shard, as any run, holding every stream that shard ran as a section of
// its own: each section is what a single-stream document would be — its
// shards' entries, start, end, warm-up, totals and intervals — measured
// from the stream's own start. Sections merge across shards exactly, by
// stream name, the way single-stream documents merge (Merger). The
// document's top level keeps what the streams share (run, spec, target,
// environment, shards, notes); its intervals are empty, and its totals and
// overall merge the streams' totals (streamsTotals).

// SchemaVersionStreams is the version of a document with streams: readers
// of v2, which know no sections, refuse it rather than read its empty
// top-level time series as the run's. A document without streams is still
// written as SchemaVersion, its shape unchanged.
const SchemaVersionStreams = "spanbench.io/result/v3"

// StreamSection is one load stream's results in a document.
type StreamSection struct {
	// Name is the stream's name (workload.streams[].name).
	Name string `json:"name"`
	// Shards describes each runner that ran the stream: its own start,
	// end, missed sends, share of the stream's target rate and, for a
	// batch, its wall time.
	Shards []Shard `json:"shards"`
	// Start is the stream's intended start: the run's start plus the
	// stream's startOffset. Its intervals count from it.
	Start time.Time `json:"start"`
	// End is when the stream's last shard stopped measuring.
	End time.Time `json:"end"`
	// WallTimeSeconds is a batch stream's wall time across its shards:
	// from the earliest shard's first send to the latest shard's last
	// return. Absent for other loads, and when the window cut any shard's
	// batch short.
	WallTimeSeconds float64 `json:"wallTimeSeconds,omitempty"`
	// WarmUp says where the stream's warm-up ended: the spec's warm-up,
	// counted from the stream's start.
	WarmUp WarmUp `json:"warmUp"`
	// Totals are the stream's per-operation results after its warm-up.
	Totals []Operation `json:"totals"`
	// Overall merges the stream's operations' totals.
	Overall Operation `json:"overall"`
	// Intervals is the stream's time series from its start.
	Intervals []Interval `json:"intervals"`
}

// HasStreams says d is a streams run's document with at least one stream.
func (d *Document) HasStreams() bool { return len(d.Streams) > 0 }

// StreamDocument is section s of d as a document of its own (sharing d's
// run, spec, target, environment, interval and monitoring section; its
// Stream names s): what a report or a check of one stream reads. The
// monitoring section comes along so that the server's warm-up end, which
// is the instance's, cuts each stream from its own start
// (server_warmup.go).
func (d *Document) StreamDocument(s *StreamSection) *Document {
	return &Document{
		SchemaVersion: SchemaVersion, Run: d.Run, Stream: s.Name, Spec: d.Spec, Target: d.Target,
		Environment: d.Environment, Shards: s.Shards, Start: s.Start, End: s.End,
		IntervalSeconds: d.IntervalSeconds, WarmUp: s.WarmUp, Totals: s.Totals, Overall: s.Overall,
		Intervals: s.Intervals, Monitoring: d.Monitoring,
	}
}

// section is the stream section of a document of one stream.
func section(sd *Document) StreamSection {
	return StreamSection{
		Name: sd.Stream, Shards: sd.Shards, Start: sd.Start, End: sd.End, WallTimeSeconds: batchWallTime(sd.Shards),
		WarmUp: sd.WarmUp, Totals: sd.Totals, Overall: sd.Overall, Intervals: sd.Intervals,
	}
}

// CutBatch is a batch stream whose window ended before its iterations
// did: some runner had not finished its share, so the stream has no wall
// time and ran fewer operations than asked.
type CutBatch struct {
	// Stream is the stream's name.
	Stream string
	// Iterations is what the spec asked of it.
	Iterations int64
}

// CutBatches are d's batch streams (a stream with iterations in the
// spec) that have a section but no wall time, in name order: a batch cut
// short by its window. It is the one rule for saying so: a missing wall
// time alone is easy to take for a figure nobody asked for.
func (d *Document) CutBatches() []CutBatch {
	var out []CutBatch
	for i := range d.Streams {
		if c, ok := d.CutShort(&d.Streams[i]); ok {
			out = append(out, c)
		}
	}
	return out
}

// CutShort reports whether s, a section of d, is a batch its window cut
// short (CutBatches' rule, for one stream).
func (d *Document) CutShort(s *StreamSection) (CutBatch, bool) {
	n, ok := d.Spec.Settings().Batches[s.Name]
	if !ok || s.WallTimeSeconds > 0 {
		return CutBatch{}, false
	}
	return CutBatch{Stream: s.Name, Iterations: n}, true
}

// String says what happened to the batch, for a table, a condition or a
// page.
func (c CutBatch) String() string {
	return fmt.Sprintf("its window ended before its %d iterations did: cut short, no wall time", c.Iterations)
}

// batchWallTime is a batch stream's wall time across its shards, or 0
// when any shard has none (not a batch, or cut short).
func batchWallTime(shards []Shard) float64 {
	if len(shards) == 0 {
		return 0
	}
	var first, last time.Time
	for i, s := range shards {
		if s.WallTimeSeconds <= 0 {
			return 0
		}
		end := s.Started.Add(time.Duration(s.WallTimeSeconds * float64(time.Second)))
		if i == 0 || s.Started.Before(first) {
			first = s.Started
		}
		if end.After(last) {
			last = end
		}
	}
	return last.Sub(first).Seconds()
}

// StreamsDocument is one shard's document of a streams run: base gives
// the shared fields (run, spec, target, environment, start, interval,
// notes, and the shard's one entry: index, count, host), streams the
// stream documents the shard's engine measured, each naming its stream.
// A shard that ran none of the run's streams (all pinned elsewhere) has
// a document without sections. The shard's entry spans its streams.
func StreamsDocument(base *Document, streams []*Document) (*Document, error) {
	if len(base.Shards) != 1 {
		return nil, fmt.Errorf("a shard's streams document describes one shard, not %d", len(base.Shards))
	}
	d := *base
	d.Shards = []Shard{base.Shards[0]}
	d.Intervals, d.Streams = nil, make([]StreamSection, 0, len(streams))
	sh := &d.Shards[0]
	sh.Started, sh.Ended, sh.Missed, sh.TargetRate, sh.WallTimeSeconds = d.Start, d.Start, 0, 0, 0
	d.End = d.Start
	seen := map[string]bool{}
	for i, sd := range streams {
		if sd.Stream == "" || seen[sd.Stream] || len(sd.Shards) != 1 || sd.Shards[0].Index != sh.Index {
			return nil, fmt.Errorf("stream document %d: no stream name, a second one of stream %q, or not of shard %d alone", i, sd.Stream, sh.Index)
		}
		seen[sd.Stream] = true
		s := sd.Shards[0]
		if i == 0 || s.Started.Before(sh.Started) {
			sh.Started = s.Started
		}
		sh.Ended = later(sh.Ended, s.Ended)
		sh.Missed = min(sh.Missed+s.Missed, MaxCount)
		sh.TargetRate += s.TargetRate
		d.End = later(d.End, sd.End)
		d.Notes = appendNew(d.Notes, sd.Notes...)
		d.Streams = append(d.Streams, section(sd))
	}
	sortSections(d.Streams)
	return &d, Finalize(&d)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func sortSections(s []StreamSection) {
	sort.Slice(s, func(i, j int) bool { return s[i].Name < s[j].Name })
}

// finalizeStreams is Finalize of a document with streams: each section's
// figures from its intervals, then the top level's from the sections.
func finalizeStreams(d *Document, c *codec) error {
	for i := range d.Streams {
		sd := d.StreamDocument(&d.Streams[i])
		if err := derive(sd, c, decodingSource(sd, c)); err != nil {
			return fmt.Errorf("stream %s: %w", d.Streams[i].Name, err)
		}
		d.Streams[i] = section(sd)
	}
	return streamsTotals(d, c)
}

// streamsTotals derives a streams document's top level from its
// sections: the version, no intervals, the warm-up ending with the
// earliest stream's (stable if every stream's is; ended by the server
// when it cut any stream, with the most intervals it cut from one), and
// totals per
// operation merging every stream's totals of it, their throughput over the
// time from that warm-up end to the document's end. They are exact: each
// stream's totals carry their histograms.
func streamsTotals(d *Document, c *codec) error {
	d.SchemaVersion, d.Intervals = SchemaVersionStreams, nil
	d.WarmUp = WarmUp{Mode: d.Spec.Settings().WarmUp.Mode, End: d.Start, Stable: true}
	for i, s := range d.Streams {
		if i == 0 || s.WarmUp.End.Before(d.WarmUp.End) {
			d.WarmUp.End = s.WarmUp.End
		}
		d.WarmUp.Stable = d.WarmUp.Stable && s.WarmUp.Stable
		if s.WarmUp.EndedBy == WarmUpEndedByServer {
			d.WarmUp.EndedBy = WarmUpEndedByServer
			d.WarmUp.ServerIntervals = max(d.WarmUp.ServerIntervals, s.WarmUp.ServerIntervals)
		}
	}
	src := func(want func(*Interval) bool, fn func(*Interval, map[string]histSet) error) error {
		for _, s := range d.Streams {
			in := &Interval{Operations: make([]IntervalOperation, 0, len(s.Totals))}
			sets := map[string]histSet{}
			for _, op := range s.Totals {
				h := newHistSet()
				if err := op.Histograms.addTo(c, h); err != nil {
					return fmt.Errorf("stream %s, operation %s: %w", s.Name, op.Name, err)
				}
				in.Operations = append(in.Operations, IntervalOperation{Name: op.Name, Counts: op.Counts})
				sets[op.Name] = h
			}
			if err := fn(in, sets); err != nil {
				return fmt.Errorf("stream %s: %w", s.Name, err)
			}
		}
		return nil
	}
	return computeTotals(d, c, src)
}

// StreamWindow is where a stream runs within the run: what its section
// must fit.
type StreamWindow struct {
	// Name is the stream's name.
	Name string
	// Offset is its start after the run's start; Duration its length.
	Offset, Duration time.Duration
}

// forStream is the expectation of stream w's documents (or sections).
func (e *Expect) forStream(w StreamWindow) Expect {
	s := *e
	s.Stream, s.Streams = w.Name, nil
	// A stream's schedule is its own load's, not the run's: not bounded
	// here (Expect.Arrivals).
	s.Arrivals = nil
	s.Start, s.Duration = e.Start.Add(w.Offset), w.Duration
	// The streams' merged histograms share the run's memory.
	s.HistogramMemory = e.HistogramMemory / int64(len(e.Streams))
	return s
}

// window is stream name's window, if the run has that stream.
func (e *Expect) window(name string) (StreamWindow, bool) {
	i := slices.IndexFunc(e.Streams, func(w StreamWindow) bool { return w.Name == name })
	if i < 0 {
		return StreamWindow{}, false
	}
	return e.Streams[i], true
}

// checkStreams checks a document against a run with or without streams:
// a streams run's documents have no top-level intervals and at most one
// section per stream of the run, each fitting its stream's window and
// describing only the document's shards; a run without streams' have no
// sections.
func (e *Expect) checkStreams(d *Document) error {
	if len(e.Streams) == 0 {
		if len(d.Streams) > 0 {
			return invalid("the result has %d stream sections; the run has no streams", len(d.Streams))
		}
		return nil
	}
	if len(d.Intervals) > 0 {
		return invalid("the result has top-level intervals; a streams run's are in its stream sections")
	}
	if len(d.Streams) > len(e.Streams) {
		return invalid("the result has %d stream sections; the run has %d streams", len(d.Streams), len(e.Streams))
	}
	shards := map[int]bool{}
	for _, s := range d.Shards {
		shards[s.Index] = true
	}
	seen := map[string]bool{}
	for i := range d.Streams {
		s := &d.Streams[i]
		w, ok := e.window(s.Name)
		if !ok || seen[s.Name] {
			return invalid("stream section %q is not a stream of the run, or appears twice", truncateText(s.Name))
		}
		seen[s.Name] = true
		for _, sh := range s.Shards {
			if !shards[sh.Index] {
				return invalid("stream %s: shard %d is not among the result's shards", s.Name, sh.Index)
			}
		}
		se := e.forStream(w)
		if err := se.Check(d.StreamDocument(s)); err != nil {
			return invalid("stream %s: %v", s.Name, err)
		}
	}
	return nil
}

// streamMerger merges a streams run's sections, one merger per stream.
type streamMerger struct {
	byName map[string]*Merger
}

// addStreams merges d's sections all or nothing: a checked merger first
// proves that every section merges (its histograms hold its counts, its
// sums fit, within its stream's memory) before adding any, so a refused
// document leaves every stream's merge as it was. That decodes a checked
// document's histograms twice.
func (m *Merger) addStreams(d *Document) error {
	if m.streams == nil {
		m.streams = &streamMerger{byName: map[string]*Merger{}}
	}
	docs := make([]*Document, len(d.Streams))
	for i := range d.Streams {
		docs[i] = d.StreamDocument(&d.Streams[i])
		if m.expect != nil {
			if err := m.stream(docs[i].Stream).probeAll(docs[i]); err != nil {
				return fmt.Errorf("stream %s: %w", docs[i].Stream, err)
			}
		}
	}
	for _, sd := range docs {
		if err := m.stream(sd.Stream).Add(sd); err != nil {
			return fmt.Errorf("stream %s: %w", sd.Stream, err)
		}
	}
	return nil
}

// stream is the merger of stream name's sections.
func (m *Merger) stream(name string) *Merger {
	sm := m.streams.byName[name]
	if sm != nil {
		return sm
	}
	sm = NewMerger()
	if m.expect != nil {
		w, _ := m.expect.window(name) // checked: the run has it
		sm = NewCheckedMerger(m.expect.forStream(w))
	}
	m.streams.byName[name] = sm
	return sm
}

// probeAll checks, for a checked merger, that d's intervals would merge,
// without merging them.
func (m *Merger) probeAll(d *Document) error {
	if m.out == nil {
		p := newIntervalAccumulator()
		p.checked, p.memoryLimit = true, m.acc.memoryLimit
		return p.add(d.Intervals)
	}
	if err := checkMergeable([]*Document{m.out, d}); err != nil {
		return err
	}
	if err := m.acc.checkSums(d.Intervals); err != nil {
		return err
	}
	return m.probe(d)
}

// resultStreams adds the merged sections to out and derives its top level.
func (m *Merger) resultStreams(out *Document) error {
	names := make([]string, 0, len(m.streams.byName))
	for name := range m.streams.byName {
		names = append(names, name)
	}
	slices.Sort(names)
	out.Streams = make([]StreamSection, 0, len(names))
	for _, name := range names {
		sd, err := m.streams.byName[name].Result()
		if err != nil {
			return fmt.Errorf("stream %s: %w", name, err)
		}
		s := section(sd)
		out.Notes = appendNew(out.Notes, sd.Notes...)
		out.Streams = append(out.Streams, s)
	}
	return streamsTotals(out, &m.acc.c)
}
