package dashboards_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/collectors"
	"github.com/spanbench/spanbench/internal/dashboards"
)

// campaignDashboards are the dashboards that read the campaign series.
var campaignDashboards = map[string]bool{"spanbench-campaign-comparison": true, "spanbench-nightly-trend": true}

// scrapedSeries are the series the manager's campaign collector serves
// for a campaign with every figure (intervals, p-values, a schedule, a
// change point), in promtool's input_series notation.
func scrapedSeries(t *testing.T) []string {
	t.Helper()
	at := func(sec int64) *metav1.Time { return &metav1.Time{Time: time.Unix(sec, 0)} }
	c := &v1alpha1.BenchmarkCampaign{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "bench"}}
	row := func(op string, s v1alpha1.CampaignStatistic, v v1alpha1.CampaignVerdict) v1alpha1.ComparisonRow {
		return v1alpha1.ComparisonRow{Variant: "asia1", Metric: op, Operation: op, Statistic: s, Baseline: "2000", Value: "2600",
			Ratio: "1.300", Low: "1.200", High: "1.400", Confidence: "96.8%", N: "5+5", PValue: "0.0079", Verdict: v}
	}
	c.Status = v1alpha1.BenchmarkCampaignStatus{
		Verdict: v1alpha1.VerdictRegressed, LastSuccessfulTime: at(1700000600), LastScheduleTime: at(1700000000), NextScheduleTime: at(1700086400),
		Iterations: []v1alpha1.IterationStatus{{Name: "nightly-1700000000", ScheduledTime: *at(1700000000), Outcome: v1alpha1.IterationSucceeded}},
		Comparison: &v1alpha1.ComparisonStatus{Iteration: "nightly-1700000000", Baseline: "tokyo", Verdict: v1alpha1.VerdictRegressed,
			Rows: []v1alpha1.ComparisonRow{
				row("commit", v1alpha1.StatisticP99, v1alpha1.VerdictRegressed),
				row("commit", v1alpha1.StatisticThroughput, v1alpha1.VerdictNeutral),
				row("commit", v1alpha1.StatisticErrorRate, v1alpha1.VerdictNeutral),
			}},
		ChangePoints: []v1alpha1.ChangePointStatus{{Variant: "asia1", Metric: "commit p99 µs", Iteration: "nightly-1700000000",
			Before: "2000", After: "2600", PValue: "0.01", Verdict: v1alpha1.VerdictRegressed}},
	}
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return gathered(t, &collectors.CampaignCollector{Reader: fake.NewClientBuilder().WithScheme(scheme).WithObjects(c).Build()})
}

// gathered is what collector serves, in promtool's input_series notation,
// as two manager replicas serve it.
func gathered(t *testing.T, collector prometheus.Collector) []string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(collector)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				v, _ := json.Marshal(l.GetValue())
				labels = append(labels, fmt.Sprintf("%s=%s", l.GetName(), v))
			}
			// Two manager replicas serve the same figures.
			for _, pod := range []string{"manager-0", "manager-1"} {
				out = append(out, fmt.Sprintf("%s{%s,pod=%q} %gx40", f.GetName(), strings.Join(labels, ","), pod, m.GetGauge().GetValue()))
			}
		}
	}
	return out
}

// TestCampaignPanelQueriesReturnSeries runs every query of the campaign
// dashboards (panels and annotations), its variables filled in, in
// promtool's real PromQL engine over the series the campaign collector
// serves: each must return at least one series. Each query becomes an
// alert `count(query) > 0` that must fire.
func TestCampaignPanelQueriesReturnSeries(t *testing.T) {
	vars := dashboards.Vars{"namespace": "bench", "campaign": "nightly", "variant": ".*", "operation": ".*", "__rate_interval": "1m", "__range": "1h"}
	promtool, rules, where := panelAlerts(t, vars, func(q dashboards.PanelQuery) bool { return campaignDashboards[q.Dashboard] })
	annotations := annotationQueries(t)
	for _, a := range annotations {
		name := fmt.Sprintf("Q%03d", len(rules)+1)
		rules = append(rules, alert{name, "count(" + (dashboards.PanelQuery{Expr: a}).Expand(vars) + ") > 0"})
		where[name] = "annotation " + a
	}
	if len(rules) < 20 || len(annotations) == 0 {
		t.Fatalf("%d campaign queries and %d annotations found; the campaign dashboards have more", len(rules), len(annotations))
	}
	promtoolFires(t, promtool, rules, where, scrapedSeries(t), "a campaign dashboard query")
}

// panelAlerts finds promtool and turns every committed dashboard query
// keep selects, its variables filled in from vars, into an alert
// `count(query) > 0` that must fire; where says which panel each is from.
func panelAlerts(t *testing.T, vars dashboards.Vars, keep func(dashboards.PanelQuery) bool) (promtool string, rules []alert, where map[string]string) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool is not on PATH: install Debian's prometheus package (`make deps`, or hack/install-deps.sh prometheus)")
	}
	qs, err := dashboards.QueriesIn(committed)
	if err != nil {
		t.Fatal(err)
	}
	where = map[string]string{}
	for _, q := range qs {
		if !keep(q) {
			continue
		}
		name := fmt.Sprintf("Q%03d", len(rules)+1)
		rules = append(rules, alert{name, "count(" + q.Expand(vars) + ") > 0"})
		where[name] = q.Dashboard + " / " + q.Panel + " / " + q.RefID
	}
	return promtool, rules, where
}

// alert is a rule of promtool's test: one query that must fire.
type alert struct {
	Alert string `json:"alert"`
	Expr  string `json:"expr"`
}

// promtoolFires runs promtool's real PromQL engine over series (in
// input_series notation) and fails, naming what, unless every rule fires
// at 30m; where says which panel each rule's query is from.
func promtoolFires(t *testing.T, promtool string, rules []alert, where map[string]string, series []string, what string) {
	t.Helper()
	type firing struct {
		EvalTime  string `json:"eval_time"`
		Alertname string `json:"alertname"`
		ExpAlerts []any  `json:"exp_alerts"`
	}
	var checks []firing
	for _, r := range rules {
		checks = append(checks, firing{"30m", r.Alert, []any{map[string]any{"exp_labels": map[string]string{}}}})
	}
	var input []map[string]string
	for _, s := range series {
		series, values, _ := strings.Cut(s, " ")
		input = append(input, map[string]string{"series": series, "values": values})
	}
	ruleFile := map[string]any{"groups": []any{map[string]any{"name": "panels", "rules": rules}}}
	testFile := map[string]any{"rule_files": []string{"panels.rules.yaml"}, "evaluation_interval": "1m",
		"tests": []any{map[string]any{"interval": "1m", "input_series": input, "alert_rule_test": checks}}}
	dir := t.TempDir()
	for name, v := range map[string]any{"panels.rules.yaml": ruleFile, "panels.test.yaml": testFile} {
		b, err := yaml.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(promtool, "test", "rules", "panels.test.yaml")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		names := make([]string, 0, len(where))
		for n := range where {
			names = append(names, n+": "+where[n])
		}
		sort.Strings(names)
		t.Errorf("%s returns no series over the collector's series (%v):\n%s\nqueries:\n%s", what, err, out.String(), strings.Join(names, "\n"))
	}
}

// annotationQueries are the annotation expressions of the campaign
// dashboards.
func annotationQueries(t *testing.T) []string {
	t.Helper()
	files, err := dashboards.ReadDir(committed)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range files {
		var d struct {
			UID         string
			Annotations struct{ List []struct{ Expr string } }
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		for _, a := range d.Annotations.List {
			if campaignDashboards[d.UID] && a.Expr != "" {
				out = append(out, a.Expr)
			}
		}
	}
	return out
}
