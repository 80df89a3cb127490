package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
)

// campaignMatch selects the chosen campaign's series; rowMatch, its chosen
// variants and operations (the comparison rows).
const (
	campaignMatch = `namespace=~"$namespace", campaign=~"$campaign"`
	rowMatch      = campaignMatch + `, variant=~"$variant", operation=~"$operation"`
	byRow         = "namespace, campaign, variant, operation, statistic"
	byCampaign    = "namespace, campaign"
	// campaignSeries is served for every campaign, whatever its status.
	campaignSeries = "spanbench_campaign_missed_schedules"
	// unitRatioX is a ratio variant / baseline, written 1.25×.
	unitRatioX = "suffix:×"
	unitTime   = "dateTimeFromNow"
)

// campaignBase is what both campaign dashboards share: the campaign,
// variant and operation variables over the manager's campaign series.
func campaignBase(uid, title, description string) *dashboard.DashboardBuilder {
	return base(uid, title, description).
		WithVariable(labelVariable("namespace", "namespace", "Namespace of the BenchmarkCampaign.", campaignSeries, false)).
		WithVariable(labelVariable("campaign", "campaign", "The BenchmarkCampaign.", campaignSeries+`{namespace=~"$namespace"}`, false)).
		WithVariable(labelVariable("variant", "variant", "Variants (cells) compared with the campaign's baseline.", `spanbench_campaign_comparison_ratio{`+campaignMatch+`}`, true)).
		WithVariable(labelVariable("operation", "operation", "Operations of the campaign's workload.", `spanbench_campaign_comparison_ratio{`+campaignMatch+`}`, true))
}

// campaignComparison is the dashboard of a campaign's latest comparison:
// every variant against the baseline, with its interval and verdict.
func campaignComparison() *dashboard.DashboardBuilder {
	b := campaignBase("spanbench-campaign-comparison", "spanbench / Campaign comparison",
		"A BenchmarkCampaign's latest comparison, as in its status: each variant against the baseline per operation and statistic, the ratio with its confidence interval, and the verdict. Figures are the manager's, computed from the runs' merged HDR histograms.").
		Time("now-24h", "now")
	return withRows(b, []row{
		{"Campaign", campaignStatPanels()},
		{"Comparison", []cog.Builder[dashboard.Panel]{comparisonTable(), ratioBars()}},
	})
}

func campaignStatPanels() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{
		statPanel(panel{
			title:       "Verdict",
			description: "The campaign's verdict: Regressed when the latest comparison or the trend found a regression, else the latest comparison's overall verdict (Improved, Neutral, Inconclusive).",
			unit:        unitText, width: 6, height: 5,
			queries: []query{{expr: `max by (namespace, campaign, verdict) (spanbench_campaign_verdict{` + campaignMatch + `})`, legend: "{{verdict}}", instant: true}},
		}).TextMode(common.BigValueTextModeName),
		timeStat("Last success", "When the campaign's last iteration succeeded (all its runs finished and compared).", "spanbench_campaign_last_success_timestamp_seconds"),
		timeStat("Next iteration", "When the campaign's next iteration is due; empty without a schedule or while suspended.", "spanbench_campaign_next_schedule_timestamp_seconds"),
		statPanel(panel{
			title:       "Missed schedules",
			description: "Iterations recorded as Missed (started later than startingDeadlineSeconds, or due while one ran under concurrencyPolicy Forbid) among the latest 100.",
			unit:        unitCount, width: 6, height: 5,
			queries: []query{{expr: `max by (namespace, campaign) (spanbench_campaign_missed_schedules{` + campaignMatch + `})`, legend: "missed", instant: true}},
		}),
	}
}

func timeStat(title, description, metric string) *stat.PanelBuilder {
	return statPanel(panel{
		title: title, description: description, unit: unitTime, width: 6, height: 5,
		queries: []query{{expr: `1000 * max by (namespace, campaign) (` + metric + `{` + campaignMatch + `})`, legend: title, instant: true}},
	})
}

// comparisonColumns are the comparison table's value columns, in order
// (one query each): the series, the column's title and its unit.
var comparisonColumns = []struct{ metric, title, unit string }{
	{"spanbench_campaign_comparison_baseline", "baseline", unitCount},
	{"spanbench_campaign_comparison_value", "value", unitCount},
	{"spanbench_campaign_comparison_ratio", "ratio", unitRatioX},
	{"spanbench_campaign_comparison_ratio_low", "CI low", unitRatioX},
	{"spanbench_campaign_comparison_ratio_high", "CI high", unitRatioX},
	{"spanbench_campaign_comparison_p_value", "p", unitCount},
}

func comparisonTable() cog.Builder[dashboard.Panel] {
	var qs []query
	var cols []column
	for i, c := range comparisonColumns {
		qs = append(qs, query{expr: figure(c.metric, rowMatch, byRow), table: true})
		cols = append(cols, column{fmt.Sprintf("Value #%c", 'A'+i), c.title, c.unit})
	}
	verdict := fmt.Sprintf("Value #%c", 'A'+len(qs))
	qs = append(qs, query{expr: figure("spanbench_campaign_comparison_verdict", rowMatch, byRow+", verdict"), table: true})
	return tablePanel(panel{
		title: "Comparison table",
		description: "One row per variant, operation and statistic of the latest iteration: the baseline's and the variant's value (seconds for latency percentiles, operations per second for Throughput, a ratio 0-1 for ErrorRate; " +
			"each read from the merged histogram of the cell's runs, never an average of percentiles), the ratio variant / baseline, its confidence interval (empty when the runs are too few for one), " +
			"the p-value and the verdict. Regressed only when the interval excludes 1 and the change reaches the campaign's minEffect.",
		unit: unitText, width: 24, height: 12,
		queries: qs,
	}, []string{"namespace", "campaign", verdict}, cols)
}

// ratioBars draws each row's interval and ratio as three bars, low, ratio
// and high, side by side: the interval is the distance between the outer
// two, and a row whose low and high straddle 1 is no change.
func ratioBars() cog.Builder[dashboard.Panel] {
	var qs []query
	for _, q := range []struct{ metric, name string }{
		{"spanbench_campaign_comparison_ratio_low", "CI low"},
		{"spanbench_campaign_comparison_ratio", "ratio"},
		{"spanbench_campaign_comparison_ratio_high", "CI high"},
	} {
		qs = append(qs, query{expr: figure(q.metric, rowMatch, byRow), legend: "{{variant}} {{operation}} {{statistic}} " + q.name, instant: true})
	}
	return barGauge(panel{
		title: "Ratio with confidence interval",
		description: "Per variant, operation and statistic: the ratio variant / baseline between the bounds of its confidence interval (CI low, ratio, CI high). 1× is no change; " +
			"for latencies and error rates above 1 is worse, for Throughput below 1 is worse. An interval that contains 1 is not a significant change.",
		unit: unitRatioX, width: 24, height: 14,
		queries: qs,
	}).Min(0)
}
