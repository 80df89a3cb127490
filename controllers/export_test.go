package controllers

// HoldAggregation takes the reconciler's aggregation slot, as another
// run's aggregation under way would, and returns its release.
func (r *BenchmarkRunReconciler) HoldAggregation() (release func()) {
	r.aggregating.Lock()
	return r.aggregating.Unlock
}
