package monitoring

import (
	"time"

	"github.com/spanbench/spanbench/result"
)

// WarmUpRule is how the server's minutes are read for the end of its
// warm-up: the client's rule (result.FirstStable) on minutes instead of
// intervals.
type WarmUpRule struct {
	// Window is the number of consecutive minutes that must agree; 0 is
	// result.DefaultWarmUpWindow.
	Window int
	// TolerancePercent is how far each minute's request rate and p99 may
	// stray from the window's mean; 0 is result.DefaultWarmUpTolerance.
	TolerancePercent int
}

// ServerWarmUp says when the server's load settled.
type ServerWarmUp struct {
	// SettledAt is the start of the first minute of the first stable
	// window: the server's warm-up ended then. Zero when not Settled.
	SettledAt time.Time
	// Settled is false when no window of the series was stable.
	Settled bool
}

// DetectServerWarmUp applies rule to the server's minutes: the first
// window of rule.Window minutes, each with requests, whose request rate
// and p99 each stay within the tolerance of the window's mean. A minute
// without latency data (p99 0) cannot be stable: the rule needs both
// signals, as the client's does.
func DetectServerWarmUp(minutes []MinutePoint, rule WarmUpRule) ServerWarmUp {
	window := rule.Window
	if window <= 0 {
		window = result.DefaultWarmUpWindow
	}
	tol := rule.TolerancePercent
	if tol <= 0 {
		tol = result.DefaultWarmUpTolerance
	}
	points := make([]result.StabilityPoint, len(minutes))
	for i, m := range minutes {
		points[i] = result.StabilityPoint{
			Throughput: float64(m.Requests) / SamplePeriod.Seconds(),
			P99:        m.P99.Seconds(),
			Complete:   m.P99 > 0,
		}
	}
	start, ok := result.FirstStable(points, window, float64(tol)/100)
	if !ok {
		return ServerWarmUp{}
	}
	return ServerWarmUp{SettledAt: minutes[start].End.Add(-SamplePeriod), Settled: true}
}

// Signal names the signal that ended a run's warm-up.
type Signal string

// The signals.
const (
	SignalClient Signal = "Client"
	SignalServer Signal = "Server"
)

// EndedBy is the signal that ended the warm-up: the one that settled last.
// The client's end is the run's warm-up end; when the server settled
// after it, the run's figures hold minutes the server was still warming
// up in. A server that never settled ended nothing: the client did.
func EndedBy(clientEnd time.Time, server ServerWarmUp) Signal {
	if server.Settled && server.SettledAt.After(clientEnd) {
		return SignalServer
	}
	return SignalClient
}
