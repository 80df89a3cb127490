package dashboards

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// PanelQuery is one panel target of a dashboard JSON, as Grafana sends it
// to Prometheus before variable expansion.
type PanelQuery struct {
	// Dashboard is the dashboard's uid.
	Dashboard string
	// Panel is the panel's title.
	Panel string
	// RefID names the target within its panel (A, B, ...).
	RefID string
	// Expr is the PromQL, with Grafana's $variables in it.
	Expr string
	// Instant is true for an instant query, false for a range query.
	Instant bool
}

// Panel is what the lint needs of one panel of a dashboard JSON.
type Panel struct {
	Title, Description, Type, Unit string
	// Datasource is the panel's datasource uid.
	Datasource string
	Queries    []PanelQuery
	// TargetDatasources are the uids of its targets' datasources, in order.
	TargetDatasources []string
}

// dashboardJSON is the part of Grafana's dashboard model read back here.
type dashboardJSON struct {
	UID    string      `json:"uid"`
	Panels []panelJSON `json:"panels"`
}

type panelJSON struct {
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Datasource  *struct {
		UID string `json:"uid"`
	} `json:"datasource"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
	Targets []struct {
		RefID      string `json:"refId"`
		Expr       string `json:"expr"`
		Instant    bool   `json:"instant"`
		Datasource *struct {
			UID string `json:"uid"`
		} `json:"datasource"`
	} `json:"targets"`
	// Panels of a collapsed row.
	Panels []panelJSON `json:"panels"`
}

// Panels reads the panels of a dashboard JSON, rows left out (the panels
// of a collapsed row included).
func Panels(dashboard []byte) ([]Panel, error) {
	var d dashboardJSON
	if err := json.Unmarshal(dashboard, &d); err != nil {
		return nil, err
	}
	if d.UID == "" {
		return nil, fmt.Errorf("a dashboard without a uid")
	}
	var out []Panel
	var walk func([]panelJSON)
	walk = func(ps []panelJSON) {
		for _, p := range ps {
			if p.Type == "row" {
				walk(p.Panels)
				continue
			}
			out = append(out, panelOf(d.UID, p))
		}
	}
	walk(d.Panels)
	return out, nil
}

func panelOf(uid string, p panelJSON) Panel {
	out := Panel{Title: p.Title, Description: p.Description, Type: p.Type, Unit: p.FieldConfig.Defaults.Unit}
	if p.Datasource != nil {
		out.Datasource = p.Datasource.UID
	}
	for _, t := range p.Targets {
		out.Queries = append(out.Queries, PanelQuery{Dashboard: uid, Panel: p.Title, RefID: t.RefID, Expr: t.Expr, Instant: t.Instant})
		ds := ""
		if t.Datasource != nil {
			ds = t.Datasource.UID
		}
		out.TargetDatasources = append(out.TargetDatasources, ds)
	}
	return out
}

// PanelQueries returns every panel query of a dashboard JSON.
func PanelQueries(dashboard []byte) ([]PanelQuery, error) {
	panels, err := Panels(dashboard)
	if err != nil {
		return nil, err
	}
	var out []PanelQuery
	for _, p := range panels {
		out = append(out, p.Queries...)
	}
	return out, nil
}

// ReadDir reads every dashboard JSON file (*.json) of a directory, such as
// config/grafana, by file name.
func ReadDir(dir string) (map[string][]byte, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out[filepath.Base(n)] = b
	}
	return out, nil
}

// Vars are values for a query's Grafana variables, by name without the $:
// namespace, run, operation, and Grafana's own __rate_interval, __range.
type Vars map[string]string

// Expand replaces the variables in a query as Grafana would for a single
// selected value: $name and ${name}. A variable without a value is left
// as it is, so that the query does not parse and the caller sees it.
func (q PanelQuery) Expand(v Vars) string {
	names := make([]string, 0, len(v))
	for n := range v {
		names = append(names, n)
	}
	// Longest first: $__rate_interval before a hypothetical $__rate.
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	expr := q.Expr
	for _, n := range names {
		expr = strings.ReplaceAll(expr, "${"+n+"}", v[n])
		expr = strings.ReplaceAll(expr, "$"+n, v[n])
	}
	return expr
}

// QueriesIn returns the panel queries of every dashboard JSON in a
// directory, such as config/grafana: what an end-to-end test runs against
// a real Prometheus (after Expand) to check that every panel shows data.
func QueriesIn(dir string) ([]PanelQuery, error) {
	files, err := ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []PanelQuery
	for _, n := range names {
		qs, err := PanelQueries(files[n])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		out = append(out, qs...)
	}
	return out, nil
}

// sometimesEmpty are the series a healthy setup may lack, and why: a
// panel query that reads only these may rightly return nothing.
var sometimesEmpty = map[string]string{
	"spanbench_campaign_comparison_ratio_low":            "the runs are too few for a confidence interval",
	"spanbench_campaign_comparison_ratio_high":           "the runs are too few for a confidence interval",
	"spanbench_campaign_comparison_p_value":              "no test ran (too few runs or intervals)",
	"spanbench_campaign_next_schedule_timestamp_seconds": "the campaign has no schedule or is suspended",
	"spanbench_campaign_change_point_timestamp_seconds":  "the trend has found no change point",
	"spanbench_run_errors":                               "the manager exports a run's failed operations only when it had some",
	// Server figures exist for Cloud Spanner runs only (the e2e runs on
	// the emulator), and not-captured only for an operation with no row.
	"spanbench_run_server_cpu_seconds_per_operation":   noServerFigures,
	"spanbench_run_server_executions_per_operation":    noServerFigures,
	"spanbench_run_server_coverage_ratio":              noServerFigures,
	"spanbench_run_server_not_captured":                noServerFigures,
	"spanbench_run_server_rows_per_operation":          noServerFigures,
	"spanbench_run_server_latency_avg_seconds":         noServerFigures + "; queries only (read statistics have no latency)",
	"spanbench_run_server_latency_seconds":             noServerFigures + "; queries only (read statistics have no latency histogram)",
	"spanbench_run_server_transaction_latency_seconds": noServerFigures + "; read-write transactions only",
	"spanbench_run_server_lock_wait_seconds":           noServerFigures + "; only for an operation whose transactions Spanner sampled in a lock conflict",
	"spanbench_run_server_cpu_utilization_ratio":       noServerFigures,
	"spanbench_run_server_request_latency_seconds":     noServerFigures,
	"spanbench_run_server_requests":                    noServerFigures,
	"spanbench_run_warmup_ended_by":                    noServerFigures,
	"spanbench_run_gfe_latency_seconds":                noServerFigures + " (the emulator sends no server-timing header)",
	// A capacity search's series exist for search runs only, a cost's
	// once priced.
	seriesCapacity:        noSearch,
	seriesCapacityPerNode: noSearch + "; and only where the instance's size is known (not on the emulator)",
	seriesStepOffered:     noSearch,
	seriesStepAchieved:    noSearch,
	seriesStepPassed:      noSearch,
	seriesStepFigure:      noSearch,
	seriesSLOBound:        noSearch,
	"spanbench_run_cost":  noPrice,
	"spanbench_run_cost_per_million_operations": noPrice,
}

// noSearch and noPrice are why a capacity or a cost panel may be empty;
// TestMayBeEmpty counts those apart, as their panels' figures are proven
// by their own promtool tests.
const (
	noSearch = "capacity search figures exist for search runs only (spec.workload.load.search)"
	noPrice  = "a cost is served only where it is known: the price catalog has a price for the run's configuration"
)

// noServerFigures is why a server panel may be empty. Every reason of a
// server series starts with it: TestMayBeEmpty counts those apart.
const noServerFigures = "server figures are collected for Cloud Spanner runs only (not on the emulator), once Spanner has published them"

var seriesName = regexp.MustCompile(`\bspanbench_[a-z_]+`)

// sometimesEmptySelections are label selections a campaign may match
// nothing with, and why.
var sometimesEmptySelections = map[string]string{
	`statistic=~"ErrorRate"`: "the campaign compares no ErrorRate (not among the default metrics)",
	`code!="OK"`:             "runner operations that failed: a healthy run (the e2e runs on the emulator) has none",
}

// MayBeEmpty says why the query may rightly return no series (every
// spanbench series it reads is one a healthy setup may lack, or it selects
// what a campaign may not compare), or "" when an empty answer means the
// panel is broken.
func (q PanelQuery) MayBeEmpty() string {
	for sel, why := range sometimesEmptySelections {
		if strings.Contains(q.Expr, sel) {
			return why
		}
	}
	var reasons []string
	for _, name := range seriesName.FindAllString(q.Expr, -1) {
		why, ok := sometimesEmpty[name]
		if !ok {
			return ""
		}
		if !slices.Contains(reasons, why) {
			reasons = append(reasons, why)
		}
	}
	return strings.Join(reasons, "; ")
}
