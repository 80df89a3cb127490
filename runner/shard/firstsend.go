package shard

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/spanbench/spanbench/runner/result"
	"github.com/spanbench/spanbench/runner/workload"
)

// firstSend records when a shard really began sending. The engine records
// the scheduled start as the shard's start; the skew between shards, which
// the run must report, is only visible in when each one's first request
// actually went out.
type firstSend struct {
	at atomic.Pointer[time.Time]
}

// wrap returns w with every operation marking the first send. After the
// first, the cost on the hot path is one atomic load.
func (f *firstSend) wrap(w *workload.Workload) *workload.Workload {
	ops := make([]*workload.Op, 0, len(w.Ops()))
	for _, op := range w.Ops() {
		ops = append(ops, workload.Func(op.Spec, func(ctx context.Context, rng *rand.Rand) (workload.Outcome, error) {
			f.mark()
			return op.Do(ctx, rng)
		}))
	}
	wrapped := workload.FromOps(ops...)
	wrapped.Schema = w.Schema
	return wrapped
}

func (f *firstSend) mark() {
	if f.at.Load() == nil {
		now := time.Now()
		f.at.CompareAndSwap(nil, &now)
	}
}

// record sets the shard's Started to the first send. A shard that sent
// nothing keeps the scheduled start.
func (f *firstSend) record(d *result.Document) {
	if at := f.at.Load(); at != nil && len(d.Shards) == 1 {
		d.Shards[0].Started = *at
	}
}
