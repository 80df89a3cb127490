package monitoring_test

import (
	"testing"

	"github.com/spanbench/spanbench/spanner/monitoring"
)

func TestWindowAskedIsWholeMinutes(t *testing.T) {
	for _, tc := range []struct {
		name       string
		w          monitoring.Window
		want       monitoring.Window
		wantInside bool
	}{
		{"on boundaries", monitoring.Window{Start: at(12, 0, 0), End: at(12, 2, 0)},
			monitoring.Window{Start: at(12, 0, 0), End: at(12, 2, 0)}, true},
		{"partial minutes at both ends", monitoring.Window{Start: at(11, 59, 30), End: at(12, 2, 10)},
			monitoring.Window{Start: at(12, 0, 0), End: at(12, 2, 0)}, true},
		{"no whole minute: the enclosing ones", monitoring.Window{Start: at(12, 0, 30), End: at(12, 1, 30)},
			monitoring.Window{Start: at(12, 0, 0), End: at(12, 2, 0)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, inside := tc.w.Aligned()
			if !got.Start.Equal(tc.want.Start) || !got.End.Equal(tc.want.End) || inside != tc.wantInside {
				t.Errorf("Aligned() = [%s, %s] inside %v, want [%s, %s] inside %v",
					got.Start, got.End, inside, tc.want.Start, tc.want.End, tc.wantInside)
			}
		})
	}
}

func TestWindowValidate(t *testing.T) {
	for _, w := range []monitoring.Window{
		{Start: at(12, 0, 0), End: at(12, 0, 0)},
		{Start: at(12, 0, 0), WarmUpEnd: at(12, 5, 0), End: at(12, 2, 0)},
	} {
		if err := w.Validate(); err == nil {
			t.Errorf("window %+v was accepted", w)
		}
	}
}
