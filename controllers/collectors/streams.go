package collectors

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// A streams run's figures per stream (status.streams) are their own
// series, spanbench_run_stream_*, with a stream label: the run's series
// (spanbench_run_throughput_ops and the others) keep meaning the whole
// run, so dashboards and alerts that aggregate them by run or operation
// never add a stream's figures to the run's. The stream label is bounded
// by the API: at most 8 streams a run, each a DNS label of at most 40
// characters. Runs without streams have no such series.

var (
	streamOpLabels       = []string{"namespace", "run", "stream", "operation"}
	descStreamLatency    = prometheus.NewDesc("spanbench_run_stream_latency_seconds", "Latency quantiles of one stream of a finished streams run, per operation (operation=overall for the stream's), from merged HDR histograms (quantile=max is the maximum).", append(streamOpLabels, "quantile"), nil)
	descStreamThroughput = prometheus.NewDesc("spanbench_run_stream_throughput_ops", "Successful operations per second of one stream of a finished streams run, after the stream's warm-up, over its own window.", streamOpLabels, nil)
	descStreamOperations = prometheus.NewDesc("spanbench_run_stream_operations", "Successful operations of one stream of a finished streams run, after the stream's warm-up.", streamOpLabels, nil)
	descStreamErrors     = prometheus.NewDesc("spanbench_run_stream_errors", "Failed operations of one stream of a finished streams run, by gRPC code.", append(streamOpLabels, "code"), nil)
	descStreamNotFound   = prometheus.NewDesc("spanbench_run_stream_not_found", "Reads of keys expected to exist that found no row, in one stream of a finished streams run.", streamOpLabels, nil)
	descStreamWallTime   = prometheus.NewDesc("spanbench_run_stream_wall_time_seconds", "A batch stream's wall time: from its earliest runner's first send to its latest runner's last return; absent when its window cut it short.", []string{"namespace", "run", "stream"}, nil)
	streamFigures        = figureDescs{throughput: descStreamThroughput, operations: descStreamOperations, notFound: descStreamNotFound, errors: descStreamErrors, latency: descStreamLatency}
	streamDescs          = []*prometheus.Desc{descStreamLatency, descStreamThroughput, descStreamOperations, descStreamErrors, descStreamNotFound, descStreamWallTime}
)

// collectStreams serves a streams run's figures per stream and operation,
// and each batch stream's wall time.
func collectStreams(ch chan<- prometheus.Metric, run *v1alpha1.BenchmarkRun) {
	for i := range run.Status.Streams {
		s := &run.Status.Streams[i]
		for j := range s.Operations {
			streamFigures.collect(ch, &s.Operations[j].ResultFigures, run.Namespace, run.Name, s.Name, s.Operations[j].Name)
		}
		if s.Overall != nil {
			streamFigures.collect(ch, s.Overall, run.Namespace, run.Name, s.Name, "overall")
		}
		if s.WallTime != nil {
			ch <- prometheus.MustNewConstMetric(descStreamWallTime, prometheus.GaugeValue, s.WallTime.Seconds(), run.Namespace, run.Name, s.Name)
		}
	}
}
