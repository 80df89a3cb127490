package comparison

import (
	"fmt"
	"math"
	"slices"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
)

// Cloud Monitoring's figures of a run (its result's monitoring section,
// written once they are collected minutes after the run; docs/server-stats.md)
// are one figure per run and key: a region's high-priority CPU, an API
// method's server p99. The metric's operations name the keys. They have
// no per-interval series, so they are compared run by run only, and a run
// without them makes its row inconclusive saying "not collected", never
// a zero.

// HighPriority is Cloud Monitoring's priority label of the work a user's
// requests do at high priority.
const HighPriority = "high"

// allKeys names the one row of a Cloud Monitoring metric whose baseline
// runs have no figures at all: its row says why rather than vanish.
const allKeys = "not-collected"

// ServerHighPriorityCPU is the run's high-priority CPU utilization in
// region loc, in percent of the region's capacity: the mean of its
// measured minutes.
func ServerHighPriorityCPU(d *result.Document, loc string) (float64, error) {
	if err := monitoringCollected(d); err != nil {
		return 0, err
	}
	for _, c := range d.Monitoring.CPU {
		if c.Priority == HighPriority && c.Location == loc {
			return c.MeanRatio * 100, nil
		}
	}
	return 0, fmt.Errorf("run %s: Cloud Monitoring reported no high-priority CPU for region %q (regions: %v)", d.Run, loc, cpuLocations(d))
}

// ServerLatencyP99 is the run's server latency p99 of API method m, in
// microseconds.
func ServerLatencyP99(d *result.Document, m string) (float64, error) {
	if err := monitoringCollected(d); err != nil {
		return 0, err
	}
	for _, l := range d.Monitoring.Latency {
		if l.Method == m {
			if l.Count == 0 {
				return 0, fmt.Errorf("run %s: method %s had no requests in the measured minutes", d.Run, m)
			}
			return l.P99Seconds * 1e6, nil
		}
	}
	return 0, fmt.Errorf("run %s: Cloud Monitoring reported no latency for method %q (methods: %v)", d.Run, m, latencyMethods(d))
}

// monitoringCollected says why d has no Cloud Monitoring figures, or nil.
func monitoringCollected(d *result.Document) error {
	if d.Monitoring == nil {
		return fmt.Errorf("run %s: Cloud Monitoring figures not collected (not available on the emulator, "+
			"or not collected: see its ServerMetricsCollected condition)", d.Run)
	}
	return nil
}

// MonitoringFigure is run d's Cloud Monitoring figure s for key (a
// region or an API method), or why it has none.
func MonitoringFigure(s v1alpha1.CampaignStatistic, d *result.Document, key string) (float64, error) {
	if s == v1alpha1.StatisticServerHighPriorityCPU {
		return ServerHighPriorityCPU(d, key)
	}
	return ServerLatencyP99(d, key)
}

// IsMonitoring says whether s is one of Cloud Monitoring's figures.
func IsMonitoring(s v1alpha1.CampaignStatistic) bool {
	return s == v1alpha1.StatisticServerHighPriorityCPU || s == v1alpha1.StatisticServerLatencyP99
}

// monitoringKeys are the rows of Cloud Monitoring statistic s by
// default: the runs' regions or methods, or the one allKeys row when none
// has any.
func monitoringKeys(s v1alpha1.CampaignStatistic, runs []*result.Document) []string {
	if keys := MonitoringKeys(s, runs); len(keys) > 0 {
		return keys
	}
	return []string{allKeys}
}

// MonitoringKeys are the regions (ServerHighPriorityCPU) or API methods
// (ServerLatencyP99) the runs have figures for, in order of first
// appearance.
func MonitoringKeys(s v1alpha1.CampaignStatistic, runs []*result.Document) []string {
	var out []string
	for _, d := range runs {
		keys := latencyMethods(d)
		if s == v1alpha1.StatisticServerHighPriorityCPU {
			keys = cpuLocations(d)
		}
		for _, k := range keys {
			if k != "" && !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// cpuLocations are the regions of d's high-priority CPU figures.
func cpuLocations(d *result.Document) []string {
	if d.Monitoring == nil {
		return nil
	}
	var out []string
	for _, c := range d.Monitoring.CPU {
		if c.Priority == HighPriority {
			out = append(out, c.Location)
		}
	}
	return out
}

// latencyMethods are the API methods of d's latency figures.
func latencyMethods(d *result.Document) []string {
	if d.Monitoring == nil {
		return nil
	}
	var out []string
	for _, l := range d.Monitoring.Latency {
		out = append(out, l.Method)
	}
	return out
}

// errNeedsRuns explains why one run per cell cannot compare s.
func errNeedsRuns(s v1alpha1.CampaignStatistic) error {
	return fmt.Errorf("%s is one figure per run: compare it with two or more runs per cell (spec.repetitions)", s)
}

// NotCollected is a server-side figure's value in the status table when
// a cell's runs do not have it: never a zero, which would read as a
// figure.
const NotCollected = "not collected"

// serverSide says whether s is read from what Spanner reports after the
// run (SPANNER_SYS or Cloud Monitoring), which a run may lack.
func serverSide(s v1alpha1.CampaignStatistic) bool {
	return IsServerStats(s) || IsMonitoring(s)
}

// orNotCollected is the cell's figure, or NaN (NotCollected) when its
// runs lack it.
func orNotCollected(docs []*result.Document, op string, s v1alpha1.CampaignStatistic) float64 {
	v, err := pooled(docs, op, s)
	if err != nil {
		return math.NaN()
	}
	return v
}
