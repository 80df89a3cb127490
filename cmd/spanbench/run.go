package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/term"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/cmd/spanbench/manifest"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/engine"
	"github.com/spanbench/spanbench/runner/metrics"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/runner/shardrun"
	"github.com/spanbench/spanbench/spanner/dataset"
	"github.com/spanbench/spanbench/spanner/emulator"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/monitoring"
	"github.com/spanbench/spanbench/spanner/session"
	"github.com/spanbench/spanbench/spanner/target"
	"github.com/spanbench/spanbench/spanner/workload"
)

// runFlags are `spanbench run`'s flags.
type runFlags struct {
	file, endpoint, emulatorPath, out, metricsAddr string
	spanner, freshEmulator                         bool
	project, instance, database, config            string
	nodes                                          int
	shard                                          string
	start                                          string
	seed                                           int64
	progress                                       string
	estimateOnly                                   bool
	priceCatalog                                   string
	monitoringEndpoint                             string
}

func parseRunFlags(args []string, stderr io.Writer) (*runFlags, error) {
	f := &runFlags{}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.file, "f", "", "BenchmarkRun manifest or workload file (YAML or JSON); required")
	fs.StringVar(&f.endpoint, "endpoint", "", "host:port of a running Cloud Spanner emulator (default: $SPANNER_EMULATOR_HOST, else the manifest's target.emulatorHost, else start a fresh emulator)")
	fs.BoolVar(&f.freshEmulator, "fresh-emulator", false, "start a fresh emulator and run against it, whatever the manifest's target.emulatorHost names (the samples name make demo's, which pods reach)")
	fs.BoolVar(&f.spanner, "spanner", false, "run against Cloud Spanner itself, with Application Default Credentials, on the manifest's target (the instance must exist)")
	fs.StringVar(&f.emulatorPath, "emulator-path", "", "the emulator's gateway_main (default: $"+emulator.PathEnv+", else "+emulator.DefaultPath+")")
	fs.StringVar(&f.out, "out", "", "write the result document (JSON) to this file")
	fs.StringVar(&f.metricsAddr, "metrics-addr", "", "serve live Prometheus metrics on this address, e.g. :9090")
	fs.StringVar(&f.project, "project", "", "override target.project")
	fs.StringVar(&f.instance, "instance", "", "override target.instance.name")
	fs.StringVar(&f.database, "database", "", "override target.database")
	fs.StringVar(&f.config, "instance-config", "", "override target.instance.config (an emulator accepts any name)")
	fs.IntVar(&f.nodes, "nodes", 0, "override target.instance.nodes")
	fs.StringVar(&f.shard, "shard", "0/1", "run shard i of n (i/n) of the load; run n processes with one --start to split a run")
	fs.StringVar(&f.start, "start", "", "common start time (RFC 3339) for shards of one run (default: now)")
	fs.Int64Var(&f.seed, "seed", 1, "seed of operation choices and arrivals")
	fs.StringVar(&f.progress, "progress", "auto", "live progress line: auto (on a terminal), always, never")
	fs.BoolVar(&f.estimateOnly, "estimate", false, "print the run's estimated cost and exit without running it")
	fs.StringVar(&f.monitoringEndpoint, "monitoring-endpoint", monitoring.CloudDefault, "Cloud Monitoring's host:port, from which --spanner reads each search step's high-priority CPU when the SLO has a cpu condition")
	fs.StringVar(&f.priceCatalog, "price-catalog", "", "a price override file in the catalog's format (docs/cost.md) over the embedded catalog")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if f.file == "" || fs.NArg() > 0 {
		fs.Usage()
		return nil, errors.New("usage: spanbench run -f FILE [flags]")
	}
	if f.freshEmulator && (f.spanner || f.endpoint != "") {
		return nil, errFreshEmulatorAlone
	}
	return f, nil
}

// errFreshEmulatorAlone refuses --fresh-emulator beside a flag that names
// another endpoint (run and campaign alike).
var errFreshEmulatorAlone = errors.New("--fresh-emulator starts its own emulator: it goes with neither --spanner nor --endpoint")

func runCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseRunFlags(args, stderr)
	if err != nil {
		return err
	}
	run, err := manifest.ReadFile(f.file)
	if err != nil {
		return manifestGuidance(err, "run", f.file)
	}
	shard, shards, err := parseShard(f.shard)
	if err != nil {
		return err
	}
	start, err := parseStart(f.start)
	if err != nil {
		return err
	}
	t, err := resolveTarget(run.Target, f)
	if err != nil {
		return err
	}
	prices, from, err := priceCatalog(f.priceCatalog)
	if err != nil {
		return err
	}
	plan := cliPlan(run, t, !f.spanner)
	printEstimate(stderr, prices, from, plan)
	if f.estimateOnly {
		return nil
	}
	origin := endpointOrigin(f)
	stop, startedEmulator, err := ensureEmulator(ctx, f, &t, stderr)
	if err != nil {
		return err
	}
	defer stop()
	doc, err := execute(ctx, run, t, f, shard, shards, start, startedEmulator, stderr)
	if err != nil {
		return targetGuidance(err, "run", origin, f, startedEmulator)
	}
	withCost(doc, prices, from, plan)
	if f.out != "" {
		if err := result.WriteFile(f.out, doc); err != nil {
			return err
		}
	}
	printRunCost(stderr, prices, plan, doc)
	return result.WriteTable(stdout, doc)
}

// ensureEmulator starts a fresh emulator when the target names none and
// --spanner is not set, or when --fresh-emulator asks for one, and points t at it, and f.endpoint too, so that
// later targets of one invocation (a campaign's runs) resolve to the same
// emulator. started says whether it started one: then spanbench owns the
// instance and creates it. stop stops it (and is a no-op otherwise).
func ensureEmulator(ctx context.Context, f *runFlags, t *v1alpha1.TargetSpec, stderr io.Writer) (stop func(), started bool, err error) {
	if f.spanner || (t.EmulatorHost != "" && !f.freshEmulator) {
		return func() {}, false, nil
	}
	emu, err := emulator.Start(ctx, emulator.Options{Path: f.emulatorPath})
	if err != nil {
		return nil, false, err
	}
	t.EmulatorHost, f.endpoint = emu.Host(), emu.Host()
	fmt.Fprintf(stderr, "started a fresh Cloud Spanner emulator at %s (stopped at exit)\n", t.EmulatorHost)
	stop = func() {
		if err := emu.Stop(); err != nil {
			fmt.Fprintf(stderr, "stopping the emulator: %v\n", err)
		}
	}
	return stop, true, nil
}

// execute prepares the target and dataset and runs the load.
func execute(ctx context.Context, run *manifest.Run, t v1alpha1.TargetSpec, f *runFlags, shard, shards int, start time.Time,
	createInstance bool, stderr io.Writer) (*result.Document, error) {
	schema, err := workload.SchemaFor(&run.Workload, t.Dialect)
	if err != nil {
		return nil, err
	}
	ep := endpoint.For(t, endpoint.Cloud(""))
	if err := session.Probe(ctx, ep, t); err != nil {
		return nil, err
	}
	if err := session.EnsureDatabase(ctx, ep, t, schema, createInstance); err != nil {
		return nil, err
	}
	s, err := session.Open(ctx, ep, t)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	for _, n := range s.Notes() {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}
	loaded, err := prepareDataset(ctx, s, schema, run.Workload.Dataset, stderr)
	if err != nil {
		return nil, err
	}
	bound, err := shardrun.NewShard(run.Name, &run.Workload, s, shard, shards)
	if err != nil {
		return nil, err
	}
	cfg := &bound.Config
	cfg.Start, cfg.Seed, cfg.Environment = staleReadsStart(start, loaded, &run.Workload, stderr), f.seed, session.Environment("")
	if showProgress(f.progress, stderr) {
		cfg.Progress = progressLine(stderr)
		defer fmt.Fprintln(stderr)
	}
	if f.metricsAddr != "" {
		if err := serveMetrics(ctx, f.metricsAddr, cfg, stderr); err != nil {
			return nil, err
		}
	}
	if run.Workload.Load.Search != nil {
		// Each step is checked as it is measured (capacity.Measure: its
		// window whole, no interval twice); the run's arrivals check reads
		// a profile that a search decides as it goes.
		cpu, closeCPU, err := stepCPUReader(ctx, f, t, &run.Workload)
		if err != nil {
			return nil, err
		}
		defer closeCPU()
		return runSearch(ctx, bound.Config, &run.Workload, shards, cpu, stderr)
	}
	doc, err := bound.Run(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkOwnResult(run, doc, shard, shards, f.seed); err != nil {
		return nil, err
	}
	return doc, checkConsistency(ctx, s, &run.Workload, shards, doc, stderr)
}

// checkOwnResult holds the result this process measured to the checks a
// runner's is held to by the manager (result.Expect), its schedule's
// arrivals included: a result that counts more operations than its
// schedule produced is refused, never printed.
func checkOwnResult(run *manifest.Run, doc *result.Document, shard, shards int, seed int64) error {
	e, err := protocol.ResultExpectation(run.Name, &run.Workload, doc.Start, v1alpha1.DefaultOverrunDeadline, shard, shards)
	if err != nil {
		return err
	}
	e.Arrivals = shardrun.Arrivals(&run.Workload, shards, func(int) int64 { return seed })
	if err := e.Check(doc); err != nil {
		return fmt.Errorf("the result of this run is invalid: %w", err)
	}
	return nil
}

// checkConsistency runs a TPCC workload's consistency conditions after the
// run when the spec asks for them. They need the whole run finished: a
// shard of several skips them and says so.
func checkConsistency(ctx context.Context, s *session.Session, w *v1alpha1.WorkloadSpec, shards int, doc *result.Document, stderr io.Writer) error {
	if w.TPCC == nil || !w.TPCC.ConsistencyChecks {
		return nil
	}
	if shards > 1 {
		fmt.Fprintln(stderr, "note: TPC-C consistency checks skipped: this is one shard of several; they need the whole run finished")
		return nil
	}
	_, err := workload.CheckTPCCInto(ctx, s.Client, doc)
	return err
}

// prepareDataset loads the dataset unless it is there; loaded is when this
// call finished writing it (zero when it found it loaded).
func prepareDataset(ctx context.Context, s *session.Session, schema workload.Schema, d v1alpha1.DatasetSpec, stderr io.Writer) (loaded time.Time, err error) {
	out, err := dataset.Prepare(ctx, s.Client, schema, d, func(p dataset.Progress) {
		fmt.Fprintf(stderr, "loading %s: %d/%d rows (%.0f rows/s)\n", schema.Table(), p.Loaded, p.Total, p.RowsPerSecond())
	})
	if err != nil {
		return time.Time{}, err
	}
	switch {
	case out.Skipped:
		fmt.Fprintf(stderr, "dataset: %s already holds %d rows of schema %s; not loading\n", schema.Table(), out.Marker.Rows, out.Marker.SchemaHash)
		return time.Time{}, nil
	case out.Reloaded:
		fmt.Fprintf(stderr, "dataset: replaced a different dataset in %s (dataset.reload is set)\n", schema.Table())
	}
	if len(out.Kept) > 0 {
		fmt.Fprintf(stderr, "dataset: %s\n", dataset.Summary(out.Kept, out.Loaded))
	}
	return time.Now(), nil
}

// staleReadsStart moves the start past the staleness bound of the
// workload's stale reads, counted from the load that just ended: sooner,
// they would read the empty pre-load snapshot. It says so when it waits.
func staleReadsStart(start, loaded time.Time, w *v1alpha1.WorkloadSpec, stderr io.Writer) time.Time {
	bound := w.StaleReadsSeeDataAfter()
	if loaded.IsZero() || bound == 0 {
		return start
	}
	ready := loaded.Add(bound + v1alpha1.StalenessMargin)
	if !ready.After(start) || !ready.After(time.Now()) {
		return start
	}
	fmt.Fprintf(stderr, "waiting %s before the start: reads at up to %s staleness see the dataset just loaded only from then\n",
		time.Until(ready).Round(100*time.Millisecond), bound)
	return ready
}

// serveMetrics starts the live metrics endpoint and wires it to the engine.
func serveMetrics(ctx context.Context, addr string, cfg *engine.Config, stderr io.Writer) error {
	reg := prometheus.NewRegistry()
	m, err := metrics.NewEngine(reg, cfg.Run, cfg.Spec.Settings().Operations)
	if err != nil {
		return err
	}
	bound, err := metrics.Serve(ctx, addr, reg)
	if err != nil {
		return fmt.Errorf("serving metrics on %s: %w", addr, err)
	}
	fmt.Fprintf(stderr, "serving live metrics on http://%s/metrics\n", bound)
	cfg.Observer = m
	return nil
}

// resolveTarget applies flags and local defaults to the manifest's target.
func resolveTarget(mt *v1alpha1.TargetSpec, f *runFlags) (v1alpha1.TargetSpec, error) {
	var t v1alpha1.TargetSpec
	if mt != nil {
		t = *mt
	} else if f.spanner {
		t = v1alpha1.TargetSpec{}
	} else {
		t = v1alpha1.TargetSpec{Project: "spanbench-local", Instance: v1alpha1.InstanceSpec{Name: "spanbench"}, Database: "bench"}
	}
	overrides := []struct {
		dst *string
		v   string
	}{{&t.Project, f.project}, {&t.Instance.Name, f.instance}, {&t.Database, f.database}, {&t.Instance.Config, f.config}}
	for _, o := range overrides {
		if o.v != "" {
			*o.dst = o.v
		}
	}
	if f.nodes > 0 {
		n := int32(f.nodes)
		t.Instance.Nodes, t.Instance.ProcessingUnits = &n, nil
	}
	// $SPANNER_EMULATOR_HOST is read here, once, into the target.
	switch {
	case f.spanner:
		if err := endpoint.RefuseInherited(os.Getenv); err != nil {
			return t, fmt.Errorf("--spanner: %w", err)
		}
		t.EmulatorHost = ""
	case f.endpoint != "":
		t.EmulatorHost = f.endpoint
	case os.Getenv(endpoint.EmulatorHostEnv) != "":
		t.EmulatorHost = os.Getenv(endpoint.EmulatorHostEnv)
	}
	if !f.spanner {
		t.Instance = target.EmulatorInstanceDefaults(t.Instance)
	}
	if t.Project == "" || t.Instance.Name == "" || t.Database == "" {
		return t, errors.New("--spanner needs a target: a BenchmarkRun manifest with spec.target, or --project, --instance and --database")
	}
	return t, nil
}

func parseShard(s string) (shard, shards int, err error) {
	i, n, ok := strings.Cut(s, "/")
	if ok {
		shard, err = strconv.Atoi(i)
		if err == nil {
			shards, err = strconv.Atoi(n)
		}
	}
	if !ok || err != nil || shards < 1 || shard < 0 || shard >= shards {
		return 0, 0, fmt.Errorf("--shard %q: want i/n with 0 <= i < n", s)
	}
	return shard, shards, nil
}

func parseStart(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return t, fmt.Errorf("--start: %w", err)
	}
	return t, nil
}

func showProgress(mode string, w io.Writer) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progressLine rewrites one terminal line with the run's progress.
func progressLine(w io.Writer) func(engine.Progress) {
	return func(p engine.Progress) {
		target := fmt.Sprintf("target %.0f/s", p.TargetRate)
		if p.ClosedLoop {
			target = "closed loop"
		}
		p99 := "-"
		if p.P99 > 0 {
			p99 = p.P99.Round(10 * time.Microsecond).String()
		}
		fmt.Fprintf(w, "\r%s/%s  rate %.0f/s (%s)  p99 %s  errors %d  missed %d  in flight %d   ",
			p.Elapsed.Round(time.Second), p.Total, p.Rate, target, p99, p.Errors, p.Missed, p.InFlight)
	}
}
