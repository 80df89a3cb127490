package stats

// ErrorRate is failed operations as a percentage of all finished ones
// (successful and failed); 0 when none finished. It is the one formula of
// the error rate that spanbench compare and a campaign's comparison share.
func ErrorRate(ok, failed int64) float64 {
	if ok+failed <= 0 {
		return 0
	}
	return 100 * float64(failed) / float64(ok+failed)
}

// ErrorRateIntervals recasts a run's intervals (successes in Ops) and its
// failures per interval as intervals whose Throughput statistic
// (Σ Ops / Σ Seconds) is the run's error rate as a fraction: Ops counts
// failures and Seconds all finished operations. The error rate is a ratio
// of sums, so CompareIntervals resamples it exactly; the factor 100 of
// ErrorRate cancels in every ratio. An interval without operations carries
// no evidence and is left out. failed[i] belongs to intervals[i].
func ErrorRateIntervals(intervals []Interval, failed []int64) []Interval {
	out := make([]Interval, 0, len(intervals))
	for i, in := range intervals {
		var f int64
		if i < len(failed) {
			f = failed[i]
		}
		if all := in.Ops + f; all > 0 {
			out = append(out, Interval{Latency: in.Latency, Ops: f, Seconds: float64(all)})
		}
	}
	return out
}
