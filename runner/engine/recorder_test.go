package engine

import (
	"math/rand/v2"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"google.golang.org/grpc/codes"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
	"github.com/spanbench/spanbench/result/operation"
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
				r.record(w, 0, code, time.Duration(1+i%1000)*time.Microsecond, time.Microsecond, operation.Outcome{Rows: 1, Retries: 1})
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
		op, err := r.drain(0)
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
	r.record(0, 0, codes.OK, 3*time.Millisecond, time.Millisecond, operation.Outcome{Rows: 1})
	for w := range 4 {
		r.record(w, 0, codes.OK, 300*time.Microsecond, 200*time.Microsecond, operation.Outcome{NotFound: true})
	}
	op, err := r.drain(0)
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
		r.record(w, 0, codes.OK, 9*time.Millisecond, 8*time.Millisecond, operation.Outcome{Rows: 1, GFE: 5 * time.Millisecond, GFEMeasured: true})
	}
	r.record(0, 0, codes.OK, 9*time.Millisecond, 8*time.Millisecond, operation.Outcome{Rows: 1}) // no header
	r.record(1, 0, codes.Aborted, 9*time.Millisecond, 8*time.Millisecond, operation.Outcome{GFE: time.Millisecond, GFEMeasured: true})
	r.record(2, 0, codes.OK, 9*time.Millisecond, 8*time.Millisecond, operation.Outcome{NotFound: true, GFE: time.Millisecond, GFEMeasured: true})
	op, err := r.drain(0)
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
	r.record(0, 0, codes.OK, 9*time.Millisecond, 8*time.Millisecond, operation.Outcome{Rows: 1})
	if op, err = r.drain(0); err != nil || op.GFELatencyHistogram != "" {
		t.Errorf("an interval whose operations carried no GFE timing has a GFE histogram %q (err %v)", op.GFELatencyHistogram, err)
	}
}

// TestRecorderIntervalsAreThoseOfHDRHistograms: the interval entry the
// recorder drains (counts, figures, encoded histograms) is bit for bit the
// one built from HDR histograms fed the same values, as the engine wrote
// them before it recorded into paged histograms; over two intervals, so
// that reused windows are checked too.
func TestRecorderIntervalsAreThoseOfHDRHistograms(t *testing.T) {
	r := newOpRecorder("read")
	rng := rand.New(rand.NewPCG(5, 6))
	lats := lognormalLatencies(30_000, 5*time.Millisecond, 0.8)
	for interval := range 2 {
		lat, svc, errLat, gfe := histogram.New(), histogram.New(), histogram.New(), histogram.New()
		var c result.Counts
		for i, l := range lats[interval*15_000:][:15_000] {
			s, g := l-l/4, l/3
			switch k := rng.IntN(100); {
			case k < 2:
				r.record(i, 0, codes.Unavailable, l, s, operation.Outcome{})
				c.Errors = map[string]uint64{codes.Unavailable.String(): c.Errors[codes.Unavailable.String()] + 1}
				_ = errLat.RecordValue(histogram.Micros(l))
			default:
				r.record(i, 0, codes.OK, l, s, operation.Outcome{Rows: 1, GFE: g, GFEMeasured: k < 50})
				c.OK++
				c.Rows++
				_ = lat.RecordValue(histogram.Micros(l))
				_ = svc.RecordValue(histogram.Micros(s))
				if k < 50 {
					_ = gfe.RecordValue(histogram.Micros(g))
				}
			}
		}
		got, err := r.drain(0)
		if err != nil {
			t.Fatal(err)
		}
		want := hdrInterval(t, c, lat, svc, errLat, gfe)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("interval %d: the recorder drained\n%+v\nwant the entry of HDR histograms of the same values\n%+v", interval, got, want)
		}
	}
}

// hdrInterval is the interval entry of HDR histograms.
func hdrInterval(t *testing.T, c result.Counts, lat, svc, errLat, gfe *hdr.Histogram) result.IntervalOperation {
	t.Helper()
	op, err := result.NewIntervalOperation("read", c, lat, svc, errLat)
	if err == nil {
		err = op.SetGFELatency(gfe)
	}
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// TestARecorderHoldsMemoryForWhatItRecorded: a recorder whose operations
// all took about 5 ms (a few dozen buckets) holds, in each window (a
// stripe's, the spare and the sum), a page table and a page or two per
// histogram in use, not full-geometry histograms (147 KiB each, three a
// window); its errors' histogram, with no errors, holds nothing.
func TestARecorderHoldsMemoryForWhatItRecorded(t *testing.T) {
	windows := int64(2*runtime.GOMAXPROCS(0) + 2)
	lats := lognormalLatencies(100_000, 5*time.Millisecond, 0.01)
	held := recorderHeld(func(r *opRecorder) {
		for range 2 {
			for i, lat := range lats {
				r.record(i, 0, codes.OK, lat, lat, operation.Outcome{Rows: 1})
			}
			if _, err := r.drain(0); err != nil {
				t.Fatal(err)
			}
		}
	})
	runtime.KeepAlive(lats) // alive while held is measured, so not freed in its span
	t.Logf("a recorder of %d windows holds %d bytes", windows, held)
	// Per window: two histograms in use, each a page table (1.1 KiB) and a
	// page or two (256 B each), with room for the runtime's own noise.
	if limit := windows * 8 << 10; held > limit {
		t.Errorf("a recorder of %d windows holds %d KiB after 200,000 latencies around 5 ms, want at most %d KiB (8 KiB a window)",
			windows, held>>10, limit>>10)
	}
}
