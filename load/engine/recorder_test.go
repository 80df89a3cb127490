package engine

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/spanbench/spanbench/load/histogram"
	"github.com/spanbench/spanbench/load/operation"
	"github.com/spanbench/spanbench/load/result"
)

// TestAnIntervalCountsEachOperationWithItsLatency hammers interval
// boundaries: many workers record while the interval is drained again and
// again, and in every interval the counters must agree with the histograms.
// An operation counted in one interval and measured in the next would make
// per-interval throughput and percentiles disagree.
func TestAnIntervalCountsEachOperationWithItsLatency(t *testing.T) {
	r := newOpRecorder("read")
	const workers, boundaries = 8, 50
	var stop atomic.Bool
	recorded := make([]uint64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				code := codes.OK
				if i%4 == 0 {
					code = codes.Aborted
				}
				r.record(w, code, time.Duration(1+i%1000)*time.Microsecond, time.Microsecond, operation.Outcome{Rows: 1, Retries: 1})
				recorded[w]++
				runtime.Gosched() // let the drains in: this machine may have one core
			}
		})
	}
	var total uint64
	deadline := time.Now().Add(10 * time.Second)
	for i := range boundaries + 1 {
		if i == boundaries || time.Now().After(deadline) {
			stop.Store(true)
			wg.Wait() // the last drain takes what the workers recorded after the previous one
		}
		op, err := r.drain()
		if err != nil {
			t.Fatal(err)
		}
		total += checkInterval(t, i, op)
		if stop.Load() {
			break
		}
	}
	var want uint64
	for _, n := range recorded {
		want += n
	}
	if total != want {
		t.Errorf("the intervals counted %d operations in all; the workers recorded %d", total, want)
	}
}

// checkInterval checks one interval's counters against its histograms and
// returns the operations it counted.
func checkInterval(t *testing.T, i int, op result.IntervalOperation) uint64 {
	t.Helper()
	lat, svc, errLat := count(t, op.LatencyHistogram), count(t, op.ServiceHistogram), count(t, op.ErrorLatencyHistogram)
	errs := op.Errors[codes.Aborted.String()]
	if op.OK != lat || op.OK != svc || errs != errLat || op.Rows != op.OK || op.Retries != op.OK+errs {
		t.Fatalf("interval %d: counted %d OK (%d rows, %d retries) and %d errors, but its histograms hold %d latencies, %d service times and %d error latencies",
			i, op.OK, op.Rows, op.Retries, errs, lat, svc, errLat)
	}
	return op.OK + errs
}

func count(t *testing.T, enc string) uint64 {
	t.Helper()
	if enc == "" {
		return 0
	}
	h, err := histogram.Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	return uint64(h.TotalCount())
}

// TestANotFoundReadIsNeitherOKNorAnError: an outcome that found no row of
// keys expected to exist is counted as not-found, its latency with the
// unsuccessful operations', and neither OK (nor its rows and latency) nor
// an error code.
func TestANotFoundReadIsNeitherOKNorAnError(t *testing.T) {
	r := newOpRecorder("read")
	r.record(0, codes.OK, 3*time.Millisecond, time.Millisecond, operation.Outcome{Rows: 1})
	for w := range 4 {
		r.record(w, codes.OK, 300*time.Microsecond, 200*time.Microsecond, operation.Outcome{NotFound: true})
	}
	op, err := r.drain()
	if err != nil {
		t.Fatal(err)
	}
	lat, errLat := count(t, op.LatencyHistogram), count(t, op.ErrorLatencyHistogram)
	if op.OK != 1 || op.NotFound != 4 || op.Rows != 1 || len(op.Errors) != 0 || lat != 1 || errLat != 4 {
		t.Errorf("1 read with a row and 4 not-found: counted OK %d, not-found %d, rows %d, errors %v; %d latencies, %d error latencies; "+
			"want 1, 4, 1, none; 1 latency and 4 error latencies", op.OK, op.NotFound, op.Rows, op.Errors, lat, errLat)
	}
}

// TestGFELatencyIsRecordedForSuccessfulOperationsThatCarriedIt: the GFE's
// timing goes into its own histogram, for successful operations whose
// responses carried it only; an interval where none did has none (not a
// histogram of zeros).
func TestGFELatencyIsRecordedForSuccessfulOperationsThatCarriedIt(t *testing.T) {
	r := newOpRecorder("read")
	for w := range 4 {
		r.record(w, codes.OK, 9*time.Millisecond, 8*time.Millisecond, operation.Outcome{Rows: 1, GFE: 5 * time.Millisecond, GFEMeasured: true})
	}
	r.record(0, codes.OK, 9*time.Millisecond, 8*time.Millisecond, operation.Outcome{Rows: 1}) // no header
	r.record(1, codes.Aborted, 9*time.Millisecond, 8*time.Millisecond, operation.Outcome{GFE: time.Millisecond, GFEMeasured: true})
	r.record(2, codes.OK, 9*time.Millisecond, 8*time.Millisecond, operation.Outcome{NotFound: true, GFE: time.Millisecond, GFEMeasured: true})
	op, err := r.drain()
	if err != nil {
		t.Fatal(err)
	}
	h, err := histogram.Decode(op.GFELatencyHistogram)
	if err != nil {
		t.Fatalf("the interval's GFE histogram: %v", err)
	}
	if h.TotalCount() != 4 || !h.ValuesAreEquivalent(h.Min(), 5000) || !h.ValuesAreEquivalent(h.Max(), 5000) {
		t.Errorf("4 OK operations with 5 ms of GFE time: the histogram holds %d values from %d to %d µs", h.TotalCount(), h.Min(), h.Max())
	}
	r.record(0, codes.OK, 9*time.Millisecond, 8*time.Millisecond, operation.Outcome{Rows: 1})
	if op, err = r.drain(); err != nil || op.GFELatencyHistogram != "" {
		t.Errorf("an interval whose operations carried no GFE timing has a GFE histogram %q (err %v)", op.GFELatencyHistogram, err)
	}
}
