package serverfigures

import (
	"errors"
	"time"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/spanner/serverstats"
)

// clientMinuteCounts are the client's exact counts of logical operations
// (successful, not found or failed, each once whatever its retries) per
// statistics interval of g (minutes, or the coarser tables' intervals) of
// w, from the report's intervals that overlap w's whole statistics
// intervals; apportioned counts those split between two. A streams run's
// report keeps its intervals in its stream sections, each counted from
// its own start: Spanner counts an operation's executions under its tag
// whichever stream sent it, so the streams' counts add up per operation.
// tags gives each operation's tags (statsTags).
func clientMinuteCounts(doc *result.Document, w serverstats.Window, g serverstats.Granularity,
	tags func(result.Operation) (request, transaction string)) (
	[]serverstats.Operation, int64, error) {
	iv := time.Duration(doc.IntervalSeconds * float64(time.Second))
	if iv <= 0 {
		return nil, 0, errors.New("the report has no interval length")
	}
	series := []intervalSeries{{start: doc.Start, intervals: doc.Intervals}}
	if doc.HasStreams() {
		series = series[:0]
		for _, s := range doc.Streams {
			series = append(series, intervalSeries{start: s.Start, intervals: s.Intervals})
		}
	}
	perOp := map[string]map[time.Time]int64{}
	var apportioned int64
	for _, s := range series {
		ap, err := s.addCounts(perOp, iv, w.AlignedTo(g.Length), g.Length)
		if err != nil {
			return nil, 0, err
		}
		apportioned += ap
	}
	var ops []serverstats.Operation
	for _, t := range doc.Totals {
		m := perOp[t.Name]
		if m == nil {
			m = map[time.Time]int64{}
		}
		req, txn := tags(t)
		ops = append(ops, serverstats.Operation{Name: t.Name, RequestTag: req, TransactionTag: txn, Ops: m})
	}
	return ops, apportioned, nil
}

// intervalSeries is one time series of a report: the whole run's, or one
// stream's.
type intervalSeries struct {
	start     time.Time
	intervals []result.Interval
}

// addCounts adds the series' counts per operation and statistics interval
// (of length) within the aligned window a into perOp, and returns how many
// operations were apportioned between two statistics intervals.
func (s intervalSeries) addCounts(perOp map[string]map[time.Time]int64, iv time.Duration, a serverstats.Window, length time.Duration) (int64, error) {
	first := max(int(a.Start.Sub(s.start)/iv), 0)
	last := int(a.End.Sub(s.start) / iv) // the interval holding the window's end
	if last < first {
		return 0, nil // the series lies outside the window
	}
	counts := map[string][]int64{}
	for _, in := range s.intervals {
		if in.Index < first || in.Index > last {
			continue
		}
		for _, o := range in.Operations {
			c := counts[o.Name]
			if c == nil {
				c = make([]int64, last-first+1)
				counts[o.Name] = c
			}
			n, okFound := addCount(o.OK, o.NotFound)
			n, okErrors := addCount(n, o.ErrorCount())
			if !okFound || !okErrors {
				return 0, errors.New("an interval's counts overflow")
			}
			c[in.Index-first] += int64(n)
		}
	}
	start := s.start.Add(time.Duration(first) * iv)
	var apportioned int64
	for name, c := range counts {
		m, ap, err := serverstats.IntervalCounts(start, iv, c, length)
		if err != nil {
			return 0, err
		}
		apportioned += ap
		if perOp[name] == nil {
			perOp[name] = map[time.Time]int64{}
		}
		for t, n := range m {
			perOp[name][t] += n
		}
	}
	return apportioned, nil
}

func addCount(a, b uint64) (uint64, bool) {
	s := a + b
	return s, s >= a && s <= result.MaxCount
}
