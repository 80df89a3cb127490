// Package querylint checks spanbench's PromQL, the dashboards' panel
// queries and the alert rules' expressions, with the Prometheus parser:
// the expression parses; counters are read only through rate, irate or
// increase; a dashboard's rate windows are Grafana's $__rate_interval;
// histogram_quantile reads bucket rates summed by le (the distribution of
// all runner pods together); and no average or quantile is taken of
// percentile series, which would not be a percentile of anything.
//
// Only tests link this package.
package querylint

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// RateIntervalStandIn is the window Lint puts in place of Grafana's
// $__rate_interval before parsing; a rate over any other window in a
// dashboard is reported. An odd value, so no query writes it by hand.
const RateIntervalStandIn = 4*time.Minute + 33*time.Second

// PercentileSeries hold quantiles already (the controller's exact figures,
// and a campaign's comparison of them): averaging them, or taking their
// quantile, gives no percentile.
var PercentileSeries = []string{"spanbench_run_latency_seconds",
	"spanbench_campaign_comparison_baseline", "spanbench_campaign_comparison_value",
	"spanbench_campaign_comparison_ratio", "spanbench_campaign_comparison_ratio_low", "spanbench_campaign_comparison_ratio_high"}

// counterSuffixes end the names of counters and of histograms' cumulative
// series, which only make sense as rates or increases.
var counterSuffixes = []string{"_total", "_bucket", "_count", "_sum"}

// rateFuncs read a counter correctly, across resets.
var rateFuncs = []string{"rate", "irate", "increase"}

var grafanaVariable = regexp.MustCompile(`\$\{?(\w+)\}?`)

// ExpandGrafana replaces Grafana's variables so that a panel query parses:
// $__rate_interval with RateIntervalStandIn, the other built-in intervals
// with a minute, and every other variable (they sit inside label matcher
// strings) with a plain word.
func ExpandGrafana(expr string) string {
	return grafanaVariable.ReplaceAllStringFunc(expr, func(v string) string {
		switch name := grafanaVariable.FindStringSubmatch(v)[1]; name {
		case "__rate_interval":
			return model.Duration(RateIntervalStandIn).String()
		case "__range", "__interval", "__range_s", "__interval_ms":
			return "1m"
		default:
			return "value"
		}
	})
}

// Lint parses expr and returns what is wrong with it. A dashboard query is
// passed through ExpandGrafana first, and its rate windows must be
// $__rate_interval.
func Lint(expr string, dashboard bool) []string {
	if dashboard {
		expr = ExpandGrafana(expr)
	}
	root, err := parser.ParseExpr(expr)
	if err != nil {
		return []string{fmt.Sprintf("does not parse: %v", err)}
	}
	var problems []string
	report := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	parser.Inspect(root, func(n parser.Node, path []parser.Node) error {
		switch n := n.(type) {
		case *parser.VectorSelector:
			if isCounter(name(n)) && !underRate(path) {
				report("counter %s is read without rate(), irate() or increase()", name(n))
			}
		case *parser.MatrixSelector:
			if dashboard && n.Range != RateIntervalStandIn && underRate(append(slices.Clone(path), n)) {
				report("rate window %s is not [$__rate_interval]", model.Duration(n.Range).String())
			}
		case *parser.Call:
			problems = append(problems, lintCall(n)...)
		case *parser.AggregateExpr:
			if (n.Op == parser.AVG || n.Op == parser.QUANTILE) && holdsPercentiles(n.Expr) {
				report("%s over percentiles (%s): an average or quantile of per-pod or per-run percentiles is no percentile; use histogram_quantile over summed buckets, or the controller's exact figures", n.Op, n)
			}
		}
		return nil
	})
	return problems
}

func lintCall(c *parser.Call) []string {
	switch c.Func.Name {
	case "avg_over_time", "quantile_over_time":
		if holdsPercentiles(c) {
			return []string{fmt.Sprintf("%s over percentiles (%s) gives no percentile", c.Func.Name, c)}
		}
	case "histogram_quantile":
		if err := summedBucketRates(c.Args[1]); err != nil {
			return []string{fmt.Sprintf("histogram_quantile over %s: %v", c.Args[1], err)}
		}
	}
	return nil
}

// summedBucketRates accepts sum by (le, ...) (rate(x_bucket[...])): the
// buckets of every pod added up before the quantile is taken.
func summedBucketRates(e parser.Expr) error {
	agg, ok := unparen(e).(*parser.AggregateExpr)
	if !ok || agg.Op != parser.SUM || agg.Without || !slices.Contains(agg.Grouping, "le") {
		return fmt.Errorf("want sum by (le, ...) of bucket rates, so that the quantile is of all pods' samples together")
	}
	call, ok := unparen(agg.Expr).(*parser.Call)
	if !ok || !slices.Contains(rateFuncs, call.Func.Name) {
		return fmt.Errorf("want the sum of rate() or increase() of _bucket series")
	}
	m, ok := call.Args[0].(*parser.MatrixSelector)
	if !ok {
		return fmt.Errorf("want a range selector of _bucket series")
	}
	if n := name(m.VectorSelector.(*parser.VectorSelector)); !strings.HasSuffix(n, "_bucket") {
		return fmt.Errorf("%s is not a _bucket series", n)
	}
	return nil
}

// holdsPercentiles says whether e reads quantiles: histogram_quantile's
// results, the controller's percentile series, or any series selected by
// its quantile label.
func holdsPercentiles(e parser.Node) bool {
	found := false
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		switch n := n.(type) {
		case *parser.Call:
			found = found || n.Func.Name == "histogram_quantile"
		case *parser.VectorSelector:
			found = found || slices.Contains(PercentileSeries, name(n)) ||
				slices.ContainsFunc(n.LabelMatchers, func(m *labels.Matcher) bool { return m.Name == "quantile" })
		}
		return nil
	})
	return found
}

// underRate says whether the last node of path is a range selector that
// rate(), irate() or increase() reads.
func underRate(path []parser.Node) bool {
	var up []parser.Node
	for _, n := range path {
		if _, ok := n.(parser.Expressions); !ok { // a call's argument list
			up = append(up, n)
		}
	}
	if len(up) < 2 {
		return false
	}
	if _, ok := up[len(up)-1].(*parser.MatrixSelector); !ok {
		return false
	}
	call, ok := up[len(up)-2].(*parser.Call)
	return ok && slices.Contains(rateFuncs, call.Func.Name)
}

func isCounter(name string) bool {
	return slices.ContainsFunc(counterSuffixes, func(s string) bool { return strings.HasSuffix(name, s) })
}

// name is a selector's metric name, also when given as {__name__="..."}.
func name(v *parser.VectorSelector) string {
	if v.Name != "" {
		return v.Name
	}
	for _, m := range v.LabelMatchers {
		if m.Name == "__name__" && m.Type == labels.MatchEqual {
			return m.Value
		}
	}
	return ""
}

func unparen(e parser.Expr) parser.Expr {
	for {
		p, ok := e.(*parser.ParenExpr)
		if !ok {
			return e
		}
		e = p.Expr
	}
}
