package engine

import (
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/spanbench/spanbench/load/histogram"
	"github.com/spanbench/spanbench/load/operation"
	"github.com/spanbench/spanbench/load/result"
)

// numCodes is the number of gRPC codes (OK through Unauthenticated).
const numCodes = 17

// opRecorder accumulates one operation's measurements for the current
// interval. Counters are atomics and histograms striped, so the workers
// recording never wait on one shared lock.
type opRecorder struct {
	name                       string
	latency, service, errorLat *histogram.Striped
	ok, rows                   atomic.Uint64
	retries, muts              atomic.Uint64
	errs                       [numCodes]atomic.Uint64
}

func newOpRecorder(name string) *opRecorder {
	return &opRecorder{name: name, latency: histogram.NewStriped(), service: histogram.NewStriped(), errorLat: histogram.NewStriped()}
}

// record adds one finished operation. Latency runs from the intended send
// time, service time from the actual one.
func (r *opRecorder) record(worker int, code codes.Code, latency, service time.Duration, out operation.Outcome) {
	r.retries.Add(uint64(out.Retries))
	if code != codes.OK {
		r.errs[min(int(code), numCodes-1)].Add(1)
		r.errorLat.Record(worker, latency)
		return
	}
	r.ok.Add(1)
	r.rows.Add(uint64(out.Rows))
	r.muts.Add(uint64(out.Mutations))
	r.latency.Record(worker, latency)
	r.service.Record(worker, service)
}

// drain moves what was recorded since the last drain into an interval entry.
func (r *opRecorder) drain() (result.IntervalOperation, error) {
	c := result.Counts{OK: r.ok.Swap(0), Rows: r.rows.Swap(0), Retries: r.retries.Swap(0), Mutations: r.muts.Swap(0)}
	for code := range r.errs {
		if n := r.errs[code].Swap(0); n > 0 {
			if c.Errors == nil {
				c.Errors = map[string]uint64{}
			}
			c.Errors[codes.Code(code).String()] += n
		}
	}
	lat, svc, errLat := histogram.New(), histogram.New(), histogram.New()
	r.latency.Drain(lat)
	r.service.Drain(svc)
	r.errorLat.Drain(errLat)
	return result.NewIntervalOperation(r.name, c, lat, svc, errLat)
}
