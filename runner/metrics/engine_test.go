package metrics_test

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/operation"
	"github.com/spanbench/spanbench/runner/engine"
	"github.com/spanbench/spanbench/runner/metrics"
	"github.com/spanbench/spanbench/runner/schedule"
)

// TestScrapedCountersMatchTheResult runs a short load with live metrics,
// scrapes /metrics over HTTP and checks the counters agree with the result
// document, and that no label carries a key or a value.
func TestScrapedCountersMatchTheResult(t *testing.T) {
	spec, err := result.NewSpec([]byte(`{"operations":[{"name":"read","type":"Read","weight":1},{"name":"update","type":"Update","weight":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	read := operation.Func(func(context.Context, *rand.Rand) (operation.Outcome, error) { return operation.Outcome{Rows: 1}, nil })
	update := operation.Func(func(_ context.Context, rng *rand.Rand) (operation.Outcome, error) {
		if rng.IntN(4) == 0 {
			return operation.Outcome{}, status.Error(codes.Aborted, "aborted")
		}
		return operation.Outcome{Rows: 1}, nil
	})
	cfg := engine.Config{Run: "metrics", Spec: spec, Interval: time.Second, Shards: 1,
		Operations: []engine.Operation{{Name: "read", Weight: 1, Op: read}, {Name: "update", Weight: 1, Op: update}},
		Load:       engine.Load{Profile: schedule.Profile{{From: 100, To: 100, Duration: 2 * time.Second}}, MaxInFlight: 16}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reg := prometheus.NewRegistry()
	m, err := metrics.NewEngine(reg, "metrics", spec.Settings().Operations)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := metrics.Serve(ctx, "127.0.0.1:0", reg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Observer = m
	doc, err := engine.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	families := scrape(t, "http://"+addr+"/metrics")
	for _, op := range doc.Totals {
		got := value(families["spanbench_operations_total"], map[string]string{"operation": op.Name, "code": "OK"})
		if got != float64(op.OK) {
			t.Errorf("spanbench_operations_total{operation=%q,code=OK} = %v, the result says %d", op.Name, got, op.OK)
		}
		if n := op.Errors[codes.Aborted.String()]; n > 0 {
			if got := value(families["spanbench_operations_total"], map[string]string{"operation": op.Name, "type": string(op.Type), "code": "Aborted"}); got != float64(n) {
				t.Errorf("spanbench_operations_total{operation=%q,code=Aborted} = %v, the result says %d", op.Name, got, n)
			}
		}
		h := find(families["spanbench_operation_latency_seconds"], map[string]string{"operation": op.Name, "type": string(op.Type)})
		if h == nil || h.GetHistogram().GetSampleCount() != op.OK {
			t.Errorf("latency histogram of %s counts %v samples, the result %d", op.Name, h.GetHistogram().GetSampleCount(), op.OK)
		}
	}
	for name, f := range families {
		if !strings.HasPrefix(name, "spanbench_") {
			continue
		}
		for _, metric := range f.GetMetric() {
			for _, l := range metric.GetLabel() {
				if !map[string]bool{"run": true, "operation": true, "type": true, "code": true}[l.GetName()] {
					t.Errorf("%s has an unexpected label %s=%s", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
}

func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return families
}

// find returns the metric of a family whose labels include want.
func find(f *dto.MetricFamily, want map[string]string) *dto.Metric {
	for _, m := range f.GetMetric() {
		matched := 0
		for _, l := range m.GetLabel() {
			if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
				matched++
			}
		}
		if matched == len(want) {
			return m
		}
	}
	return nil
}

func value(f *dto.MetricFamily, want map[string]string) float64 {
	m := find(f, want)
	if m == nil {
		return -1
	}
	return m.GetCounter().GetValue()
}
