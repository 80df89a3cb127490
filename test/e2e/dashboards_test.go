//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spanbench/spanbench/internal/dashboards"
)

// dashboardsDir holds the shipped Grafana dashboards; every JSON file in
// it is checked, so dashboards added later are covered without a change
// here.
const dashboardsDir = "config/grafana"

// The suite's Prometheus scrapes every second (scrapeConfig), and the
// dashboards are queried as Grafana would over the test's window with a
// 2 s step: $__interval is the step, $__rate_interval Grafana's
// max($__interval + scrape interval, 4 × scrape interval).
const (
	dashboardStep  = 2 * time.Second
	scrapeInterval = time.Second
)

// requireDashboardsServed runs every panel query of every dashboard in
// config/grafana against the real Prometheus, after the real runs and
// campaign that fed it, and fails naming the dashboard, panel and
// expression of each query that returns no series, unless the query says
// why it may (dashboards.PanelQuery.MayBeEmpty, the one list of such
// series, which the dashboards package tests too). The
// Grafana variables get values from the real objects (known: namespace,
// run, campaign, ...); each query variable's own query must list that
// value, and a variable the test does not know takes the first value its
// query lists, so a new dashboard's new variable is still resolved as
// Grafana would. Range targets are range queries over [from, now], instant
// ones instant queries at now with $__range the same window.
func requireDashboardsServed(t *testing.T, prom *prometheus, from time.Time, known map[string]string) {
	files, err := dashboards.ReadDir(filepath.Join(suite.root, dashboardsDir))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards in %s (%v)", dashboardsDir, err)
	}
	// A range query is evaluated at from, from+step, ... up to to: start
	// the grid a whole number of steps before to, so that its last point
	// is to itself. Otherwise a series first scraped in the last step
	// (the campaign's, just compared) has no point on the grid at all.
	to := time.Now()
	steps := (to.Sub(from) + dashboardStep - 1) / dashboardStep
	from = to.Add(-steps * dashboardStep)
	window := to.Sub(from).Round(time.Second) + time.Second
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	checked := 0
	for _, name := range names {
		builtin := dashboards.Vars{
			"__interval":      model(dashboardStep),
			"__interval_ms":   strconv.FormatInt(dashboardStep.Milliseconds(), 10),
			"__rate_interval": model(max(dashboardStep+scrapeInterval, 4*scrapeInterval)),
			"__range":         model(window),
			"__range_s":       strconv.FormatInt(int64(window.Seconds()), 10),
			"__range_ms":      strconv.FormatInt(window.Milliseconds(), 10),
		}
		vars, err := dashboardVars(t.Context(), prom, files[name], builtin, known, from, to)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		queries, err := dashboards.PanelQueries(files[name])
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, q := range queries {
			checked++
			checkPanelQuery(t, prom, name, q, vars, from, to)
		}
	}
	t.Logf("%d panel queries of %d dashboards checked against Prometheus", checked, len(names))
	if run := known["run"]; run != "" {
		logScrapes(t, prom, known["namespace"], run, from, to)
	}
}

// unexpanded finds a Grafana variable left in a query after expansion, in
// any of Grafana's syntaxes.
var unexpanded = regexp.MustCompile(`\$\{?\w+|\[\[\w+`)

// checkPanelQuery runs one panel query and reports it unless it returns
// series or may rightly return none (PanelQuery.MayBeEmpty).
func checkPanelQuery(t *testing.T, prom *prometheus, file string, q dashboards.PanelQuery, vars dashboards.Vars, from, to time.Time) {
	where := fmt.Sprintf("%s (%s), panel %q, target %s", file, q.Dashboard, q.Panel, q.RefID)
	expr := q.Expand(vars)
	if v := unexpanded.FindString(expr); v != "" {
		t.Errorf("%s: variable %s has no value (the dashboard's templating does not define it): %s", where, v, q.Expr)
		return
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var n int
	var err error
	if q.Instant {
		var res []sample
		res, err = prom.queryAt(ctx, expr, to)
		n = len(res)
	} else {
		n, err = prom.queryRange(ctx, expr, from, to, dashboardStep)
	}
	switch {
	case err != nil:
		t.Errorf("%s: Prometheus refuses the query: %v\n  %s", where, err, expr)
	case n > 0:
		t.Logf("%s: %d series", where, n)
	default:
		if why := q.MayBeEmpty(); why != "" {
			t.Logf("%s: no series, allowed (%s)", where, why)
			return
		}
		t.Errorf("%s: no series after a real campaign\n  %s", where, expr)
	}
}

// grafanaVariable is the part of a dashboard's templating.list read here.
type grafanaVariable struct {
	Name    string          `json:"name"`
	Type    string          `json:"type"`
	Query   json.RawMessage `json:"query"`
	Options []struct {
		Value any `json:"value"`
	} `json:"options"`
}

// dashboardVars resolves a dashboard's variables in their order (a
// variable's query may use the ones before it): a known value must be
// listed by the variable's query; an unknown query variable takes the
// first value its query lists; a custom or constant one its first option
// or its query. Datasource variables select the datasource, not series.
// vars holds Grafana's built-in variables and receives the resolved ones.
func dashboardVars(ctx context.Context, prom *prometheus, dashboard []byte, vars dashboards.Vars, known map[string]string,
	from, to time.Time) (dashboards.Vars, error) {
	var d struct {
		Templating struct {
			List []grafanaVariable `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(dashboard, &d); err != nil {
		return nil, err
	}
	for _, v := range d.Templating.List {
		query := variableQuery(v.Query)
		switch v.Type {
		case "datasource", "adhoc":
			continue
		case "query":
			expanded := dashboards.PanelQuery{Expr: query}.Expand(vars)
			values, err := prom.variableValues(ctx, expanded, from, to)
			if err != nil {
				return nil, fmt.Errorf("variable $%s: %w", v.Name, err)
			}
			if want, ok := known[v.Name]; ok {
				if !slices.Contains(values, want) {
					return nil, fmt.Errorf("variable $%s: its query %s lists %v, not %q of the real campaign", v.Name, expanded, values, want)
				}
				vars[v.Name] = want
				continue
			}
			if len(values) == 0 {
				return nil, fmt.Errorf("variable $%s: its query %s lists nothing after a real campaign", v.Name, expanded)
			}
			vars[v.Name] = values[0]
		default: // custom, constant, textbox, interval
			if want, ok := known[v.Name]; ok {
				vars[v.Name] = want
			} else if len(v.Options) > 0 {
				vars[v.Name] = fmt.Sprint(v.Options[0].Value)
			} else {
				vars[v.Name], _, _ = strings.Cut(query, ",")
			}
		}
	}
	return vars, nil
}

// variableQuery is a variable's query, which Grafana writes as a string
// or as an object with a query field.
func variableQuery(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Query string `json:"query"`
	}
	_ = json.Unmarshal(raw, &o)
	return o.Query
}

// labelValuesQuery is Grafana's label_values(selector, label) or
// label_values(label).
var labelValuesQuery = regexp.MustCompile(`^\s*label_values\(\s*(?:(.*),\s*)?(\w+)\s*\)\s*$`)

// variableValues lists what a query variable offers, as Grafana's
// Prometheus datasource asks for it: label_values through the label
// values API over [from, to] (the runner pods' series are stale by now),
// anything else as an instant query whose series' values are listed.
func (p *prometheus) variableValues(ctx context.Context, query string, from, to time.Time) ([]string, error) {
	m := labelValuesQuery.FindStringSubmatch(query)
	if m == nil {
		res, err := p.queryAt(ctx, strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(query), "query_result("), ")"), to)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, s := range res {
			out = append(out, strconv.FormatFloat(s.value, 'g', -1, 64))
		}
		return out, nil
	}
	params := url.Values{"start": {unix(from)}, "end": {unix(to)}}
	if m[1] != "" {
		params.Set("match[]", m[1])
	}
	var values []string
	if err := p.get(ctx, "/api/v1/label/"+url.PathEscape(m[2])+"/values?"+params.Encode(), &values); err != nil {
		return nil, fmt.Errorf("%s: %w", query, err)
	}
	return values, nil
}

// queryAt runs an instant query at t.
func (p *prometheus) queryAt(ctx context.Context, q string, t time.Time) ([]sample, error) {
	var data struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	}
	if err := p.get(ctx, "/api/v1/query?"+url.Values{"query": {q}, "time": {unix(t)}}.Encode(), &data); err != nil {
		return nil, err
	}
	out := make([]sample, 0, len(data.Result))
	for _, r := range data.Result {
		s, _ := r.Value[1].(string)
		v, _ := strconv.ParseFloat(s, 64)
		out = append(out, sample{labels: r.Metric, value: v})
	}
	return out, nil
}

// queryRange runs a range query and returns how many series it found.
func (p *prometheus) queryRange(ctx context.Context, q string, from, to time.Time, step time.Duration) (int, error) {
	var data struct {
		Result []json.RawMessage `json:"result"`
	}
	params := url.Values{"query": {q}, "start": {unix(from)}, "end": {unix(to)}, "step": {model(step)}}
	if err := p.get(ctx, "/api/v1/query_range?"+params.Encode(), &data); err != nil {
		return 0, err
	}
	return len(data.Result), nil
}

// get calls Prometheus' HTTP API and decodes the data of a successful
// answer into data.
func (p *prometheus) get(ctx context.Context, path string, data any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("%s: %w", resp.Status, err)
	}
	if body.Status != "success" {
		return fmt.Errorf("%s: %s", resp.Status, body.Error)
	}
	return json.Unmarshal(body.Data, data)
}

func unix(t time.Time) string { return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64) }

// model writes a duration as PromQL does: whole seconds.
func model(d time.Duration) string { return strconv.FormatInt(int64(d.Seconds()), 10) + "s" }

// rawSamples returns the raw samples of each series q selects in the
// window before at (an instant query of a range selector: the samples as
// scraped, not evaluated), keyed by the series' labels, each written as
// its time in seconds after from and, unless it is 1, its value.
func (p *prometheus) rawSamples(ctx context.Context, q string, from, at time.Time) (map[string][]string, error) {
	var data struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
		} `json:"result"`
	}
	sel := q + "[" + model(at.Sub(from).Round(time.Second)+time.Second) + "]"
	if err := p.get(ctx, "/api/v1/query?"+url.Values{"query": {sel}, "time": {unix(at)}}.Encode(), &data); err != nil {
		return nil, fmt.Errorf("%s: %w", sel, err)
	}
	out := map[string][]string{}
	for _, r := range data.Result {
		key := fmt.Sprint(r.Metric)
		for _, v := range r.Values {
			ts, _ := v[0].(float64)
			s := strconv.FormatFloat(ts-float64(from.UnixMilli())/1000, 'f', 1, 64)
			if val, _ := v[1].(string); val != "1" {
				s += "=" + val
			}
			out[key] = append(out[key], s)
		}
	}
	return out, nil
}

// logScrapes logs when Prometheus scraped the run's runner pods (up; =0
// marks a failed scrape) and the samples of each of the run's series of
// spanbench_operations_total, in seconds after from: a rate() over
// $__rate_interval needs two of them in one window.
func logScrapes(t *testing.T, prom *prometheus, ns, run string, from, to time.Time) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for _, q := range []string{
		fmt.Sprintf(`up{job="spanbench-runners", namespace=%q, pod=~%q}`, ns, run+"-.*"),
		fmt.Sprintf(`spanbench_operations_total{namespace=%q, run=%q}`, ns, run),
	} {
		res, err := prom.rawSamples(ctx, q, from, to)
		if err != nil {
			t.Logf("samples of run %s: %v", run, err)
			return
		}
		if len(res) == 0 {
			t.Logf("run %s: no sample of %s", run, q)
		}
		for series, at := range res {
			t.Logf("run %s: %d samples of %s at %s s", run, len(at), series, strings.Join(at, " "))
		}
	}
}
