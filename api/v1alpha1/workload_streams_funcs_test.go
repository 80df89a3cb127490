package v1alpha1

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func streamsWorkload() WorkloadSpec {
	return WorkloadSpec{
		Type:       WorkloadYCSB,
		Operations: []OperationSpec{{Type: OpRead, Weight: 1}, {Type: OpUpdate, Weight: 1}},
		Duration:   &metav1.Duration{Duration: 10 * time.Minute},
		Streams: []StreamSpec{
			{Name: "online", Operations: []StreamOperation{{Name: "read", Weight: 1}}, Load: LoadSpec{Rate: ptr.To[int32](800)}},
			{Name: "batch", Operations: []StreamOperation{{Name: "update", Weight: 1}}, Load: LoadSpec{Concurrency: ptr.To[int32](1)},
				Iterations: ptr.To[int64](1000), StartOffset: &metav1.Duration{Duration: 2 * time.Minute}},
		},
	}
}

func TestResolvedDefaultsEachStreamsLoadNotTheWorkloads(t *testing.T) {
	r := streamsWorkload()
	r = r.Resolved()
	if !r.Load.isZero() {
		t.Errorf("a streams workload resolved with a load of its own: %+v; it must stay absent, or the resolved spec is refused", r.Load)
	}
	if got := r.Streams[0].Load; got.Arrivals != ArrivalsUniform || got.MaxInFlight == nil || *got.MaxInFlight != DefaultMaxInFlight {
		t.Errorf("the open-loop stream's load was not defaulted: %+v", got)
	}
	if got := r.Streams[1].Load; got.Arrivals != "" || got.MaxInFlight == nil {
		t.Errorf("the closed-loop stream's load: %+v, want no arrivals and a maxInFlight", got)
	}
	if errs := r.Validate(nil); len(errs) != 0 {
		t.Errorf("the resolved streams workload is refused: %v", errs)
	}
}

func TestStreamWindow(t *testing.T) {
	w := streamsWorkload()
	if off, n := w.Streams[1].Window(10 * time.Minute); off != 2*time.Minute || n != 8*time.Minute {
		t.Errorf("a stream with a start offset and no duration runs %s from %s, want 8m0s from 2m0s", n, off)
	}
	if off, n := w.Streams[0].Window(10 * time.Minute); off != 0 || n != 10*time.Minute {
		t.Errorf("a stream with neither runs %s from %s, want the whole run", n, off)
	}
}
