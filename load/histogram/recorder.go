package histogram

import (
	"runtime"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Striped records values from many goroutines into a few independently
// locked histograms (stripes) and merges them on demand. A worker always uses
// its own stripe, so workers never wait on one shared lock; a stripe's lock is
// contended only by the workers that share it and by the periodic Drain.
//
// A histogram per worker would avoid even that, but at 100-200 KiB each it
// costs gigabytes with hundreds of in-flight workers and several operations.
type Striped struct {
	stripes []stripe
}

type stripe struct {
	mu sync.Mutex
	h  *hdr.Histogram
	_  [40]byte // keep neighbouring stripes' locks off one cache line
}

// NewStriped returns a recorder with two stripes per CPU.
func NewStriped() *Striped {
	n := 2 * runtime.GOMAXPROCS(0)
	s := &Striped{stripes: make([]stripe, n)}
	for i := range s.stripes {
		s.stripes[i].h = New()
	}
	return s
}

// Record adds one value for worker w.
func (s *Striped) Record(w int, d time.Duration) {
	st := &s.stripes[w%len(s.stripes)]
	v := Micros(d)
	st.mu.Lock()
	_ = st.h.RecordValue(v) // cannot fail: Micros clamps to the range
	st.mu.Unlock()
}

// Drain merges every stripe into dst and empties the stripes, so each value
// is reported exactly once.
func (s *Striped) Drain(dst *hdr.Histogram) {
	for i := range s.stripes {
		st := &s.stripes[i]
		st.mu.Lock()
		dst.Merge(st.h)
		st.h.Reset()
		st.mu.Unlock()
	}
}
