package history

import (
	"fmt"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/comparison"
	"github.com/spanbench/spanbench/result"
)

// MonitoringFigures are a cell's Cloud Monitoring figures in an
// iteration, per region or API method: the means of its runs' (each run
// has one figure, from its result's monitoring section;
// docs/server-stats.md). A key some run lacks is left out (not
// collected), never kept as a mean of the others or a zero. They let the
// trend find a change of the leader region's CPU or a method's server
// p99 across iterations.
type MonitoringFigures struct {
	// HighPriorityCPU is the high-priority CPU utilization per region, in
	// percent of the region's capacity (comparison.ServerHighPriorityCPU).
	HighPriorityCPU []KeyedFigure `json:"highPriorityCPU,omitempty"`
	// LatencyP99Micros is the server latency p99 per API method, in
	// microseconds (comparison.ServerLatencyP99).
	LatencyP99Micros []KeyedFigure `json:"latencyP99Micros,omitempty"`
}

// KeyedFigure is one region's or method's figure.
type KeyedFigure struct {
	Key   string  `json:"key"`
	Value float64 `json:"value"`
}

// maxMonitoringKeys bounds each list as a run's status does.
const maxMonitoringKeys = 32

// summarizeMonitoring is the mean of runs' Cloud Monitoring figures, or
// nil when no key has a figure in every run.
func summarizeMonitoring(runs []*result.Document) *MonitoringFigures {
	var m MonitoringFigures
	m.HighPriorityCPU = meanByKey(v1alpha1.StatisticServerHighPriorityCPU, runs)
	m.LatencyP99Micros = meanByKey(v1alpha1.StatisticServerLatencyP99, runs)
	if len(m.HighPriorityCPU) == 0 && len(m.LatencyP99Micros) == 0 {
		return nil
	}
	return &m
}

func meanByKey(s v1alpha1.CampaignStatistic, runs []*result.Document) []KeyedFigure {
	var out []KeyedFigure
	for _, key := range comparison.MonitoringKeys(s, runs) {
		if len(out) == maxMonitoringKeys {
			break
		}
		var sum float64
		every := true
		for _, d := range runs {
			v, err := comparison.MonitoringFigure(s, d, key)
			if err != nil {
				every = false
				break
			}
			sum += v
		}
		if every {
			out = append(out, KeyedFigure{Key: key, Value: sum / float64(len(runs))})
		}
	}
	return out
}

// Figure is the cell's figure of Cloud Monitoring statistic s for key.
func (m *MonitoringFigures) Figure(s v1alpha1.CampaignStatistic, key string) (float64, bool) {
	if m == nil {
		return 0, false
	}
	for _, f := range m.list(s) {
		if f.Key == key {
			return f.Value, true
		}
	}
	return 0, false
}

// Keys are the regions or methods the cell has figures of s for.
func (m *MonitoringFigures) Keys(s v1alpha1.CampaignStatistic) []string {
	if m == nil {
		return nil
	}
	var out []string
	for _, f := range m.list(s) {
		out = append(out, f.Key)
	}
	return out
}

func (m *MonitoringFigures) list(s v1alpha1.CampaignStatistic) []KeyedFigure {
	if s == v1alpha1.StatisticServerHighPriorityCPU {
		return m.HighPriorityCPU
	}
	return m.LatencyP99Micros
}

// validate refuses figures no summary writes.
func (m *MonitoringFigures) validate() error {
	if m == nil {
		return nil
	}
	for _, list := range [][]KeyedFigure{m.HighPriorityCPU, m.LatencyP99Micros} {
		if len(list) > maxMonitoringKeys {
			return fmt.Errorf("monitoring figures: %d keys, more than %d", len(list), maxMonitoringKeys)
		}
		for _, f := range list {
			if f.Key == "" || len(f.Key) > maxNameBytes || !finite(f.Value) {
				return fmt.Errorf("monitoring figure %.64q = %g: want a key of 1 to %d bytes and a finite figure, not negative", f.Key, f.Value, maxNameBytes)
			}
		}
	}
	return nil
}
