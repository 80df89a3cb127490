package scale_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
)

// apiServerFigures are the API server's own request figures, scraped from
// its /metrics: how long it took to serve each kind of request
// (apiserver_request_duration_seconds) and how long requests waited in
// API Priority and Fairness's queues before it
// (apiserver_flowcontrol_request_wait_duration_seconds), summed by series.
type apiServerFigures map[string]struct {
	count uint64
	sum   float64
}

// scrapeAPIServer reads the figures (cumulative since the API server
// started).
func scrapeAPIServer(tb testing.TB) apiServerFigures {
	tb.Helper()
	cs, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		tb.Fatal(err)
	}
	body, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	out := apiServerFigures{}
	add := func(key string, h *dto.Histogram) {
		f := out[key]
		f.count += h.GetSampleCount()
		f.sum += h.GetSampleSum()
		out[key] = f
	}
	if mf := families["apiserver_request_duration_seconds"]; mf != nil {
		for _, m := range mf.GetMetric() {
			add(fmt.Sprintf("serve %s %s %s", labelValue(m, "verb"), labelValue(m, "resource"), labelValue(m, "subresource")), m.GetHistogram())
		}
	}
	if mf := families["apiserver_flowcontrol_request_wait_duration_seconds"]; mf != nil {
		for _, m := range mf.GetMetric() {
			add(fmt.Sprintf("APF wait %s %s", labelValue(m, "priority_level"), labelValue(m, "execute")), m.GetHistogram())
		}
	}
	if mf := families["etcd_request_duration_seconds"]; mf != nil {
		for _, m := range mf.GetMetric() {
			add(fmt.Sprintf("etcd %s", labelValue(m, "operation")), m.GetHistogram())
		}
	}
	return out
}

// since is what was observed after before.
func (a apiServerFigures) since(before apiServerFigures) apiServerFigures {
	out := apiServerFigures{}
	for k, f := range a {
		f.count -= before[k].count
		f.sum -= before[k].sum
		if f.count > 0 {
			out[k] = f
		}
	}
	return out
}

// String lists the series of at least 50 requests, longest total first.
func (a apiServerFigures) String() string {
	var keys []string
	for k, f := range a {
		if f.count >= 50 && !strings.HasPrefix(k, "serve WATCH") {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(x, y string) int { return int(1e3 * (a[y].sum - a[x].sum)) })
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %-60s %6d, total %7.2f s, mean %6.1f ms", k, a[k].count, a[k].sum, 1e3*a[k].sum/float64(a[k].count))
	}
	return b.String()
}
