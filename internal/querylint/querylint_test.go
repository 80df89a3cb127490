package querylint_test

import (
	"strings"
	"testing"

	"github.com/spanbench/spanbench/internal/querylint"
)

func TestLint(t *testing.T) {
	const bucketRate = `rate(spanbench_operation_latency_seconds_bucket{run=~"$run"}[$__rate_interval])`
	for _, tc := range []struct {
		name      string
		expr      string
		dashboard bool
		// want is a fragment of the one problem expected; empty: none.
		want string
	}{
		{name: "quantile of summed bucket rates", dashboard: true,
			expr: `histogram_quantile(0.99, sum by (le, operation) (` + bucketRate + `))`},
		{name: "quantile per pod", dashboard: true,
			expr: `histogram_quantile(0.99, ` + bucketRate + `)`, want: "want sum by (le, ...)"},
		{name: "quantile summed without le", dashboard: true,
			expr: `histogram_quantile(0.99, sum without (pod) (` + bucketRate + `))`, want: "want sum by (le, ...)"},
		{name: "quantile over a non-bucket series", dashboard: true,
			expr: `histogram_quantile(0.99, sum by (le) (rate(spanbench_operations_total[$__rate_interval])))`, want: "is not a _bucket series"},
		{name: "average of per-pod quantiles", dashboard: true,
			expr: `avg by (operation) (histogram_quantile(0.99, sum by (le, pod, operation) (` + bucketRate + `)))`, want: "avg over percentiles"},
		{name: "quantile of per-pod quantiles", dashboard: true,
			expr: `quantile(0.5, histogram_quantile(0.99, sum by (le, pod) (` + bucketRate + `)))`, want: "quantile over percentiles"},
		{name: "average of the exact figures of several runs",
			expr: `avg(spanbench_run_latency_seconds{quantile="0.99"})`, want: "avg over percentiles"},
		{name: "average of any quantile-labelled series",
			expr: `avg(rpc_latency{quantile="0.99"})`, want: "avg over percentiles"},
		{name: "average of a campaign's pooled percentiles across variants",
			expr: `avg by (campaign) (spanbench_campaign_comparison_value{statistic="P99"})`, want: "avg over percentiles"},
		{name: "average over time of percentiles",
			expr: `avg_over_time(spanbench_run_latency_seconds[1h])`, want: "avg_over_time over percentiles"},
		{name: "maximum of one figure served by two replicas",
			expr: `max by (namespace, run) (spanbench_run_latency_seconds{quantile="0.99"})`},
		{name: "average of rates is fine", dashboard: true,
			expr: `avg(rate(spanbench_operations_total[$__rate_interval]))`},
		{name: "raw counter", expr: `sum(spanbench_operations_total)`, want: "counter spanbench_operations_total is read without rate"},
		{name: "counter by __name__", expr: `{__name__="spanbench_missed_sends_total"}`, want: "without rate"},
		{name: "counter over time", expr: `max_over_time(spanbench_missed_sends_total[5m])`, want: "without rate"},
		{name: "counter in a rule with a fixed window", expr: `rate(spanbench_missed_sends_total[5m]) > 0`},
		{name: "dashboard rate with a fixed window", dashboard: true,
			expr: `sum(rate(spanbench_missed_sends_total[5m]))`, want: "rate window 5m is not [$__rate_interval]"},
		{name: "gauge", dashboard: true, expr: `sum by (pod) (spanbench_in_flight{namespace=~"$namespace", run=~"${run}"})`},
		{name: "does not parse", expr: `sum(rate(x_total[5m])`, want: "does not parse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := querylint.Lint(tc.expr, tc.dashboard)
			if tc.want == "" {
				if len(got) != 0 {
					t.Errorf("Lint(%s) = %q, want no problem", tc.expr, got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0], tc.want) {
				t.Errorf("Lint(%s) = %q, want one problem saying %q", tc.expr, got, tc.want)
			}
		})
	}
}

func TestExpandGrafana(t *testing.T) {
	got := querylint.ExpandGrafana(`rate(x_total{run=~"$run", ns="${namespace}"}[$__rate_interval]) [$__range:]`)
	want := `rate(x_total{run=~"value", ns="value"}[4m33s]) [1m:]`
	if got != want {
		t.Errorf("ExpandGrafana = %s, want %s", got, want)
	}
}
