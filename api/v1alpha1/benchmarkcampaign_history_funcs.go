package v1alpha1

// DefaultTrendWindow is trend.window's default, hunter's E-divisive
// window.
const DefaultTrendWindow int32 = 50

// Defaults of trend.significance and trend.minMagnitude, as fractions.
const (
	DefaultTrendSignificance = 0.05
	DefaultTrendMinMagnitude = 0.05
)

// SuccessfulHistory is spec.successfulIterationsHistoryLimit, defaulted.
func (s *BenchmarkCampaignSpec) SuccessfulHistory() int {
	return int(orDefault32(s.SuccessfulIterationsHistoryLimit, DefaultSuccessfulHistory))
}

// FailedHistory is spec.failedIterationsHistoryLimit, defaulted.
func (s *BenchmarkCampaignSpec) FailedHistory() int {
	return int(orDefault32(s.FailedIterationsHistoryLimit, DefaultFailedHistory))
}

// IterationCount is trend.iterations, defaulted: how many iterations the
// history keeps and the trend analyses.
func (t *TrendSpec) IterationCount() int {
	return int(orDefault32(t.Iterations, DefaultTrendIterations))
}

// LatestCount is trend.latest, defaulted.
func (t *TrendSpec) LatestCount() int { return int(orDefault32(t.Latest, DefaultTrendLatest)) }

// WindowSize is trend.window, defaulted.
func (t *TrendSpec) WindowSize() int { return int(orDefault32(t.Window, DefaultTrendWindow)) }

// SignificanceFraction is trend.significance as a fraction, defaulted.
func (t *TrendSpec) SignificanceFraction() (float64, error) {
	return ParsePercent(t.Significance, DefaultTrendSignificance)
}

// MinMagnitudeFraction is trend.minMagnitude as a fraction, defaulted.
func (t *TrendSpec) MinMagnitudeFraction() (float64, error) {
	return ParsePercent(t.MinMagnitude, DefaultTrendMinMagnitude)
}

// Covers says whether a covers the change point cp: the same iteration,
// and the same variant and metric where a names them.
func (a *Acknowledgement) Covers(cp *ChangePointStatus) bool {
	return a.Iteration == cp.Iteration && (a.Variant == "" || a.Variant == cp.Variant) &&
		(a.Metric == "" || a.Metric == cp.Metric)
}

func orDefault32(v *int32, def int32) int32 {
	if v != nil {
		return *v
	}
	return def
}
