package comparison

import (
	"errors"
	"fmt"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/stats"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
)

// Pool is one cell's figures for one operation over all its runs: the
// counts summed, the measured seconds summed and the runs' latency
// histograms merged exactly. The comparison table's BASELINE and VALUE
// columns and the campaign's history summaries are both read from it, so
// the trend's series and the table agree.
type Pool struct {
	// Runs is the number of runs pooled.
	Runs int
	// Counts are the runs' counts summed.
	Counts result.Counts
	// Seconds is the runs' measured (post-warm-up) time summed.
	Seconds float64
	// Latency is the runs' merged latency histogram.
	Latency *histogram.Compact
}

// PoolRuns pools op over docs.
func PoolRuns(docs []*result.Document, op string) (Pool, error) {
	p := Pool{Runs: len(docs), Latency: histogram.NewCompact()}
	var dec histogram.Decoder
	for _, d := range docs {
		t, err := totals(d, op)
		if err != nil {
			return Pool{}, err
		}
		if err := p.Counts.Add(t.Counts); err != nil {
			return Pool{}, fmt.Errorf("run %s operation %s: %w", d.Run, op, err)
		}
		p.Seconds += d.End.Sub(d.WarmUp.End).Seconds()
		if err := dec.AddTo(p.Latency, t.LatencyHistogram); err != nil {
			return Pool{}, fmt.Errorf("run %s operation %s: %w", d.Run, op, err)
		}
	}
	return p, nil
}

// Throughput is the successful operations per measured second.
func (p Pool) Throughput() (float64, error) {
	if p.Seconds <= 0 {
		return 0, errors.New("no measured time")
	}
	return float64(p.Counts.OK) / p.Seconds, nil
}

// Statistic reads s from the pool: a percentile of the merged histogram
// (never an average of percentiles), the throughput or the error rate.
func (p Pool) Statistic(s v1alpha1.CampaignStatistic) (float64, error) {
	f := Figures{OK: p.Counts.OK, Failed: p.Counts.ErrorCount()}
	if s == v1alpha1.StatisticThroughput {
		var err error
		if f.Throughput, err = p.Throughput(); err != nil {
			return 0, err
		}
	}
	if s != v1alpha1.StatisticThroughput && s != v1alpha1.StatisticErrorRate {
		f.Latency = histogram.SummarizeCompact(p.Latency)
	}
	return Value(s, f)
}

// Figures are an operation's figures a statistic is read from.
type Figures struct {
	// Throughput is successful operations per measured second.
	Throughput float64
	// Latency summarises the successful operations' latency.
	Latency histogram.Summary
	// OK and Failed count successful and failed operations.
	OK, Failed uint64
}

// Value is statistic s among an operation's figures: its throughput, a
// percentile of its latency summary, or its error rate (stats.ErrorRate).
func Value(s v1alpha1.CampaignStatistic, f Figures) (float64, error) {
	switch s {
	case v1alpha1.StatisticThroughput:
		return f.Throughput, nil
	case v1alpha1.StatisticP50:
		return float64(f.Latency.P50), nil
	case v1alpha1.StatisticP90:
		return float64(f.Latency.P90), nil
	case v1alpha1.StatisticP99:
		return float64(f.Latency.P99), nil
	case v1alpha1.StatisticP999:
		return float64(f.Latency.P999), nil
	case v1alpha1.StatisticErrorRate:
		return stats.ErrorRate(int64(f.OK), int64(f.Failed)), nil
	case v1alpha1.StatisticTpmC:
		// Of the NewOrder operation's figures (a trend's history keeps
		// no tpcc section): its successful transactions per measured
		// minute, tpcc.tpmC's definition.
		return 60 * f.Throughput, nil
	}
	return 0, fmt.Errorf("unknown statistic %q", s)
}
