// Package metrics exposes the load engine's live measurements to
// Prometheus. Labels are bounded: the run, the operation name and type (at
// most 16 per run) and the gRPC code; no key or row value ever becomes a
// label.
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/engine"
)

// Namespace prefixes every spanbench metric.
const Namespace = "spanbench"

// LatencyBuckets span 100 µs to about 52 s, doubling. Prometheus only
// gets these coarse buckets; exact percentiles come from the merged HDR
// histograms of the result.
var LatencyBuckets = prometheus.ExponentialBuckets(0.0001, 2, 20)

// Engine implements the engine's Observer with Prometheus collectors. Every
// child series is resolved up front, so the hot path does no label lookups
// except for the first error of a code.
type Engine struct {
	latency  []prometheus.Observer
	ok       []prometheus.Counter
	ops      *prometheus.CounterVec
	opLabels [][2]string
	missed   prometheus.Counter
	target   prometheus.Gauge
	achieved prometheus.Gauge
	inFlight prometheus.Gauge
}

// NewEngine registers the engine's collectors for a run's operations (its
// spec's, in order: Finished's index points into them).
func NewEngine(reg prometheus.Registerer, run string, ops []result.OperationInfo) (*Engine, error) {
	constLabels := prometheus.Labels{"run": run}
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "operation_latency_seconds", ConstLabels: constLabels, Buckets: LatencyBuckets,
		Help: "Latency of successful operations, measured from their intended send time (no coordinated omission).",
	}, []string{"operation", "type"})
	m := &Engine{
		ops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "operations_total", ConstLabels: constLabels,
			Help: "Operations finished, by gRPC code: OK for success, NotFound for a read of keys expected to exist that found no row (the result counts it as notFound, not as an error).",
		}, []string{"operation", "type", "code"}),
		missed: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "missed_sends_total", ConstLabels: constLabels,
			Help: "Sends that were due but skipped because the in-flight cap was reached."}),
		target: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "target_rate", ConstLabels: constLabels,
			Help: "This runner's target rate in operations per second (0 in a closed loop)."}),
		achieved: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "achieved_rate", ConstLabels: constLabels,
			Help: "Operations this runner finished per second, over the last second."}),
	}
	m.inFlight = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "in_flight", ConstLabels: constLabels,
		Help: "Operations in flight, sampled every second."})
	for _, c := range []prometheus.Collector{latency, m.ops, m.missed, m.target, m.achieved, m.inFlight} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	for _, o := range ops {
		m.latency = append(m.latency, latency.WithLabelValues(o.Name, string(o.Type)))
		m.ok = append(m.ok, m.ops.WithLabelValues(o.Name, string(o.Type), codes.OK.String()))
		m.opLabels = append(m.opLabels, [2]string{o.Name, string(o.Type)})
	}
	return m, nil
}

// Finished records a finished operation.
func (m *Engine) Finished(op int, code codes.Code, latency time.Duration) {
	if code == codes.OK {
		m.ok[op].Inc()
		m.latency[op].Observe(latency.Seconds())
		return
	}
	l := m.opLabels[op]
	m.ops.WithLabelValues(l[0], l[1], code.String()).Inc()
}

// Missed counts a missed send.
func (m *Engine) Missed() { m.missed.Inc() }

// Tick sets the gauges from the run's progress.
func (m *Engine) Tick(p engine.Progress) {
	m.target.Set(p.TargetRate)
	m.achieved.Set(p.Rate)
	m.inFlight.Set(float64(p.InFlight))
}
