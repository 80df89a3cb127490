package statuswrite

import (
	"testing"
	"time"
)

func TestTimeLeavesAnUnknownInstantOut(t *testing.T) {
	if got := Time(time.Time{}); got != nil {
		t.Errorf("Time(zero) = %v, want nil: an unknown instant would read as 1970 in the status", got)
	}
	at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	if got := Time(at); got == nil || !got.Time.Equal(at) {
		t.Errorf("Time(%v) = %v, want the same instant", at, got)
	}
}
