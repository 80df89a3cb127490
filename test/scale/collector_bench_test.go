package scale_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/collectors"
	"github.com/spanbench/spanbench/internal/runtest"
)

const (
	// finishedRuns is how many finished runs the collector serves: a
	// nightly campaign's history of a few years, or many campaigns'.
	finishedRuns = 1000
	// scrapes is how many scrapes one benchmark iteration times.
	scrapes = 20
)

// BenchmarkResultsCollector1000Runs fills envtest with 1,000 finished runs
// (four operations each, with latencies, errors and environment), then
// scrapes the results collector through promhttp on loopback, as
// Prometheus does, from a manager's cache. It reports the scrape time,
// the response's size (plain and gzipped), its series, and what a scrape
// allocates.
func BenchmarkResultsCollector1000Runs(b *testing.B) {
	c := adminClient(b)
	ns := newNamespace(b, c, "history")
	createFinishedRuns(b, c, ns, finishedRuns)
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0", Cache: benchCache(ns)})
	if err != nil {
		b.Fatal(err)
	}
	start(b, mgr)
	reg := prometheus.NewRegistry()
	reg.MustRegister(&collectors.ResultsCollector{Reader: mgr.GetClient()})
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	b.Cleanup(srv.Close)
	// The first scrape starts the runs' informer and waits for it to sync.
	if seriesOf(scrape(b, srv.URL, false)) == 0 {
		b.Fatal("the first scrape served no series")
	}
	for range b.N {
		var times []time.Duration
		var plain, gzipped []byte
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range scrapes {
			began := time.Now()
			scrapeTo(b, srv.URL, io.Discard, false)
			times = append(times, time.Since(began))
		}
		runtime.ReadMemStats(&after)
		plain, gzipped = scrape(b, srv.URL, false), scrape(b, srv.URL, true)
		slices.Sort(times)
		series := seriesOf(plain)
		if runs := strings.Count(string(plain), "spanbench_run_info{"); runs != finishedRuns {
			b.Fatalf("the scrape serves %d runs' spanbench_run_info, want %d", runs, finishedRuns)
		}
		allocPerScrape := float64(after.TotalAlloc-before.TotalAlloc) / scrapes
		b.ReportMetric(float64(times[len(times)/2].Microseconds())/1e3, "scrape-p50-ms")
		b.ReportMetric(float64(times[len(times)-1].Microseconds())/1e3, "scrape-max-ms")
		b.ReportMetric(float64(len(plain))/1024, "response-KiB")
		b.ReportMetric(float64(len(gzipped))/1024, "response-gzip-KiB")
		b.ReportMetric(float64(series), "series")
		b.ReportMetric(allocPerScrape/(1<<20), "allocated-MiB/scrape")
		b.Logf("%d finished runs: %d scrapes, p50 %s, max %s; %d series, %.0f KiB (%.0f KiB gzipped); %.1f MiB allocated per scrape (collector and promhttp; the scraping client discards the body)",
			finishedRuns, scrapes, times[len(times)/2].Round(time.Millisecond/10), times[len(times)-1].Round(time.Millisecond/10),
			series, float64(len(plain))/1024, float64(len(gzipped))/1024, allocPerScrape/(1<<20))
	}
}

// scrape gets url's metrics, gzipped or not, and returns the body as
// received.
func scrape(b *testing.B, url string, gzipped bool) []byte {
	b.Helper()
	var body bytes.Buffer
	scrapeTo(b, url, &body, gzipped)
	return body.Bytes()
}

// scrapeTo gets url's metrics into w, in the text exposition Prometheus
// accepts, gzipped when asked (the transport then does not decompress).
func scrapeTo(b *testing.B, url string, w io.Writer, gzipped bool) {
	b.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	if gzipped {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("scrape: status %d, %v", resp.StatusCode, err)
	}
}

// seriesOf counts the samples of a text exposition.
func seriesOf(body []byte) int {
	n := 0
	for line := range strings.Lines(string(body)) {
		if !strings.HasPrefix(line, "#") && strings.TrimSpace(line) != "" {
			n++
		}
	}
	return n
}

// createFinishedRuns creates n succeeded runs with results in ns, eight
// at a time.
func createFinishedRuns(b *testing.B, c client.Client, ns string, n int) {
	b.Helper()
	work := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range work {
				errs <- createFinishedRun(c, ns, i)
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
}

// createFinishedRun creates run i and writes a succeeded status with
// results, as the controller would have.
func createFinishedRun(c client.Client, ns string, i int) error {
	ended := time.Now().Add(-time.Duration(i) * time.Hour)
	run := runtest.Run(fmt.Sprintf("nightly-%04d", i)).InNamespace(ns).RunnersReady(ended.Add(-time.Hour)).Succeeded(ended).Obj()
	run.UID, run.Generation = types.UID(""), 0
	run.Labels = map[string]string{collectors.LabelVariant: []string{"baseline", "candidate"}[i%2]}
	status := run.Status
	ctx := context.Background()
	if err := c.Create(ctx, run); err != nil {
		return err
	}
	run.Status = status
	fillResults(run, i)
	return c.Status().Update(ctx, run)
}

// fillResults gives a run the status of a 4-operation result.
func fillResults(run *v1alpha1.BenchmarkRun, i int) {
	d := func(us int) *metav1.Duration {
		return &metav1.Duration{Duration: time.Duration(us+i) * time.Microsecond}
	}
	figures := func(k int) v1alpha1.ResultFigures {
		return v1alpha1.ResultFigures{Count: int64(100_000 * k), Throughput: fmt.Sprintf("%d.5", 900*k), NotFound: int64(k),
			Errors: 3, ErrorsByCode: map[string]int64{"DeadlineExceeded": 2, "Aborted": 1},
			Latency: &v1alpha1.LatencySummary{P50: d(2000 * k), P90: d(4000 * k), P99: d(9000 * k), P999: d(20000 * k), Max: d(90000 * k)}}
	}
	for k, op := range []v1alpha1.OperationType{v1alpha1.OpRead, v1alpha1.OpUpdate, v1alpha1.OpInsert, v1alpha1.OpScan} {
		run.Status.Operations = append(run.Status.Operations, v1alpha1.OperationResult{Name: string(op), Type: op, ResultFigures: figures(k + 1)})
	}
	overall := figures(4)
	run.Status.Overall = &overall
	warm := metav1.NewTime(run.Status.StartTime.Add(30 * time.Second))
	run.Status.WarmUpEnd = &warm
	run.Status.StartSkew = &metav1.Duration{Duration: 3 * time.Millisecond}
	run.Status.Environment = &v1alpha1.RunEnvironment{Endpoint: v1alpha1.EndpointSpanner, InstanceConfig: "regional-asia-northeast1",
		Runners: 4, RunnerRegion: "asia-northeast1", ClientVersion: "v1.96.1", Nodes: ptr.To(int32(3))}
	run.Status.Dataset = &v1alpha1.DatasetStatus{Table: "usertable", Rows: 1_000_000, Loaded: 1_000_000, Source: v1alpha1.DatasetLoaded}
}
