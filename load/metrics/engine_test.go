package metrics_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/spanbench/spanbench/internal/sessiontest"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/load/engine"
	"github.com/spanbench/spanbench/load/metrics"
)

// TestScrapedCountersMatchTheResult runs a short load with live metrics,
// scrapes /metrics over HTTP and checks the counters agree with the result
// document, and that no label carries a key or a value.
func TestScrapedCountersMatchTheResult(t *testing.T) {
	rows, rate := int64(200), int32(100)
	spec := &v1alpha1.WorkloadSpec{Type: v1alpha1.WorkloadYCSB, Dataset: v1alpha1.DatasetSpec{Rows: &rows},
		Operations: []v1alpha1.OperationSpec{{Type: v1alpha1.OpRead, Weight: 1, Staleness: &v1alpha1.StalenessSpec{Exact: &metav1.Duration{Duration: 5 * time.Second}}},
			{Type: v1alpha1.OpUpdate, Weight: 1}},
		Load: v1alpha1.LoadSpec{Rate: &rate}, Duration: &metav1.Duration{Duration: 2 * time.Second}}
	*spec = spec.Resolved()
	s := sessiontest.Start(t, spec)
	w, err := s.Workload(spec, "metrics", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reg := prometheus.NewRegistry()
	m, err := metrics.NewEngine(reg, "metrics", spec.Operations)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := metrics.Serve(ctx, "127.0.0.1:0", reg)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := engine.Run(ctx, engine.Config{Run: "metrics", Spec: spec, Workload: w, Shard: 0, Shards: 1, Observer: m})
	if err != nil {
		t.Fatal(err)
	}
	families := scrape(t, "http://"+addr+"/metrics")
	for _, op := range doc.Totals {
		got := value(families["spanbench_operations_total"], map[string]string{"operation": op.Name, "code": "OK"})
		if got != float64(op.OK) {
			t.Errorf("spanbench_operations_total{operation=%q,code=OK} = %v, the result says %d", op.Name, got, op.OK)
		}
		h := find(families["spanbench_operation_latency_seconds"], map[string]string{"operation": op.Name})
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
