package dataset

import "testing"

// TestWatermarkNeverPassesABatchInFlight: batches finish out of order; the
// watermark stays at the lowest one not written, also when it failed (a
// failed batch is never marked done).
func TestWatermarkNeverPassesABatchInFlight(t *testing.T) {
	b := &batches{next: 100, to: 1050, size: 300, inFlight: map[int64]bool{}}
	if w := b.watermark(); w != 100 {
		t.Fatalf("watermark before any claim = %d, want the range's start, 100", w)
	}
	var claimed [][2]int64
	for {
		lo, hi, ok := b.claim()
		if !ok {
			break
		}
		claimed = append(claimed, [2]int64{lo, hi})
	}
	want := [][2]int64{{100, 400}, {400, 700}, {700, 1000}, {1000, 1050}}
	if len(claimed) != len(want) {
		t.Fatalf("claimed %v, want %v", claimed, want)
	}
	for i := range want {
		if claimed[i] != want[i] {
			t.Fatalf("claimed %v, want %v", claimed, want)
		}
	}
	b.done(400, 700)
	b.done(1000, 1050)
	if w := b.watermark(); w != 100 {
		t.Errorf("with [100,400) in flight the watermark is %d, want 100", w)
	}
	b.done(100, 400)
	if w := b.watermark(); w != 700 {
		t.Errorf("with [700,1000) in flight (or failed) the watermark is %d, want 700", w)
	}
	b.done(700, 1000)
	if w, n := b.watermark(), b.loadedCount.Load(); w != 1050 || n != 950 {
		t.Errorf("after every batch: watermark %d, loaded %d; want 1050 and 950", w, n)
	}
}
