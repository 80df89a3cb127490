package collectors

import (
	"context"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/comparison"
	"github.com/spanbench/spanbench/campaign/plan"
)

// CampaignCollector serves every campaign's latest comparison, verdict
// and schedule at scrape time from the informer cache, as the results
// collector serves runs. Labels are bounded by the campaign's status (its
// variants, operations and statistics, at most 64 rows and 32 change
// points), never run names; a deleted campaign's series disappear with it.
type CampaignCollector struct {
	// Reader is the manager's cached client.
	Reader client.Reader
}

var (
	campaignLabels = []string{"namespace", "campaign"}
	rowLabels      = []string{"namespace", "campaign", "variant", "operation", "statistic"}

	descCmpRatio      = prometheus.NewDesc("spanbench_campaign_comparison_ratio", "Estimated ratio variant / baseline of a statistic in the campaign's latest comparison.", rowLabels, nil)
	descCmpRatioLow   = prometheus.NewDesc("spanbench_campaign_comparison_ratio_low", "Lower bound of the ratio's confidence interval; absent when the samples are too few for one.", rowLabels, nil)
	descCmpRatioHigh  = prometheus.NewDesc("spanbench_campaign_comparison_ratio_high", "Upper bound of the ratio's confidence interval; absent when the samples are too few for one.", rowLabels, nil)
	descCmpBaseline   = prometheus.NewDesc("spanbench_campaign_comparison_baseline", "The baseline's value of the statistic, from the merged histogram of its runs (the mean of its runs' figures for the server's): seconds for latencies, operations per second for Throughput, a ratio (0-1) for ErrorRate and ServerHighPriorityCPU; absent for a side whose server figures were not collected.", rowLabels, nil)
	descCmpValue      = prometheus.NewDesc("spanbench_campaign_comparison_value", "The variant's value of the statistic, in the units of spanbench_campaign_comparison_baseline.", rowLabels, nil)
	descCmpPValue     = prometheus.NewDesc("spanbench_campaign_comparison_p_value", "Two-sided p-value of the row against no difference.", rowLabels, nil)
	descCmpVerdict    = prometheus.NewDesc("spanbench_campaign_comparison_verdict", "The row's verdict (Improved, Neutral, Regressed, Inconclusive, Invalid) in the verdict label; always 1.", append(rowLabels, "verdict"), nil)
	descCampVerdict   = prometheus.NewDesc("spanbench_campaign_verdict", "The campaign's verdict (status.verdict) in the verdict label; always 1.", append(campaignLabels, "verdict"), nil)
	descLastSuccess   = prometheus.NewDesc("spanbench_campaign_last_success_timestamp_seconds", "When the campaign's last iteration succeeded, Unix time.", campaignLabels, nil)
	descLastSchedule  = prometheus.NewDesc("spanbench_campaign_last_schedule_timestamp_seconds", "When the campaign's last iteration was scheduled, Unix time.", campaignLabels, nil)
	descNextSchedule  = prometheus.NewDesc("spanbench_campaign_next_schedule_timestamp_seconds", "When the campaign's next iteration is due, Unix time; absent without a schedule or while suspended.", campaignLabels, nil)
	descMissed        = prometheus.NewDesc("spanbench_campaign_missed_schedules", "Missed iterations among those the campaign's status lists (the latest 100).", campaignLabels, nil)
	descLatestOutcome = prometheus.NewDesc("spanbench_campaign_latest_iteration", "The outcome (Running, Succeeded, Failed, Missed) of the campaign's latest iteration in the outcome label; always 1.", append(campaignLabels, "outcome"), nil)
	descChangePoint   = prometheus.NewDesc("spanbench_campaign_change_point_timestamp_seconds", "Scheduled time (Unix) of the iteration where a change point's new level starts; one series per change point in the status (at most 32 a campaign).",
		[]string{"namespace", "campaign", "variant", "operation", "statistic", "iteration", "verdict", "acknowledged"}, nil)
)

// Describe implements prometheus.Collector.
func (c *CampaignCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descCmpRatio, descCmpRatioLow, descCmpRatioHigh, descCmpBaseline, descCmpValue, descCmpPValue, descCmpVerdict,
		descCampVerdict, descLastSuccess, descLastSchedule, descNextSchedule, descMissed, descLatestOutcome, descChangePoint} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *CampaignCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), collectTimeout)
	defer cancel()
	campaigns := &v1alpha1.BenchmarkCampaignList{}
	if err := c.Reader.List(ctx, campaigns); err != nil {
		return
	}
	for i := range campaigns.Items {
		collectCampaign(ch, &campaigns.Items[i])
	}
}

func collectCampaign(ch chan<- prometheus.Metric, c *v1alpha1.BenchmarkCampaign) {
	ns, name, st := c.Namespace, c.Name, &c.Status
	if st.Verdict != "" {
		send(ch, descCampVerdict, 1, ns, name, string(st.Verdict))
	}
	for d, t := range map[*prometheus.Desc]*metav1.Time{descLastSuccess: st.LastSuccessfulTime, descLastSchedule: st.LastScheduleTime, descNextSchedule: st.NextScheduleTime} {
		if t != nil {
			send(ch, d, float64(t.Unix()), ns, name)
		}
	}
	var missed int
	for _, it := range st.Iterations {
		if it.Outcome == v1alpha1.IterationMissed {
			missed++
		}
	}
	send(ch, descMissed, float64(missed), ns, name)
	if n := len(st.Iterations); n > 0 {
		send(ch, descLatestOutcome, 1, ns, name, string(st.Iterations[n-1].Outcome))
	}
	if st.Comparison != nil {
		collectComparison(ch, ns, name, st.Comparison.Rows)
	}
	collectChangePoints(ch, ns, name, st.ChangePoints)
}

// rowKey is a row's identity in the series; the first row of a key wins,
// so that a status listing one twice cannot break the scrape.
type rowKey struct{ variant, operation, statistic string }

// rowIdentity is a row's operation and statistic: its own fields, or,
// for a row written before they existed, its metric name's parts.
func rowIdentity(r *v1alpha1.ComparisonRow) (string, v1alpha1.CampaignStatistic, bool) {
	if r.Operation != "" && r.Statistic != "" {
		return r.Operation, r.Statistic, true
	}
	return comparison.ParseMetric(r.Metric)
}

func collectComparison(ch chan<- prometheus.Metric, ns, campaign string, rows []v1alpha1.ComparisonRow) {
	seen := map[rowKey]bool{}
	for i := range rows {
		r := &rows[i]
		op, stat, ok := rowIdentity(r)
		key := rowKey{r.Variant, op, string(stat)}
		if !ok || seen[key] {
			continue
		}
		seen[key] = true
		labels := []string{ns, campaign, r.Variant, op, string(stat)}
		send(ch, descCmpVerdict, 1, append(labels, string(r.Verdict))...)
		scale := baseUnit(stat)
		for _, f := range []struct {
			d     *prometheus.Desc
			text  string
			scale float64
		}{
			{descCmpRatio, r.Ratio, 1}, {descCmpRatioLow, r.Low, 1}, {descCmpRatioHigh, r.High, 1}, {descCmpPValue, r.PValue, 1},
			{descCmpBaseline, r.Baseline, scale}, {descCmpValue, r.Value, scale},
		} {
			v, err := strconv.ParseFloat(f.text, 64)
			if err != nil || (f.d == descCmpRatio && v <= 0) {
				// A row that could not be compared has no ratio (its
				// status says 0): no series, rather than a false 0×.
				continue
			}
			send(ch, f.d, v*f.scale, labels...)
		}
	}
}

// baseUnit is the factor from a statistic's unit in the status (µs,
// ops/s, %) to Prometheus' base units (seconds, ops/s, a ratio). A
// statistic in neither µs nor % (throughput, tpmC, capacities, a cost in
// its currency) is served as the status has it.
func baseUnit(s v1alpha1.CampaignStatistic) float64 {
	switch s {
	case v1alpha1.StatisticP50, v1alpha1.StatisticP90, v1alpha1.StatisticP99, v1alpha1.StatisticP999,
		v1alpha1.StatisticServerCPUPerOp, v1alpha1.StatisticServerLatencyP99, v1alpha1.StatisticServerQueryP99:
		return 1e-6
	case v1alpha1.StatisticErrorRate, v1alpha1.StatisticServerHighPriorityCPU:
		return 0.01
	}
	return 1
}

func collectChangePoints(ch chan<- prometheus.Metric, ns, campaign string, points []v1alpha1.ChangePointStatus) {
	seen := map[string]bool{}
	for _, p := range points {
		op, stat, ok := comparison.ParseMetric(p.Metric)
		at, known := plan.IterationTime(p.Iteration)
		key := p.Variant + "\x00" + p.Metric + "\x00" + p.Iteration
		if !ok || !known || seen[key] {
			continue
		}
		seen[key] = true
		send(ch, descChangePoint, float64(at.Unix()),
			ns, campaign, p.Variant, op, string(stat), p.Iteration, string(p.Verdict), strconv.FormatBool(p.Acknowledged))
	}
}

// send serves one gauge. A status is the API server's JSON, valid UTF-8,
// but a series that the client library refuses is dropped rather than
// allowed to panic a scrape.
func send(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	if m, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, v, labels...); err == nil {
		ch <- m
	}
}
