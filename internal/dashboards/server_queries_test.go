package dashboards_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/collectors"
	"github.com/spanbench/spanbench/internal/dashboards"
	"github.com/spanbench/spanbench/internal/runtest"
)

func ms(f float64) *metav1.Duration {
	return &metav1.Duration{Duration: time.Duration(f * float64(time.Millisecond))}
}

// serverRun is a finished Cloud Spanner run whose status has Spanner's
// statistics and Cloud Monitoring's figures. Its three operations are the
// seed's: a Read API key list over 4 splits (564 µs of CPU, 10 rows;
// reads have no server latency), the SQL query (its two minutes'
// histograms merged: p50 3.02 ms, p99 46.6 ms; 250 rows scanned to
// return 10) and an update whose transactions waited on a hot row (total
// latency p99 15.92 ms, 3.0 s of lock wait by share). The client's and
// the GFE's p99 stand above the server's: the latency ladder.
func serverRun() *v1alpha1.BenchmarkRun {
	run := runtest.Run("served").InNamespace("bench").CloudSpanner().Succeeded(time.Unix(1700000000, 0)).Obj()
	run.Status.Overall = &v1alpha1.ResultFigures{Count: 12000}
	figures := func(n int64, p99 float64) v1alpha1.ResultFigures {
		return v1alpha1.ResultFigures{Count: n, Latency: &v1alpha1.LatencySummary{P99: ms(p99)}}
	}
	gfe := func(p50, p99 float64) *v1alpha1.GFELatency {
		return &v1alpha1.GFELatency{Count: 4000, P50: ms(p50), P99: ms(p99)}
	}
	run.Status.Operations = []v1alpha1.OperationResult{
		{Name: "read", ResultFigures: figures(4000, 9), GFELatency: gfe(2, 6),
			Server: &v1alpha1.ServerOperationFigures{Coverage: "1.000", ExecutionsPerOperation: "4.00",
				CPUPerOperation: ms(0.564), RowsReturnedPerOperation: "10.00"}},
		{Name: "query", ResultFigures: figures(4000, 52), GFELatency: gfe(3.5, 48),
			Server: &v1alpha1.ServerOperationFigures{Coverage: "0.667", ExecutionsPerOperation: "1.00",
				CPUPerOperation: ms(1.532), RowsReturnedPerOperation: "10.00", RowsScannedPerOperation: "250.00",
				LatencyAvg: ms(4.25), LatencyP50: ms(3.02), LatencyP99: ms(46.6)}},
		{Name: "update", ResultFigures: figures(4000, 21), GFELatency: gfe(9, 17),
			Server: &v1alpha1.ServerOperationFigures{Coverage: "1.000", ExecutionsPerOperation: "1.00",
				CPUPerOperation: ms(0.82), TransactionLatencyP99: ms(15.92), LockWait: &metav1.Duration{Duration: 3 * time.Second}}},
	}
	settled := true
	run.Status.ServerMetrics = &v1alpha1.ServerMetricsStatus{
		CPU:      []v1alpha1.ServerCPU{{Priority: "high", Location: "asia-northeast1", MeanPercent: "42.3", MaxPercent: "50.0"}},
		Latency:  []v1alpha1.ServerMethodLatency{{Method: "ExecuteSql", Count: 300, P50: ms(3), P99: ms(7)}},
		Requests: []v1alpha1.ServerRequestCount{{Status: "OK", Count: 1337400}, {Status: "ABORTED", Count: 312}},
		WarmUp:   &v1alpha1.ServerWarmUp{Settled: &settled, EndedBy: v1alpha1.WarmUpSignalServer},
	}
	return run
}

// missedRun is serverRun with nothing captured: its one operation has
// only the not-captured series, and no Cloud Monitoring figures.
func missedRun() *v1alpha1.BenchmarkRun {
	run := serverRun()
	run.Name, run.Status.ServerMetrics = "missed", nil
	run.Status.Operations = run.Status.Operations[:1]
	run.Status.Operations[0].Server = &v1alpha1.ServerOperationFigures{NotCaptured: true}
	run.Status.Operations[0].GFELatency = nil
	return run
}

// serverSeries is what the results collector serves for serverRun and
// missedRun, in promtool's input_series notation.
func serverSeries(t *testing.T) []string {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(serverRun(), missedRun()).Build()
	return gathered(t, &collectors.ResultsCollector{Reader: reader})
}

// serverVars select both runs and every operation.
var serverVars = dashboards.Vars{"namespace": "bench", "run": "served|missed", "operation": ".*", "__rate_interval": "1m", "__range": "1h", "__interval": "1m"}

// TestServerPanelQueriesReturnSeries runs every query of the Results
// dashboard that reads a server series, its variables filled in, in
// promtool's real PromQL engine over what the results collector serves
// for serverRun: each must return a series.
func TestServerPanelQueriesReturnSeries(t *testing.T) {
	promtool, rules, where := panelAlerts(t, serverVars, func(q dashboards.PanelQuery) bool {
		return q.Dashboard == "spanbench-results" && (strings.Contains(q.Expr, "spanbench_run_server_") ||
			strings.Contains(q.Expr, "spanbench_run_warmup_ended_by") || strings.Contains(q.Expr, "spanbench_run_gfe_"))
	})
	if len(rules) < 22 {
		t.Fatalf("%d server queries on the Results dashboard; want the statistics table's 6, the ladder table's 6 and bars' 2, rows, CPU, CPU by priority, latency per method (2), lock wait, requests and warm-up signal panels' (22)", len(rules))
	}
	promtoolFires(t, promtool, rules, where, serverSeries(t), "a server panel's query")
}

// sample is one series a panel query must return: its labels in
// PromQL's notation, and its value.
type sample struct {
	labels string
	value  float64
}

// op is the labels of an operation of a run in bench.
func op(run, operation string, more ...string) string {
	return fmt.Sprintf(`{%s}`, strings.Join(append([]string{`namespace="bench"`, fmt.Sprintf(`operation=%q`, operation), fmt.Sprintf(`run=%q`, run)}, more...), ", "))
}

// TestServerPanelsShowTheRunsFigures evaluates the queries of the server
// panels — a table's column by its title, a bar gauge's query by its
// refId — in promtool's real PromQL engine over what the results
// collector serves for serverRun and missedRun, and checks every series
// each returns and its value: the latency ladder (client, GFE and server
// p99 per operation), the server's p50, average, transaction p99 and lock
// wait, rows scanned against returned, and Cloud Monitoring's requests
// by status. A figure the run lacks (a read's server latency, a query's
// lock wait, anything of the not-captured run) must return no series,
// never a zero.
func TestServerPanelsShowTheRunsFigures(t *testing.T) {
	const (
		ladder = "Latency ladder per operation"
		bars   = "Latency ladder p99: client, GFE, server"
		stats  = "Spanner statistics per operation"
	)
	series := serverSeries(t)
	for _, c := range []struct {
		panel, column string // column: a table's column title, or a query's refId
		want          []sample
	}{
		{ladder, "client p99", []sample{{op("served", "read"), 0.009}, {op("served", "query"), 0.052}, {op("served", "update"), 0.021}, {op("missed", "read"), 0.009}}},
		{ladder, "GFE p99", []sample{{op("served", "read"), 0.006}, {op("served", "query"), 0.048}, {op("served", "update"), 0.017}}},
		{ladder, "server p99", []sample{{op("served", "query"), 0.0466}}},
		{ladder, "server p50", []sample{{op("served", "query"), 0.00302}}},
		{ladder, "server avg", []sample{{op("served", "query"), 0.00425}}},
		{ladder, "transaction p99", []sample{{op("served", "update"), 0.01592}}},
		{ladder, "lock wait", []sample{{op("served", "update"), 3}}},
		{bars, "A", []sample{{op("served", "read"), 0.009}, {op("served", "query"), 0.052}, {op("served", "update"), 0.021}, {op("missed", "read"), 0.009}}},
		{bars, "B", []sample{{op("served", "read"), 0.006}, {op("served", "query"), 0.048}, {op("served", "update"), 0.017}}},
		{bars, "C", []sample{{op("served", "query"), 0.0466}}},
		{stats, "rows returned/op", []sample{{op("served", "read"), 10}, {op("served", "query"), 10}}},
		{stats, "rows scanned/op", []sample{{op("served", "query"), 250}}},
		{stats, "server CPU/op", []sample{{op("served", "read"), 0.000564}, {op("served", "query"), 0.001532}, {op("served", "update"), 0.00082}}},
		{stats, "not captured", []sample{{op("missed", "read"), 1}}},
		{"Rows scanned vs returned per operation", "A", []sample{
			{op("served", "read", `kind="returned"`), 10}, {op("served", "query", `kind="returned"`), 10}, {op("served", "query", `kind="scanned"`), 250}}},
		{"Lock wait per operation", "A", []sample{{op("served", "update"), 3}}},
		{"API requests by status (Cloud Monitoring)", "A", []sample{
			{`{namespace="bench", run="served", status="OK"}`, 1337400}, {`{namespace="bench", run="served", status="ABORTED"}`, 312}}},
	} {
		t.Run(c.panel+"/"+c.column, func(t *testing.T) {
			q := panelQuery(t, "spanbench-results.json", c.panel, c.column)
			promtoolEvaluates(t, q.Expand(serverVars), c.want, series)
		})
	}
}

// panelQuery finds the query of a committed dashboard's panel that fills
// column: a table's column title (its organize transformation renames
// "Value #<refId>" to it), or a refId.
func panelQuery(t *testing.T, file, title, column string) dashboards.PanelQuery {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(committed, file))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title           string
			Transformations []struct {
				ID      string `json:"id"`
				Options struct {
					RenameByName map[string]string `json:"renameByName"`
				} `json:"options"`
			} `json:"transformations"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	refID := column
	for _, p := range d.Panels {
		for _, tr := range p.Transformations {
			for field, name := range tr.Options.RenameByName {
				if p.Title == title && name == column {
					refID = strings.TrimPrefix(field, "Value #")
				}
			}
		}
	}
	panels, err := dashboards.Panels(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range panels {
		for _, q := range p.Queries {
			if p.Title == title && q.RefID == refID {
				return q
			}
		}
	}
	t.Fatalf("%s has no panel %q with a column or query %q", file, title, column)
	return dashboards.PanelQuery{}
}

// promtoolEvaluates runs expr in promtool's real PromQL engine over series
// (in input_series notation) at 30m and fails, saying what came back,
// unless it returns exactly want.
func promtoolEvaluates(t *testing.T, expr string, want []sample, series []string) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool is not on PATH: install Debian's prometheus package (`make deps`, or hack/install-deps.sh prometheus)")
	}
	var input []map[string]string
	for _, s := range series {
		series, values, _ := strings.Cut(s, " ")
		input = append(input, map[string]string{"series": series, "values": values})
	}
	exp := []map[string]any{}
	for _, s := range want {
		exp = append(exp, map[string]any{"labels": s.labels, "value": s.value})
	}
	testFile := map[string]any{"evaluation_interval": "1m", "tests": []any{map[string]any{
		"interval": "1m", "input_series": input,
		"promql_expr_test": []any{map[string]any{"expr": expr, "eval_time": "30m", "exp_samples": exp}},
	}}}
	b, err := yaml.Marshal(testFile)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "panel.test.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(promtool, "test", "rules", "panel.test.yaml")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Errorf("%s does not return the run's figures (%v):\n%s", expr, err, out.String())
	}
}

// TestServerSeriesMayBeEmpty: every server series the manager exports is
// one an emulator run lacks, so the e2e test, which runs every panel
// query after emulator runs, must excuse a query reading it, and say why.
func TestServerSeriesMayBeEmpty(t *testing.T) {
	n := 0
	for _, name := range exported(t) {
		if !strings.HasPrefix(name, "spanbench_run_server_") && !strings.HasPrefix(name, "spanbench_run_gfe_") && name != "spanbench_run_warmup_ended_by" {
			continue
		}
		n++
		why := (dashboards.PanelQuery{Expr: "max by (run) (" + name + `{run="r"})`}).MayBeEmpty()
		if !strings.HasPrefix(why, "server figures are collected") {
			t.Errorf("a panel query reading %s may not be empty (MayBeEmpty says %q), yet emulator runs have no such series: add it to sometimesEmpty", name, why)
		}
	}
	if n < 14 {
		t.Errorf("%d server series exported; want the SPANNER_SYS, Cloud Monitoring, GFE and warm-up signal series (14)", n)
	}
}
