package pod

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/engine"
	"github.com/spanbench/spanbench/runner/metrics"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/runner/protocol/bucket"
	"github.com/spanbench/spanbench/runner/shardrun"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/session"
)

// Defaults of Options.
const (
	DefaultPollInterval   = 250 * time.Millisecond
	DefaultReadyTimeout   = 15 * time.Minute
	DefaultControlTimeout = 5 * time.Minute
	// DefaultLoadProgressInterval spaces the load progress reports in the
	// shard map: each one is a write to the API server and a reconcile.
	DefaultLoadProgressInterval = 5 * time.Second
)

// MaxLateStart is how far past the start time a runner may be when it
// learns of it. Later, its open-loop schedule would begin with a burst of
// every overdue request, and the run's merged figures would measure that
// burst; a runner that restarted mid-run lands here too. It refuses
// instead.
const MaxLateStart = 5 * time.Second

// logEvery spaces progress logs of long loads and runs.
const logEvery = 10 * time.Second

// Options configure one runner.
type Options struct {
	// Namespace and Run name the BenchmarkRun.
	Namespace, Run string
	// Index is this runner's shard index.
	Index int
	// MetricsAddr, when set, is where live Prometheus metrics are served
	// (e.g. ":9090").
	MetricsAddr string
	// PollInterval is how often the control map is read for the start
	// time; default DefaultPollInterval.
	PollInterval time.Duration
	// ReadyTimeout bounds the wait for the start time after reporting
	// ready; default DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// ControlTimeout bounds the wait for the control map to be readable;
	// default DefaultControlTimeout.
	ControlTimeout time.Duration
	// LoadProgressInterval is how often rows loaded are reported in the
	// loader map (protocol.KeyLoaded); default DefaultLoadProgressInterval.
	LoadProgressInterval time.Duration
	// SearchDecisionTimeout bounds a capacity search runner's wait for the
	// next step after a step's end; default protocol.SearchDecisionTimeout.
	SearchDecisionTimeout time.Duration
	// Log receives the runner's structured logs.
	Log logr.Logger
	// Results, when set, is the results bucket the manager named
	// (--results-bucket): the shard's result goes there, under the run's
	// UID RunUID, and its ConfigMap points at it.
	Results *bucket.Bucket
	// RunUID is the run's UID, which the result's object key names
	// (bucket.ShardKey); required with Results.
	RunUID string
}

func (o Options) withDefaults() Options {
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = DefaultReadyTimeout
	}
	if o.ControlTimeout <= 0 {
		o.ControlTimeout = DefaultControlTimeout
	}
	if o.LoadProgressInterval <= 0 {
		o.LoadProgressInterval = DefaultLoadProgressInterval
	}
	if o.SearchDecisionTimeout <= 0 {
		o.SearchDecisionTimeout = protocol.SearchDecisionTimeout
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.Run == "":
		return errors.New("no run name given")
	case o.Namespace == "":
		return errors.New("no namespace given")
	case o.Index < 0:
		return fmt.Errorf("shard index %d is negative", o.Index)
	case o.Results != nil && o.RunUID == "":
		return errors.New("a results bucket needs the run's UID")
	}
	return nil
}

// runner is one pod's state: a runner's (Run) or a loader's (Load).
type runner struct {
	c   client.Client
	o   Options
	log logr.Logger
	// control is the run's control map; own is the map this pod writes
	// (its shard map, or its loader map).
	control, own client.ObjectKey
	// loads says the pod is a loader: own holds a loader report.
	loads bool
}

// newRunner binds a pod to the run's control map and to own, the map it
// writes; kind names the pod in its logs.
func newRunner(c client.Client, o Options, kind, own string) *runner {
	return &runner{
		c: c, o: o,
		log:     o.Log.WithValues("run", o.Run, "namespace", o.Namespace, kind, o.Index),
		control: client.ObjectKey{Namespace: o.Namespace, Name: protocol.ControlConfigMapName(o.Run)},
		own:     client.ObjectKey{Namespace: o.Namespace, Name: own},
	}
}

// Run is a runner pod's life: read the run's control ConfigMap, open the
// target, report ready in the shard ConfigMap, wait for the common start time, run shard Index
// of the load and store the result in the shard ConfigMap. Any failure
// after the control map was read is stored there too (state Failed and a
// message) before Run returns it. A shard map that already holds a final
// state is left alone: Succeeded returns nil, Failed its message.
func Run(ctx context.Context, c client.Client, o Options) error {
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return err
	}
	r := newRunner(c, o, "shard", protocol.ShardConfigMapName(o.Run, o.Index))
	cm, err := r.waitForControl(ctx)
	if err != nil {
		return err
	}
	err = r.run(ctx, cm)
	var done *finishedError
	switch {
	case errors.As(err, &done) && done.state == protocol.StateSucceeded:
		r.log.Info("the shard already succeeded; nothing to do")
		return nil
	case err != nil && !errors.As(err, &done):
		r.reportFailure(ctx, err)
	}
	return err
}

// run does everything after the control map was read; its error is
// reported in the shard map.
func (r *runner) run(ctx context.Context, cm *corev1.ConfigMap) error {
	ctl, err := r.decode(cm)
	if err != nil {
		return err
	}
	if r.o.Index >= ctl.Shards {
		return fmt.Errorf("shard index %d is out of range: the run has %d shards", r.o.Index, ctl.Shards)
	}
	if err := r.checkNotFinished(ctx); err != nil {
		return err
	}
	s, err := r.open(ctx, ctl)
	if err != nil {
		return err
	}
	defer s.Close()
	ctx, stopMetrics := context.WithCancel(ctx)
	defer stopMetrics()
	shard, err := r.engineConfig(ctx, s, ctl)
	if err != nil {
		return err
	}
	ready, err := r.startBarrier(ctx)
	if err != nil {
		return err
	}
	shard.Config.Start = ready.start
	doc, err := r.runLive(ctx, shard, &ctl.Workload)
	if err != nil {
		return err
	}
	return r.writeResult(ctx, ready.at, doc)
}

// runLive runs the shard of workload w (a capacity search's steps, or its
// load) while writing its live reports (liveReporter), and stops writing
// them before it returns: the result follows.
func (r *runner) runLive(ctx context.Context, shard *shardrun.Shard, w *v1alpha1.WorkloadSpec) (*result.Document, error) {
	live := newLiveReporter(shard.Config.Start, shard.Config.Interval)
	shard.Config.Drained = live.drained
	liveCtx, stop := context.WithCancel(ctx)
	written := make(chan struct{})
	go func() { defer close(written); live.write(liveCtx, r) }()
	defer func() { stop(); <-written }()
	if w.Load.Search != nil {
		return r.runSearch(ctx, shard.Config, w)
	}
	return shard.Run(ctx)
}

// decode reads and checks the control document against this runner.
func (r *runner) decode(cm *corev1.ConfigMap) (*protocol.Control, error) {
	raw, ok := cm.Data[protocol.KeyControl]
	if !ok {
		return nil, fmt.Errorf("ConfigMap %s has no %s", r.control, protocol.KeyControl)
	}
	ctl, err := protocol.DecodeControl([]byte(raw))
	if err != nil {
		return nil, fmt.Errorf("ConfigMap %s: %w", r.control, err)
	}
	switch {
	case ctl.Run != r.o.Run:
		return nil, fmt.Errorf("ConfigMap %s is for run %q, not %q", r.control, ctl.Run, r.o.Run)
	case ctl.Namespace != "" && ctl.Namespace != r.o.Namespace:
		return nil, fmt.Errorf("ConfigMap %s is for namespace %q, not %q", r.control, ctl.Namespace, r.o.Namespace)
	}
	return ctl, nil
}

// finishedError says the shard map already holds a final state.
type finishedError struct {
	state   protocol.State
	message string
}

func (e *finishedError) Error() string {
	return fmt.Sprintf("the shard already ended with state %s: %s", e.state, e.message)
}

// checkNotFinished refuses to run a shard again: a second run would start
// late and overwrite a stored result. It also proves, before any slow
// work, that the shard map exists and is readable.
func (r *runner) checkNotFinished(ctx context.Context) error {
	cm, err := r.getOwn(ctx)
	if err != nil {
		return err
	}
	rep, err := protocol.DecodeShardReport(cm.Data, cm.BinaryData)
	if err != nil {
		return fmt.Errorf("ConfigMap %s: %w", r.own, err)
	}
	if rep.State.Final() {
		return &finishedError{state: rep.State, message: rep.Message}
	}
	return nil
}

// TargetEndpoint is where the pods reach the run's target: the emulator
// the target names, or the Cloud Spanner endpoint the manager uses.
func TargetEndpoint(ctl *protocol.Control) endpoint.Endpoint {
	return endpoint.For(ctl.Target, endpoint.Cloud(ctl.SpannerEndpoint))
}

// open connects to the target at TargetEndpoint, failing fast when it is
// unreachable.
func (r *runner) open(ctx context.Context, ctl *protocol.Control) (*session.Session, error) {
	ep := TargetEndpoint(ctl)
	if err := session.Probe(ctx, ep, ctl.Target); err != nil {
		return nil, err
	}
	s, err := session.Open(ctx, ep, ctl.Target)
	if err != nil {
		return nil, err
	}
	r.log.Info("connected", "database", session.DatabasePath(ctl.Target), "emulator", s.Emulator())
	return s, nil
}

// engineConfig binds the workload, with or without streams, to this
// shard and, when asked, serves its live metrics until ctx ends.
func (r *runner) engineConfig(ctx context.Context, s *session.Session, ctl *protocol.Control) (*shardrun.Shard, error) {
	shard, err := shardrun.NewShard(ctl.Run, &ctl.Workload, s, r.o.Index, ctl.Shards)
	if err != nil {
		return nil, err
	}
	cfg := &shard.Config
	cfg.Seed, cfg.Environment, cfg.Progress = Seed(ctl.Run, r.o.Index), session.Environment(ctl.Region), r.logProgress()
	if r.o.MetricsAddr != "" {
		if cfg.Observer, err = r.serveMetrics(ctx, ctl.Run, cfg.Spec.Settings().Operations); err != nil {
			return nil, err
		}
	}
	return shard, nil
}

// Seed derives a shard's seed from the run's name and its index, so that a
// run's operation choices and arrivals are reproducible.
func Seed(run string, index int) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", run, index)
	return int64(h.Sum64())
}

// serveMetrics serves the engine's live metrics and the runner process's
// own (a saturated client skews latencies, so its CPU is worth seeing).
func (r *runner) serveMetrics(ctx context.Context, run string, ops []result.OperationInfo) (engine.Observer, error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, err
	}
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return nil, err
	}
	m, err := metrics.NewEngine(reg, run, ops)
	if err != nil {
		return nil, err
	}
	bound, err := metrics.Serve(ctx, r.o.MetricsAddr, reg)
	if err != nil {
		return nil, fmt.Errorf("serving metrics on %s: %w", r.o.MetricsAddr, err)
	}
	r.log.Info("serving live metrics", "address", bound)
	return m, nil
}

// logProgress logs the run's progress every logEvery.
func (r *runner) logProgress() func(engine.Progress) {
	due := throttle(logEvery)
	return func(p engine.Progress) {
		if due() {
			r.log.Info("running", "elapsed", p.Elapsed.Round(time.Second).String(), "total", p.Total.String(),
				"rate", int64(p.Rate), "targetRate", int64(p.TargetRate), "p99", p.P99.String(),
				"errors", p.Errors, "missed", p.Missed, "inFlight", p.InFlight)
		}
	}
}

// throttle returns a func that is true at most once per interval, and the
// first time.
func throttle(interval time.Duration) func() bool {
	var last time.Time
	return func() bool {
		if now := time.Now(); last.IsZero() || now.Sub(last) >= interval {
			last = now
			return true
		}
		return false
	}
}

// released is when a runner reported ready, and the start time it got.
type released struct{ at, start time.Time }

// startBarrier reports ready and waits for the common start time.
func (r *runner) startBarrier(ctx context.Context) (released, error) {
	at := time.Now()
	if err := r.patchOwn(ctx, protocol.EncodeShardReport(protocol.ShardReport{Ready: at})); err != nil {
		return released{}, fmt.Errorf("reporting ready: %w", err)
	}
	r.log.Info("ready; waiting for the start time")
	start, err := r.waitForStart(ctx)
	if err != nil {
		return released{}, err
	}
	if late := time.Since(start); late > MaxLateStart {
		return released{}, fmt.Errorf("the start time %s had passed %s before this runner learned of it (more than %s): "+
			"its load would begin with a burst of overdue requests; a runner that restarts mid-run cannot rejoin",
			start.UTC().Format(time.RFC3339Nano), late.Round(time.Millisecond), MaxLateStart)
	}
	r.log.Info("got the start time", "start", start, "in", time.Until(start).Round(time.Millisecond).String())
	return released{at: at, start: start}, nil
}

// writeResult stores the result and the Succeeded state
// (StoreShardResult), even when the runner's context has ended.
func (r *runner) writeResult(ctx context.Context, ready time.Time, doc *result.Document) error {
	wctx, cancel := durable(ctx)
	defer cancel()
	var obj *ResultObject
	if r.o.Results != nil {
		obj = &ResultObject{Bucket: r.o.Results, Key: bucket.ShardKey(r.o.Namespace, r.o.Run, r.o.RunUID, r.o.Index)}
	}
	stored, err := StoreShardResult(wctx, r.c, r.own, ready, doc, obj)
	if err != nil {
		return err
	}
	sh := doc.Shards[0]
	bytes := len(stored.Inline)
	switch {
	case stored.Head != nil:
		bytes = int(stored.Head.Bytes)
	case stored.Object != nil:
		bytes = int(stored.Object.Bytes)
	}
	r.log.Info("stored the result", "ok", doc.Overall.OK, "errors", doc.Overall.ErrorCount(), "missed", sh.Missed,
		"startSkew", sh.Started.Sub(doc.Start).String(), "bytes", bytes, "chunks", len(stored.Chunks))
	return nil
}

// reportFailure stores the failure in the pod's own map. When even that fails
// the error is only logged: the caller returns the original error, and the
// controller sees the pod fail.
func (r *runner) reportFailure(ctx context.Context, cause error) {
	r.log.Error(cause, "failed")
	wctx, cancel := durable(ctx)
	defer cancel()
	if err := r.patchFinal(wctx, r.failureReport(wctx, cause.Error())); err != nil {
		r.log.Error(err, "could not report the failure in the pod's ConfigMap")
	}
}

// RunArrivals is run's open-loop schedule as its runner pods send it
// (each seeded by Seed), for the manager's check that no interval counts
// more than its schedule produced (result.Expect.Arrivals); nil when the
// run's load has none to bound it (shardrun.Arrivals).
func RunArrivals(run *v1alpha1.BenchmarkRun) result.Arrivals {
	w := run.Spec.Workload.Resolved()
	return shardrun.Arrivals(&w, int(run.Replicas()), func(shard int) int64 { return Seed(run.Name, shard) })
}
