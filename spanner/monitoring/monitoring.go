// Package monitoring reads Cloud Monitoring's figures of a run's Spanner
// instance and database over the run's window: CPU utilization by
// priority (per region of a multi-region config), server latency per API
// method and API requests by status, and from the per-minute requests and
// latency the minute the server's load settled (the server warm-up
// signal). docs/server-stats.md explains each figure, its delay and its
// accuracy.
//
// It is Spanner access, used by the manager (which holds the identity that
// may read Cloud Monitoring). It imports no Kubernetes API and, of the load
// side, only the result type's warm-up rule (result.FirstStable), so the
// client's and the server's warm-up are read by one rule.
package monitoring

import (
	"context"
	"errors"
	"fmt"
	"time"

	monitoring "cloud.google.com/go/monitoring/apiv3/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/utils/clock"
)

// DefaultDelay is how long after a minute ends its points are read:
// Spanner's metrics are sampled every 60 s and may show up to 180 s later
// (Cloud Monitoring's metrics list); earlier, the last minutes would read
// as missing.
const DefaultDelay = 180 * time.Second

// DefaultMaxSeries bounds the series one request may return: a few
// priorities × regions, a few dozen methods, a few dozen statuses. More
// means the filter is not what it seems; the collection fails rather than
// hold them.
const DefaultMaxSeries = 500

// Instance names the Spanner instance and database a run measured.
type Instance struct {
	Project, Instance, Database string
}

// Collector reads the figures of one run.
type Collector struct {
	// Delay is the wait after the last minute ends; 0 is DefaultDelay.
	Delay time.Duration
	// Clock tells whether the window has settled.
	Clock clock.PassiveClock
	// MaxSeries bounds the series of one request; 0 is DefaultMaxSeries.
	MaxSeries int
}

// NotSettledError says the window's last minute may not be published yet.
type NotSettledError struct {
	// ReadyAt is when it will be read.
	ReadyAt time.Time
}

func (e *NotSettledError) Error() string {
	return fmt.Sprintf("Cloud Monitoring's figures of the run's last minute are read from %s on",
		e.ReadyAt.UTC().Format(time.RFC3339))
}

// PermissionDeniedError says the manager's identity may not read the
// project's metrics (it needs roles/monitoring.viewer): a figure not
// collected, never a failed run.
type PermissionDeniedError struct {
	// Err is the service's answer.
	Err error
}

func (e *PermissionDeniedError) Error() string {
	return "reading Cloud Monitoring was refused (grant roles/monitoring.viewer): " + e.Err.Error()
}

func (e *PermissionDeniedError) Unwrap() error { return e.Err }

// ReadyAt is when the figures of w's last minute are read.
func (c Collector) ReadyAt(w Window) time.Time {
	a, _ := w.Aligned()
	delay := c.Delay
	if delay <= 0 {
		delay = DefaultDelay
	}
	return a.End.Add(delay)
}

// Collect reads the figures of inst over w through client. It returns a
// *NotSettledError before ReadyAt(w) and a *PermissionDeniedError when the
// service refuses.
func (c Collector) Collect(ctx context.Context, client *monitoring.MetricClient, inst Instance, w Window) (*Result, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	if inst.Project == "" || inst.Instance == "" || inst.Database == "" {
		return nil, errors.New("the instance needs a project, an instance and a database")
	}
	if ready := c.ReadyAt(w); c.Clock.Now().Before(ready) {
		return nil, &NotSettledError{ReadyAt: ready}
	}
	asked, inside := w.Aligned()
	res := &Result{Window: w, Asked: asked, Alignment: SamplePeriod}
	if !inside {
		res.Notes = append(res.Notes, "the window holds no whole minute: the minutes enclosing it were read, "+
			"with traffic from before or after the run")
	}
	from := w.measuredFrom()
	if !from.Before(asked.End) {
		// The warm-up left no whole minute: the figures are of every minute.
		from = asked.Start
		res.Notes = append(res.Notes, "no whole minute follows the warm-up: the figures include it")
	}
	res.MeasuredFrom = from
	q := querier{client: client, inst: inst, asked: asked, maxSeries: c.maxSeries()}
	if err := q.collect(ctx, res, from); err != nil {
		if status.Code(err) == codes.PermissionDenied {
			return nil, &PermissionDeniedError{Err: err}
		}
		return nil, err
	}
	return res, nil
}

func (c Collector) maxSeries() int {
	if c.MaxSeries <= 0 {
		return DefaultMaxSeries
	}
	return c.MaxSeries
}
