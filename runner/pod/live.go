package pod

import (
	"context"
	"time"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
	"github.com/spanbench/spanbench/runner/protocol"
)

// liveReporter turns the engine's complete intervals into the shard's live
// reports (protocol.LiveReport), one per protocol.LiveDue interval, and
// writes the latest in the shard map from its own goroutine (write): the
// engine's draining goroutine never waits for the API server, and a report
// overtaken by a newer one before it was written is dropped, never queued.
type liveReporter struct {
	start    time.Time
	interval time.Duration
	// operations and errors are counted over every interval drained so
	// far; they are the drain goroutine's.
	operations, errors uint64
	dec                histogram.Decoder
	enc                histogram.Encoder
	latest             chan protocol.LiveReport
}

func newLiveReporter(start time.Time, interval time.Duration) *liveReporter {
	return &liveReporter{start: start, interval: interval, latest: make(chan protocol.LiveReport, 1)}
}

// drained counts interval in and, when it is due, hands its report to
// write. It is the engine's Drained.
func (l *liveReporter) drained(in result.Interval) {
	var ops uint64
	latency := histogram.NewCompact()
	for _, op := range in.Operations {
		ops += op.OK + op.NotFound + op.ErrorCount()
		l.errors += op.ErrorCount()
		_ = l.dec.AddTo(latency, op.LatencyHistogram) // the engine's own encoding: cannot fail
	}
	l.operations += ops
	if !protocol.LiveDue(in.Index, l.interval) {
		return
	}
	rep := protocol.LiveReport{Start: l.start, Interval: in.Index, Operations: l.operations, Errors: l.errors, IntervalOperations: ops}
	if latency.TotalCount() > 0 {
		rep.Latency, _ = l.enc.Encode(latency) // a histogram the decoder just built: cannot fail
	}
	for {
		select {
		case l.latest <- rep:
			return
		default:
			select { // drop the report write has not taken yet
			case <-l.latest:
			default:
			}
		}
	}
}

// write writes each report drained hands over into the shard map, once
// (a live report is soon replaced: a failed write is logged, not
// retried), until ctx ends.
func (l *liveReporter) write(ctx context.Context, r *runner) {
	for {
		select {
		case <-ctx.Done():
			return
		case rep := <-l.latest:
			m, err := protocol.EncodeLiveReport(rep)
			if err == nil {
				err = patchMap(ctx, r.c, r.own, 1, m)
			}
			if err != nil && ctx.Err() == nil {
				r.log.V(1).Info("could not write the live report", "interval", rep.Interval, "error", err.Error())
			}
		}
	}
}
