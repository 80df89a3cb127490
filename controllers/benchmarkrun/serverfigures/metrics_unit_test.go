package serverfigures

import (
	"strings"
	"testing"
	"time"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/monitoring"
)

// TestServerMetricsStatusStaysWithinTheSchemasBounds: the figures come
// from a service; the status the API server accepts has bounded lists and
// strings, so what does not fit is cut and said so.
func TestServerMetricsStatusStaysWithinTheSchemasBounds(t *testing.T) {
	res := &monitoring.Result{Alignment: time.Minute}
	for i := range 40 {
		res.CPU = append(res.CPU, monitoring.PriorityCPU{Priority: "high", Location: strings.Repeat("x", 100), Mean: float64(i)})
	}
	for range 12 {
		res.Notes = append(res.Notes, strings.Repeat("é", 300))
	}
	res.CPU[0].Mean = -1
	s := serverMetricsStatus(res, serverWarmUp(res.Minutes, nil))
	if len(s.CPU) != v1alpha1.MaxServerMetricsItems || len(s.CPU[1].Location) != 64 {
		t.Errorf("cpu kept %d entries with locations of %d bytes, want %d of at most 64", len(s.CPU), len(s.CPU[1].Location), v1alpha1.MaxServerMetricsItems)
	}
	if s.CPU[0].MeanPercent != "0.0" || s.CPU[1].MeanPercent != "100.0" {
		t.Errorf("a negative and a whole fraction read %q and %q, want 0.0 and 100.0", s.CPU[0].MeanPercent, s.CPU[1].MeanPercent)
	}
	if len(s.Notes) != maxServerMetricsNotes {
		t.Fatalf("%d notes kept, want %d", len(s.Notes), maxServerMetricsNotes)
	}
	if !strings.HasPrefix(s.Notes[0], "cpu: 32 of 40") {
		t.Errorf("the first note is %.40q..., want the cut of cpu said first", s.Notes[0])
	}
	for _, n := range s.Notes[1:] {
		if len(n) > maxNoteLength || !strings.HasSuffix(n, "é") {
			t.Fatalf("a note of %d bytes, or cut inside a character: %q", len(n), n[len(n)-4:])
		}
	}
}
