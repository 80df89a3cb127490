package monitoring

import "time"

// Result is what Cloud Monitoring says about a run's instance and
// database over its window.
type Result struct {
	// Window is the run's window as given.
	Window Window
	// Asked is the interval requested: whole minutes (Window.Aligned).
	Asked Window
	// Alignment is the alignment period of every request: SamplePeriod.
	Alignment time.Duration
	// MeasuredFrom is the start of the figures' first minute: the first
	// whole minute after the warm-up. Minutes keeps the warm-up's too.
	MeasuredFrom time.Time
	// CPU is the instance's CPU utilization per priority and location, in
	// the order priority, location.
	CPU []PriorityCPU
	// RegionPeak is, per priority of an instance with more than one
	// location (a dual- or multi-region configuration), the location whose
	// busiest minute was the busiest: Google recommends a maximum CPU per
	// region, so the busiest region, not the mean of the regions, is the
	// one to compare with it.
	RegionPeak []PriorityCPU
	// Latency is the database's server latency per API method, by method.
	Latency []MethodLatency
	// Requests counts the database's API requests per status, by status.
	Requests []StatusCount
	// Minutes is the database's request count and p99 per minute of Asked,
	// warm-up included,
	// in order: the series the server warm-up signal reads.
	Minutes []MinutePoint
	// Notes say what limits the figures.
	Notes []string
}

// PriorityCPU is the CPU utilization of one priority in one location, as
// a fraction of the location's compute capacity (0.65 is 65 %), summed
// over the instance's databases and system tasks.
type PriorityCPU struct {
	// Priority is "high", "medium" or "low", as Spanner labels it.
	Priority string
	// Location is the region of the instance config the figure is for;
	// a multi-region config has one per region.
	Location string
	// Mean is the mean of the minute means; Max the largest minute mean.
	Mean, Max float64
}

// MethodLatency is the server latency of one API method (ExecuteSql,
// StreamingRead, Commit, ...), percentiles of the window's merged
// distribution, interpolated within its buckets.
type MethodLatency struct {
	Method   string
	Count    int64
	P50, P99 time.Duration
}

// StatusCount is the number of API requests that ended with one status
// ("OK", "ABORTED", ...).
type StatusCount struct {
	Status string
	Count  int64
}

// MinutePoint is one minute of the database's requests: End is the
// minute's end, Requests the requests in it, P99 the p99 of their latency
// over every method (0 with no latency data).
type MinutePoint struct {
	End      time.Time
	Requests int64
	P99      time.Duration
}
