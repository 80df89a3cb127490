package engine

import (
	"runtime"
	"sync"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
	"github.com/spanbench/spanbench/result/operation"
)

// numCodes is the number of gRPC codes (OK through Unauthenticated).
const numCodes = 17

// opRecorder accumulates one operation's measurements per interval, in the
// manner of CockroachDB's workload/histogram: workers record into a few
// independently locked stripes (a worker always uses its own), each holding
// a window per interval still open (an operation is recorded in the
// interval of its intended send, which may have ended while it ran), and an
// interval's drain takes its window out of each stripe under the stripe's
// lock and merges it outside. A window holds the counters and the
// histograms together, so an operation's count and its latency always land
// in the same interval.
//
// A window per worker would avoid even the stripes' locks, but each
// window's histograms hold pages of the buckets its values fell in (tens of
// KiB for a busy operation), which hundreds of in-flight workers and
// several operations would multiply.
type opRecorder struct {
	name    string
	stripes []stripe
	// sum belongs to the single draining goroutine: the interval's merge.
	sum *window
}

// stripe holds its workers' windows by interval: the intervals still open,
// usually one or two, and emptied windows to reuse.
type stripe struct {
	mu   sync.Mutex
	open map[int]*window
	free []*window
	_    [40]byte // keep neighbouring stripes' locks off one cache line
}

// window returns the stripe's window of interval k, opening one (an
// emptied one if there is) if need be. The stripe is locked.
func (s *stripe) window(k int) *window {
	if w := s.open[k]; w != nil {
		return w
	}
	var w *window
	if n := len(s.free); n > 0 {
		w, s.free = s.free[n-1], s.free[:n-1]
	} else {
		w = newWindow()
	}
	s.open[k] = w
	return w
}

// window is what one stripe recorded in the current interval. Its
// histograms take memory for the buckets they hold only: errorLat none
// while there are no errors, gfe none on the emulator (which never sends
// the GFE's timing).
type window struct {
	latency, service, errorLat histogram.Paged
	// gfe is the GFE's timing of successful operations whose responses
	// carried it.
	gfe                               histogram.Paged
	ok, notFound, rows, retries, muts uint64
	rollbacks                         uint64
	errs                              [numCodes]uint64
}

func newWindow() *window { return &window{} }

// newOpRecorder returns a recorder with two stripes per CPU.
func newOpRecorder(name string) *opRecorder {
	r := &opRecorder{name: name, stripes: make([]stripe, 2*runtime.GOMAXPROCS(0)), sum: newWindow()}
	for i := range r.stripes {
		r.stripes[i].open = map[int]*window{}
	}
	return r
}

// record adds one finished operation to interval k. Latency runs from the intended send
// time, service time from the actual one. A not-found read is neither OK
// nor an error; its latency joins the errors' (the latency of operations
// that did not succeed), so that the OK percentiles stay those of reads
// that returned data: an empty stale read is several times faster.
func (r *opRecorder) record(worker, k int, code codes.Code, latency, service time.Duration, out operation.Outcome) {
	lat, svc := histogram.Micros(latency), histogram.Micros(service)
	stripe := &r.stripes[worker%len(r.stripes)]
	stripe.mu.Lock()
	w := stripe.window(k)
	w.retries += uint64(out.Retries)
	switch {
	case code != codes.OK:
		w.errs[min(int(code), numCodes-1)]++
		w.errorLat.RecordValue(lat)
	case out.NotFound:
		w.notFound++
		w.errorLat.RecordValue(lat)
	default:
		w.ok++
		if out.RolledBack {
			w.rollbacks++
		}
		w.rows += uint64(out.Rows)
		w.muts += uint64(out.Mutations)
		w.latency.RecordValue(lat)
		w.service.RecordValue(svc)
		if out.GFEMeasured {
			w.gfe.RecordValue(histogram.Micros(out.GFE))
		}
	}
	stripe.mu.Unlock()
}

// drain moves what was recorded in interval k into an interval entry; the
// caller knows that nothing more will be. Only one goroutine drains.
func (r *opRecorder) drain(k int) (result.IntervalOperation, error) {
	for i := range r.stripes {
		stripe := &r.stripes[i]
		stripe.mu.Lock()
		w := stripe.open[k]
		delete(stripe.open, k)
		stripe.mu.Unlock()
		if w == nil {
			continue
		}
		r.sum.add(w)
		w.reset()
		stripe.mu.Lock()
		stripe.free = append(stripe.free, w)
		stripe.mu.Unlock()
	}
	defer r.sum.reset()
	c := result.Counts{OK: r.sum.ok, NotFound: r.sum.notFound, Rows: r.sum.rows, Retries: r.sum.retries, Mutations: r.sum.muts,
		Rollbacks: r.sum.rollbacks}
	for code, n := range r.sum.errs {
		if n > 0 {
			if c.Errors == nil {
				c.Errors = map[string]uint64{}
			}
			c.Errors[codes.Code(code).String()] += n
		}
	}
	op, err := result.NewIntervalOperationCompact(r.name, c, r.sum.latency.Compact(), r.sum.service.Compact(), r.sum.errorLat.Compact())
	if err != nil {
		return op, err
	}
	return op, op.SetGFELatencyCompact(r.sum.gfe.Compact())
}

// add merges o into w.
func (w *window) add(o *window) {
	w.latency.Merge(&o.latency)
	w.service.Merge(&o.service)
	w.errorLat.Merge(&o.errorLat)
	w.gfe.Merge(&o.gfe)
	w.ok += o.ok
	w.notFound += o.notFound
	w.rows += o.rows
	w.retries += o.retries
	w.muts += o.muts
	w.rollbacks += o.rollbacks
	for i, n := range o.errs {
		w.errs[i] += n
	}
}

// reset empties w, keeping its histograms' pages in use (see
// histogram.Paged.Reset).
func (w *window) reset() {
	w.latency.Reset()
	w.service.Reset()
	w.errorLat.Reset()
	w.gfe.Reset()
	*w = window{latency: w.latency, service: w.service, errorLat: w.errorLat, gfe: w.gfe}
}
