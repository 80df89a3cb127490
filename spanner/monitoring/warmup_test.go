package monitoring_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/spanbench/spanbench/spanner/monitoring"
)

// rampThenSteady is a synthetic server series with a known truth: for
// `ramp` minutes the rate climbs and p99 falls by a quarter a minute as
// splits form, then both
// hold within ±3 % (seeded noise).
func rampThenSteady(seed uint64, ramp, steady int) []monitoring.MinutePoint {
	r := rand.New(rand.NewPCG(seed, 0))
	noise := func() float64 { return 1 + (r.Float64()*2-1)*0.03 }
	var out []monitoring.MinutePoint
	for i := range ramp + steady {
		rate, p99 := 120000.0, 8*time.Millisecond
		if i < ramp {
			// Each ramp minute 25 % below the next in rate, above in p99.
			f := math.Pow(1.25, float64(ramp-i))
			rate /= f
			p99 = time.Duration(float64(p99) * f)
		}
		out = append(out, monitoring.MinutePoint{
			End:      at(12, i+1, 0),
			Requests: int64(rate * noise()),
			P99:      time.Duration(float64(p99) * noise()),
		})
	}
	return out
}

func TestDetectServerWarmUpFindsWhereTheRampEnds(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		got := monitoring.DetectServerWarmUp(rampThenSteady(seed, 6, 10), monitoring.WarmUpRule{})
		// The 7th minute (12:06-12:07) is the first steady one.
		if !got.Settled || !got.SettledAt.Equal(at(12, 6, 0)) {
			t.Fatalf("seed %d: the server warm-up = %+v, want settled at 12:06:00 (after a 6-minute ramp)", seed, got)
		}
	}
}

func TestDetectServerWarmUpNeverSettlesOnARamp(t *testing.T) {
	got := monitoring.DetectServerWarmUp(rampThenSteady(1, 12, 0), monitoring.WarmUpRule{})
	if got.Settled {
		t.Fatalf("a series that only ramps settled at %s", got.SettledAt)
	}
}

func TestDetectServerWarmUpNeedsLatency(t *testing.T) {
	m := rampThenSteady(1, 0, 5)
	for i := range m {
		m[i].P99 = 0
	}
	if got := monitoring.DetectServerWarmUp(m, monitoring.WarmUpRule{}); got.Settled {
		t.Fatal("minutes without latency data settled the warm-up")
	}
}

func TestEndedByIsTheSignalThatSettledLast(t *testing.T) {
	server := monitoring.ServerWarmUp{SettledAt: at(12, 6, 0), Settled: true}
	if got := monitoring.EndedBy(at(12, 5, 0), server); got != monitoring.SignalServer {
		t.Errorf("server settled after the client's end: EndedBy = %s, want Server", got)
	}
	if got := monitoring.EndedBy(at(12, 7, 0), server); got != monitoring.SignalClient {
		t.Errorf("server settled before the client's end: EndedBy = %s, want Client", got)
	}
	if got := monitoring.EndedBy(at(12, 5, 0), monitoring.ServerWarmUp{}); got != monitoring.SignalClient {
		t.Errorf("server never settled: EndedBy = %s, want Client", got)
	}
}
