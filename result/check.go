package result

import (
	"fmt"
	"math"
	"time"
)

// Expect is what a document must agree with to be merged: the run it
// claims to be part of, as the run's owner (the controller, from the
// BenchmarkRun; the CLI, from the first file) knows it. Nothing the
// document says about itself is trusted: its spec must be the run's (by
// hash), and its intervals, times and shards must fit the run's spec.
type Expect struct {
	// Run is the run's name.
	Run string
	// Stream is the load stream every document must measure, when it is a
	// stream's section (Document.StreamDocument); empty for whole
	// documents.
	Stream string
	// Streams are the run's load streams, where each runs; empty for a
	// run without streams. Whole documents of a streams run hold their
	// results in sections, at most one per stream (checkStreams).
	Streams []StreamWindow
	// Spec is the run's recorded spec; Settings are read from it, never
	// from a document's.
	Spec Spec
	// Interval is the spec's interval; a document's may be a whole
	// multiple of it, up to MaxCoarsening (a runner of an earlier release
	// coarsened it to fit its ConfigMap).
	Interval time.Duration
	// Duration is the spec's total duration, and Overrun how long after
	// it a runner may still end.
	Duration, Overrun time.Duration
	// Start is the run's start, which a document's must be within Skew of.
	Start time.Time
	// Latest, when set, is the latest time a document may mention (the
	// time of the aggregation, plus Skew).
	Latest time.Time
	// Skew is how far runners' clocks may be from the run's.
	Skew time.Duration
	// Shard is the one shard a document must describe, or -1 for any
	// (a merged document, or files); Shards is the run's number of shards.
	Shard, Shards int
	// HistogramMemory bounds the memory of the merged histograms.
	HistogramMemory int64
	// Arrivals, when set, is the run's open-loop schedule: no interval of
	// a document, a shard's or the merge, may count more operations and
	// missed sends than its shards' schedules produced in it
	// (checkArrivals). Nil for a run without one (a closed loop, or streams,
	// whose sections are bounded by nothing but MaxCount).
	Arrivals Arrivals
}

// MaxCoarsening is the largest factor by which a document's intervals may
// be longer than its spec's: a runner or manager of an earlier release
// coarsened a result too long for one ConfigMap by up to 64. This release
// stores results whole, in chunks (package protocol/chunks), and never
// coarsens one to fit; such older results stay readable.
const MaxCoarsening = 64

// maxFactor bounds how much longer a document's intervals may be than its
// spec's: an earlier release's runner coarsened its result by up to
// MaxCoarsening, and its controller the merged report by as much again.
const maxFactor = MaxCoarsening * MaxCoarsening

// Limits of a document's free text: its notes, the names of error codes,
// and the target and environment it records (which the status copies,
// with the API's limits).
const (
	maxNotes     = 64
	maxNoteBytes = 1024
	maxCodeBytes = 64
	maxInfoBytes = 128
)

// Bounds of any time a document holds, whatever the run: a time outside
// cannot be written in a status or a report (RFC 3339 stops at year 9999)
// and cannot be a benchmark's.
var (
	earliestTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	latestTime   = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// InvalidError says why a document cannot be part of the run.
type InvalidError struct{ Reason string }

func (e *InvalidError) Error() string { return e.Reason }

func invalid(format string, args ...any) error {
	return &InvalidError{Reason: fmt.Sprintf(format, args...)}
}

// Check reports why d cannot be part of the run e describes, or nil. It
// reads only the document's structure; its histograms are checked against
// their counts as they are merged (Merger).
func (e *Expect) Check(d *Document) error {
	switch {
	case !KnownSchemaVersion(d.SchemaVersion):
		return invalid("schema version %q is not %q, %q, %q or %q", truncateText(d.SchemaVersion), SchemaVersion, SchemaVersionStreams, SchemaVersionSearch, SchemaVersionV1)
	case d.Run != e.Run:
		return invalid("the result is of run %q, not %q", truncateText(d.Run), e.Run)
	case d.Stream != e.Stream:
		return invalid("the result is of stream %q, not %q", truncateText(d.Stream), e.Stream)
	case d.Spec.Hash() != e.Spec.Hash():
		return invalid("the result's spec differs from the run's (spec hashes %x and %x)", d.Spec.Hash(), e.Spec.Hash())
	}
	for _, check := range []func(*Document) error{e.checkTimes, e.checkShards, e.checkIntervals, e.checkArrivals, checkText, e.checkStreams} {
		if err := check(d); err != nil {
			return err
		}
	}
	return nil
}

// checkTimes checks the interval length, start and end against the run.
func (e *Expect) checkTimes(d *Document) error {
	factor := d.IntervalSeconds / e.Interval.Seconds()
	if e.Interval <= 0 || math.IsNaN(factor) || factor < 1 || factor > maxFactor || math.Abs(factor-math.Round(factor)) > 1e-9 {
		return invalid("intervalSeconds %g is not the spec's interval (%s) times 1 to %d", d.IntervalSeconds, e.Interval, maxFactor)
	}
	if !within(d.Start, e.Start.Add(-e.Skew), e.Start.Add(e.Skew)) {
		return invalid("start %s is not the run's (%s)", formatTime(d.Start), formatTime(e.Start))
	}
	if latest := e.latest(d); !within(d.End, d.Start, latest) {
		return invalid("end %s is not between the start and %s (the spec's duration and overrun)", formatTime(d.End), formatTime(latest))
	}
	return nil
}

// latest is the last time d may mention.
func (e *Expect) latest(d *Document) time.Time {
	l := d.Start.Add(e.Duration + e.Overrun + e.Skew)
	if !e.Latest.IsZero() && e.Latest.Before(l) {
		l = e.Latest
	}
	return l
}

// within says t is in [lo, hi] and in the range any result may hold.
func within(t, lo, hi time.Time) bool {
	return !t.Before(lo) && !t.After(hi) && !t.Before(earliestTime) && t.Before(latestTime)
}

func formatTime(t time.Time) string {
	if t.Year() < 0 || t.Year() > 9999 {
		return fmt.Sprintf("year %d", t.Year())
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// checkShards checks the shard entries: indexes of the run, each once,
// the one expected, and times within the document's.
func (e *Expect) checkShards(d *Document) error {
	if len(d.Shards) == 0 || len(d.Shards) > e.Shards {
		return invalid("the result describes %d shards, not 1 to %d", len(d.Shards), e.Shards)
	}
	seen := map[int]bool{}
	for _, s := range d.Shards {
		if seen[s.Index] {
			return invalid("shard %d appears twice", s.Index)
		}
		if err := e.checkShard(d, s); err != nil {
			return err
		}
		seen[s.Index] = true
	}
	return nil
}

// checkShard checks one shard entry: of the run, the one expected, its
// times within the document's, its figures in range.
func (e *Expect) checkShard(d *Document, s Shard) error {
	switch {
	case s.Count != e.Shards || s.Index < 0 || s.Index >= e.Shards:
		return invalid("shard %d of %d is not a shard of the run's %d", s.Index, s.Count, e.Shards)
	case e.Shard >= 0 && s.Index != e.Shard:
		return invalid("the result describes shard %d, not shard %d", s.Index, e.Shard)
	case !within(s.Started, d.Start.Add(-e.Skew), d.End.Add(e.Skew)) || !within(s.Ended, s.Started, d.End.Add(e.Skew)):
		return invalid("shard %d started %s and ended %s, not within the result's %s to %s",
			s.Index, formatTime(s.Started), formatTime(s.Ended), formatTime(d.Start), formatTime(d.End))
	case s.Missed > MaxCount || !rate(s.TargetRate):
		return invalid("shard %d: missed %d or target rate %g out of range", s.Index, s.Missed, s.TargetRate)
	case s.WallTimeSeconds < 0 || s.WallTimeSeconds > s.Ended.Sub(s.Started).Seconds()+e.Skew.Seconds():
		return invalid("shard %d: wall time %gs is not within its %s to %s", s.Index, s.WallTimeSeconds, formatTime(s.Started), formatTime(s.Ended))
	}
	return nil
}

// rate says r is a finite, non-negative rate.
func rate(r float64) bool { return r >= 0 && !math.IsInf(r, 0) }

// checkIntervals checks the time series: indexes ascending, each within
// the document's span up to its shards' latest end (the last interval may
// be partial), operations of the spec each once, counts in range.
func (e *Expect) checkIntervals(d *Document) error {
	// A runner of an earlier release counted operations where they
	// completed and drained intervals after the load's end until its last
	// operation returned: its series runs to the latest end.
	latest := d.End
	for _, s := range d.Shards {
		if s.Ended.After(latest) {
			latest = s.Ended
		}
	}
	last := int(math.Floor(latest.Sub(d.Start).Seconds() / d.IntervalSeconds))
	ops := map[string]bool{}
	for _, o := range e.Spec.Settings().Operations {
		ops[o.Name] = true
	}
	prev := -1
	for _, in := range d.Intervals {
		if in.Index <= prev || in.Index > last || in.Index >= MaxIntervals {
			return invalid("interval index %d is out of order or outside the run's %d intervals of %gs", in.Index, last+1, d.IntervalSeconds)
		}
		prev = in.Index
		if in.Missed > MaxCount || !rate(in.TargetRate) {
			return invalid("interval %d: missed %d or target rate %g out of range", in.Index, in.Missed, in.TargetRate)
		}
		seen := map[string]bool{}
		for _, op := range in.Operations {
			if !ops[op.Name] || seen[op.Name] {
				return invalid("interval %d: operation %q is not in the spec, or appears twice", in.Index, truncateText(op.Name))
			}
			seen[op.Name] = true
			if err := checkCounts(op.Counts); err != nil {
				return invalid("interval %d, operation %s: %v", in.Index, op.Name, err)
			}
		}
	}
	return nil
}

// checkCounts checks that c's counts and their sums fit MaxCount, and
// that rollbacks, which are successes, are no more than OK.
func checkCounts(c Counts) error {
	if c.Rollbacks > c.OK {
		return fmt.Errorf("%d rollbacks of %d successful operations", c.Rollbacks, c.OK)
	}
	for code := range c.Errors {
		if len(code) == 0 || len(code) > maxCodeBytes {
			return fmt.Errorf("error code %q is not a gRPC code name", truncateText(code))
		}
	}
	var zero Counts
	return zero.Add(c)
}

// checkText bounds the free text a document carries.
func checkText(d *Document) error {
	if err := checkTPCC(d); err != nil {
		return err
	}
	if len(d.Notes) > maxNotes {
		return invalid("the result has %d notes, more than %d", len(d.Notes), maxNotes)
	}
	for _, n := range d.Notes {
		if len(n) > maxNoteBytes {
			return invalid("a note is %d bytes, more than %d", len(n), maxNoteBytes)
		}
	}
	t, env := d.Target, d.Environment
	for _, s := range []string{t.Endpoint, t.Project, t.Instance, t.Database, t.InstanceConfig, t.Dialect,
		env.SpanbenchVersion, env.ClientVersion, env.GoVersion, env.Region} {
		// The status holds the Go version in 64 bytes, the others in 128.
		if len(s) > maxInfoBytes || (s == env.GoVersion && len(s) > 64) {
			return invalid("target or environment text %q is longer than the status holds", truncateText(s))
		}
	}
	for _, s := range d.Shards {
		if len(s.Host) > maxInfoBytes*2 {
			return invalid("shard %d: host is longer than %d bytes", s.Index, maxInfoBytes*2)
		}
	}
	return nil
}

// truncateText shortens untrusted text quoted in an error.
func truncateText(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
