package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
)

// changePoints selects the trend's change points, as Unix milliseconds (an
// annotation reads its time from the value).
const changePoints = `1000 * max by (namespace, campaign, variant, operation, statistic, iteration, verdict, acknowledged) (spanbench_campaign_change_point_timestamp_seconds{` + rowMatch + `})`

// nightlyTrend is the dashboard of a campaign over its iterations: each
// variant's figures as Prometheus recorded them iteration after
// iteration, with the trend's change points as annotations.
func nightlyTrend() *dashboard.DashboardBuilder {
	b := campaignBase("spanbench-nightly-trend", "spanbench / Nightly trend",
		"A BenchmarkCampaign over its iterations: each variant's and the baseline's figures and their ratio, one step per iteration, and the change points the trend found (annotations and a table). The history lasts as long as Prometheus keeps it.").
		Time("now-30d", "now").
		Annotation(dashboard.NewAnnotationQueryBuilder().
			Name("Change points").
			Datasource(datasource()).
			Enable(true).
			IconColor("red").
			Target(prometheus.NewDataqueryBuilder().Expr(changePoints).RefId("Anno")).
			Expr(changePoints).
			UseValueForTime(true).
			Step("1h").
			TitleFormat("Change point: {{variant}} {{operation}} {{statistic}} {{verdict}}").
			TextFormat("New level from iteration {{iteration}} (acknowledged: {{acknowledged}})").
			TagKeys("verdict,acknowledged"))
	return withRows(b, []row{
		{"Figures by iteration", figureTrendPanels()},
		{"Ratio to the baseline", []cog.Builder[dashboard.Panel]{ratioTrend()}},
		{"Change points and iterations", changePointPanels()},
	})
}

// statisticKinds split the comparison's statistics by unit, one panel
// each, so that every panel has one unit.
var statisticKinds = []struct{ title, statistics, unit, what string }{
	{"Latency", "P50|P90|P99|P999", unitSeconds, "latency percentiles, from the merged histogram of each cell's runs"},
	{"Throughput", "Throughput", unitOps, "successful operations per second"},
	{"Error rate", "ErrorRate", unitRatio, "failed operations over all finished ones"},
}

func figureTrendPanels() []cog.Builder[dashboard.Panel] {
	var out []cog.Builder[dashboard.Panel]
	for _, k := range statisticKinds {
		match := rowMatch + `, statistic=~"` + k.statistics + `"`
		out = append(out, timeSeries(panel{
			title:       k.title + " by variant over iterations",
			description: "Each selected variant's and the baseline's " + k.what + ", per operation, as each iteration's comparison left them; a step is a new iteration.",
			unit:        k.unit, width: 8,
			queries: []query{
				{expr: figure("spanbench_campaign_comparison_value", match, byRow), legend: "{{variant}} {{operation}} {{statistic}}"},
				{expr: figure("spanbench_campaign_comparison_baseline", match, "namespace, campaign, operation, statistic"), legend: "baseline {{operation}} {{statistic}}"},
			},
		}).LineInterpolation(common.LineInterpolationStepAfter))
	}
	return out
}

func ratioTrend() cog.Builder[dashboard.Panel] {
	return timeSeries(panel{
		title:       "Ratio to the baseline over iterations",
		description: "Each variant's ratio to the baseline per operation and statistic, iteration after iteration (solid), with the bounds of its confidence interval (dashed, when the runs allow one). 1× is no change.",
		unit:        unitRatioX, width: 24, height: 10,
		queries: []query{
			{expr: figure("spanbench_campaign_comparison_ratio", rowMatch, byRow), legend: "{{variant}} {{operation}} {{statistic}}"},
			{expr: figure("spanbench_campaign_comparison_ratio_low", rowMatch, byRow), legend: "{{variant}} {{operation}} {{statistic}} CI low"},
			{expr: figure("spanbench_campaign_comparison_ratio_high", rowMatch, byRow), legend: "{{variant}} {{operation}} {{statistic}} CI high"},
		},
	}).LineInterpolation(common.LineInterpolationStepAfter).
		OverrideByRegexp(".*CI (low|high)$", []dashboard.DynamicConfigValue{
			{Id: "custom.lineStyle", Value: map[string]any{"fill": "dash", "dash": []int{10, 10}}},
		})
}

func changePointPanels() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{
		tablePanel(panel{
			title: "Change points",
			description: "The change points the campaign's trend found in each variant's series (E-divisive means with a permutation test): where the new level starts, whether it is a regression or an improvement by the metric's direction, " +
				"and whether an acknowledgement covers it (an acknowledged change does not set Regressed). Empty until the trend finds one.",
			unit: unitText, width: 16, height: 8,
			queries: []query{{expr: changePoints, table: true}},
		}, []string{"namespace", "campaign"}, []column{{"Value", "new level from", "dateTimeAsIso"}}),
		statPanel(panel{
			title:       "Latest iteration",
			description: "Outcome of the campaign's latest iteration: Running, Succeeded, Failed, or Missed (not started in time).",
			unit:        unitText, width: 8, height: 8,
			queries: []query{{expr: `max by (namespace, campaign, outcome) (spanbench_campaign_latest_iteration{` + campaignMatch + `})`, legend: "{{outcome}}", instant: true}},
		}).TextMode(common.BigValueTextModeName),
	}
}
