package collectors

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/guardrails"
)

// LabelVariant on a BenchmarkRun names its variant in a comparison (a
// campaign sets it); the results collector exports it as a label.
const LabelVariant = "bench.spanbench.io/variant"

// ResultsCollector serves every finished run's results at scrape time from
// the informer cache: exact figures computed by the controller from merged
// histograms, not Prometheus buckets. A deleted run's series disappear with
// it.
type ResultsCollector struct {
	// Reader is the manager's cached client.
	Reader client.Reader
}

var (
	runLabels       = []string{"namespace", "run"}
	opLabels        = []string{"namespace", "run", "operation"}
	descLatency     = prometheus.NewDesc("spanbench_run_latency_seconds", "Latency quantiles of a finished run, from its merged HDR histograms (quantile=max is the maximum).", append(opLabels, "quantile"), nil)
	descGFELatency  = prometheus.NewDesc("spanbench_run_gfe_latency_seconds", "GFE latency quantiles of a finished run's operations (the server-timing header of Cloud Spanner's responses, summed over an operation's RPCs), from merged HDR histograms; absent when not available (the emulator).", append(opLabels, "quantile"), nil)
	descThroughput  = prometheus.NewDesc("spanbench_run_throughput_ops", "Successful operations per second of a finished run, after the warm-up.", opLabels, nil)
	descOperations  = prometheus.NewDesc("spanbench_run_operations", "Successful operations of a finished run, after the warm-up.", opLabels, nil)
	descErrors      = prometheus.NewDesc("spanbench_run_errors", "Failed operations of a finished run, by gRPC code.", append(opLabels, "code"), nil)
	descNotFound    = prometheus.NewDesc("spanbench_run_not_found", "Reads of keys expected to exist that found no row, after the warm-up: neither successful nor failed.", opLabels, nil)
	descWarmUp      = prometheus.NewDesc("spanbench_run_warmup_seconds", "Length of the warm-up excluded from a run's results.", runLabels, nil)
	descStartSkew   = prometheus.NewDesc("spanbench_run_start_skew_seconds", "Spread of the runners' actual start times.", runLabels, nil)
	descRunInfo     = prometheus.NewDesc("spanbench_run_info", "What a finished run measured; always 1.", append(runLabels, "variant", "instance_config", "dialect", "endpoint", "runners", "runner_region", "client_version", "partial"), nil)
	descRunFailed   = prometheus.NewDesc("spanbench_run_failed", "A run that ended without results (Succeeded=False), its condition's reason in the reason label; always 1.", append(runLabels, "reason"), nil)
	descEphStart    = prometheus.NewDesc("spanbench_run_ephemeral_instance_start_timestamp_seconds", "While an Ephemeral instance of a run may exist (its finalizer is on, its deletion not recorded): the run's creation, Unix time, from which the instance's allowed lifetime counts.", runLabels, nil)
	descEphLifetime = prometheus.NewDesc("spanbench_run_ephemeral_instance_lifetime_seconds", "The longest an Ephemeral instance of a run may live: its workload's duration plus every stage deadline; the instance is deleted by then at the latest.", runLabels, nil)
	descDatasetRows = prometheus.NewDesc("spanbench_run_dataset_rows", "Rows of a run's dataset: state=total is its size, state=loaded what is loaded so far (the whole of it once loaded, or when the database already held it).", append(runLabels, "state"), nil)
	collectTimeout  = 5 * time.Second
	latencyQuantile = []struct {
		label string
		get   func(*v1alpha1.LatencySummary) *time.Duration
	}{
		{"0.5", func(l *v1alpha1.LatencySummary) *time.Duration { return dur(l.P50) }},
		{"0.9", func(l *v1alpha1.LatencySummary) *time.Duration { return dur(l.P90) }},
		{"0.99", func(l *v1alpha1.LatencySummary) *time.Duration { return dur(l.P99) }},
		{"0.999", func(l *v1alpha1.LatencySummary) *time.Duration { return dur(l.P999) }},
		{"max", func(l *v1alpha1.LatencySummary) *time.Duration { return dur(l.Max) }},
	}
)

// Describe implements prometheus.Collector.
func (c *ResultsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descLatency, descGFELatency, descThroughput, descOperations, descErrors, descNotFound, descWarmUp, descStartSkew, descRunInfo, descDatasetRows, descRunFailed, descEphStart, descEphLifetime} {
		ch <- d
	}
	for _, d := range slices.Concat(serverStatsDescs, serverMetricsDescs, tpccDescs, streamDescs, costDescs, searchDescs) {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *ResultsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), collectTimeout)
	defer cancel()
	runs := &v1alpha1.BenchmarkRunList{}
	if err := c.Reader.List(ctx, runs); err != nil {
		return
	}
	for i := range runs.Items {
		run := &runs.Items[i]
		collectDataset(ch, run)
		collectLifecycle(ch, run)
		collectCost(ch, run)
		collectSearch(ch, run)
		if run.Status.Overall == nil {
			continue
		}
		collectRun(ch, run)
		collectServerStats(ch, run)
		collectServerMetricsSeries(ch, run)
		collectTPCC(ch, run)
		collectStreams(ch, run)
	}
}

// collectDataset serves a run's dataset size and load progress, in every
// phase: a dashboard follows a long load with it.
func collectDataset(ch chan<- prometheus.Metric, run *v1alpha1.BenchmarkRun) {
	ds := run.Status.Dataset
	if ds == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(descDatasetRows, prometheus.GaugeValue, float64(ds.Rows), run.Namespace, run.Name, "total")
	ch <- prometheus.MustNewConstMetric(descDatasetRows, prometheus.GaugeValue, float64(ds.Loaded), run.Namespace, run.Name, "loaded")
}

// collectLifecycle serves what an alert watches in any phase: a failed
// run, and an Ephemeral instance that may still exist with the lifetime it
// is allowed (alerting when it outlives it: a leak costs money).
func collectLifecycle(ch chan<- prometheus.Metric, run *v1alpha1.BenchmarkRun) {
	if c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionSucceeded); c != nil && c.Status == metav1.ConditionFalse {
		ch <- prometheus.MustNewConstMetric(descRunFailed, prometheus.GaugeValue, 1, run.Namespace, run.Name, c.Reason)
	}
	if !controllerutil.ContainsFinalizer(run, v1alpha1.FinalizerInstance) || (run.Status.Target != nil && run.Status.Target.DeletionTime != nil) {
		return
	}
	ch <- prometheus.MustNewConstMetric(descEphStart, prometheus.GaugeValue, float64(run.CreationTimestamp.Unix()), run.Namespace, run.Name)
	ch <- prometheus.MustNewConstMetric(descEphLifetime, prometheus.GaugeValue, guardrails.EphemeralLifetime(run).Seconds(), run.Namespace, run.Name)
}

func collectRun(ch chan<- prometheus.Metric, run *v1alpha1.BenchmarkRun) {
	ns, name := run.Namespace, run.Name
	for _, op := range run.Status.Operations {
		collectFigures(ch, ns, name, op.Name, &op.ResultFigures)
		collectGFE(ch, ns, name, op.Name, op.GFELatency)
	}
	collectFigures(ch, ns, name, "overall", run.Status.Overall)
	if run.Status.WarmUpEnd != nil && run.Status.StartTime != nil {
		ch <- prometheus.MustNewConstMetric(descWarmUp, prometheus.GaugeValue, run.Status.WarmUpEnd.Sub(run.Status.StartTime.Time).Seconds(), ns, name)
	}
	if s := run.Status.StartSkew; s != nil {
		ch <- prometheus.MustNewConstMetric(descStartSkew, prometheus.GaugeValue, s.Seconds(), ns, name)
	}
	env := run.Status.Environment
	if env == nil {
		env = &v1alpha1.RunEnvironment{}
	}
	partial := "false"
	if run.Status.Partial {
		partial = "true"
	}
	var dialect string
	if t := run.Status.Target; t != nil {
		dialect = string(t.Dialect)
	}
	ch <- prometheus.MustNewConstMetric(descRunInfo, prometheus.GaugeValue, 1, ns, name, run.Labels[LabelVariant],
		env.InstanceConfig, dialect, string(env.Endpoint), itoa(env.Runners), env.RunnerRegion, env.ClientVersion, partial)
}

func collectFigures(ch chan<- prometheus.Metric, ns, run, op string, f *v1alpha1.ResultFigures) {
	runFigures.collect(ch, f, ns, run, op)
}

// figureDescs are the series of one set of result figures: a run's, or a
// stream's (streams_metrics.go), each labelled by its own labels first.
type figureDescs struct {
	throughput, operations, notFound, errors, latency *prometheus.Desc
}

// runFigures are a run's figures' series.
var runFigures = figureDescs{throughput: descThroughput, operations: descOperations, notFound: descNotFound, errors: descErrors, latency: descLatency}

// collect serves f's figures with the label values labels.
func (d figureDescs) collect(ch chan<- prometheus.Metric, f *v1alpha1.ResultFigures, labels ...string) {
	if t, err := v1alpha1.ParseThroughput(f.Throughput); err == nil {
		ch <- prometheus.MustNewConstMetric(d.throughput, prometheus.GaugeValue, t, labels...)
	}
	ch <- prometheus.MustNewConstMetric(d.operations, prometheus.GaugeValue, float64(f.Count), labels...)
	if f.NotFound > 0 {
		ch <- prometheus.MustNewConstMetric(d.notFound, prometheus.GaugeValue, float64(f.NotFound), labels...)
	}
	for code, n := range f.ErrorsByCode {
		ch <- prometheus.MustNewConstMetric(d.errors, prometheus.GaugeValue, float64(n), append(labels, code)...)
	}
	if f.Latency == nil {
		return
	}
	for _, q := range latencyQuantile {
		if v := q.get(f.Latency); v != nil {
			ch <- prometheus.MustNewConstMetric(d.latency, prometheus.GaugeValue, v.Seconds(), append(labels, q.label)...)
		}
	}
}

// collectGFE serves an operation's GFE latency p50 and p99, when it has
// them: a missing figure is no series, never a zero.
func collectGFE(ch chan<- prometheus.Metric, ns, run, op string, g *v1alpha1.GFELatency) {
	if g == nil {
		return
	}
	for _, q := range []struct {
		label string
		d     *metav1.Duration
	}{{"0.5", g.P50}, {"0.99", g.P99}} {
		if q.d != nil {
			ch <- prometheus.MustNewConstMetric(descGFELatency, prometheus.GaugeValue, q.d.Seconds(), ns, run, op, q.label)
		}
	}
}

func dur(d *metav1.Duration) *time.Duration {
	if d == nil {
		return nil
	}
	return &d.Duration
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
