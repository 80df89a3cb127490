package monitoring

import (
	"context"
	"errors"
	"fmt"
	"time"

	monitoring "cloud.google.com/go/monitoring/apiv3/v2"
	"cloud.google.com/go/monitoring/apiv3/v2/monitoringpb"
	"k8s.io/utils/clock"

	"github.com/spanbench/spanbench/result"
)

// DefaultStepCPUPoll is how often StepCPU asks again for a window's
// minutes that are not all published yet.
const DefaultStepCPUPoll = 15 * time.Second

// StepCPU reads the CPU utilization of one Spanner instance over a
// capacity search step's measured window: the one owner of "the CPU of a
// window for this target", used by `spanbench run` and the manager alike.
// It reads the whole minutes inside the window only (a minute that began
// before it holds the previous step's rate, or the warm-up), and waits,
// bounded, for them to be published.
type StepCPU struct {
	// Client reads Cloud Monitoring.
	Client *monitoring.MetricClient
	// Instance is the target's instance (Project and Instance are used:
	// CPU is the whole instance's).
	Instance Instance
	// Clock tells whether the wait is over; Read waits on it, so it must be
	// a clock.Clock there.
	Clock clock.PassiveClock
	// Wait bounds the wait after the window's last whole minute ends for
	// its points to be published; 0 is DefaultDelay (the metric shows up to
	// 180 s late). A step waits at most this long after it ends.
	Wait time.Duration
	// Poll is the pause between reads; 0 is DefaultStepCPUPoll.
	Poll time.Duration
	// MaxSeries bounds the series of one request; 0 is DefaultMaxSeries.
	MaxSeries int
}

// MaxWait is the longest a step's judge waits after the step ends: the
// window's last whole minute ends at or before the step, and the wait
// ends Wait after that minute.
func (s StepCPU) MaxWait() time.Duration {
	if s.Wait <= 0 {
		return DefaultDelay
	}
	return s.Wait
}

// Read is the instance's CPU per priority and region over the whole
// minutes of [start, end), each region's figure the mean (MeanRatio) and
// largest (MaxRatio) of its minute means, waiting on Clock until they are
// published (Try's rules). It is nil, with a note saying why, when the
// figure is not measured. Only a cancelled ctx is an error: a figure that
// cannot be read is "not measured", never 0 and never a pass. The CLI,
// which judges a step where it ran it, waits here; the manager, which
// must not block a reconcile, calls Try and comes back.
func (s StepCPU) Read(ctx context.Context, start, end time.Time) ([]result.MonitoringCPU, string, error) {
	clk, ok := s.Clock.(clock.Clock)
	if !ok {
		return nil, "", errors.New("reading a step's CPU and waiting for it needs a clock that waits (clock.Clock)")
	}
	for {
		cpu, note, again, err := s.Try(ctx, start, end)
		if err != nil || again == 0 {
			return cpu, note, err
		}
		select {
		case <-ctx.Done():
			return nil, "", ctx.Err()
		case <-clk.After(again):
		}
	}
}

// Try reads the step's CPU once. again is 0 when the answer is final: the
// figures, or nil with a note saying why they are not measured — the
// window holds no whole minute (a step whose measured time is under two
// minutes may not: the metric's sampling period is 60 s), no
// high-priority series had every minute by the end of the wait (MaxWait
// after the last whole minute), or Cloud Monitoring refused or failed.
// Otherwise the minutes are not all in yet and again is when to ask
// next. Only a cancelled ctx or an empty window is an error.
func (s StepCPU) Try(ctx context.Context, start, end time.Time) (cpu []result.MonitoringCPU, note string, again time.Duration, err error) {
	w := Window{Start: start, End: end}
	if err := w.Validate(); err != nil {
		return nil, "", 0, err
	}
	asked, inside := w.Aligned()
	if !inside {
		return nil, fmt.Sprintf("the step's measured window (%s to %s) holds no whole minute, the metric's sampling period: not measured",
			start.UTC().Format(time.TimeOnly), end.UTC().Format(time.TimeOnly)), 0, nil
	}
	q := querier{client: s.Client, inst: s.Instance, asked: asked, maxSeries: s.maxSeries()}
	series, err := q.list(ctx, q.cpuRequest())
	if ctx.Err() != nil {
		return nil, "", 0, ctx.Err()
	}
	if err != nil {
		return nil, fmt.Sprintf("reading %s: %.200s: not measured", MetricCPUByPriority, err.Error()), 0, nil
	}
	series = within(series, asked)
	if complete(series, asked) {
		all, _, _ := priorityCPU(series)
		out := make([]result.MonitoringCPU, 0, len(all))
		for _, c := range all {
			out = append(out, result.MonitoringCPU{Priority: c.Priority, Location: c.Location, MeanRatio: c.Mean, MaxRatio: c.Max})
		}
		return out, "", 0, nil
	}
	left := asked.End.Add(s.MaxWait()).Sub(s.Clock.Now())
	if left <= 0 {
		return nil, fmt.Sprintf("Cloud Monitoring had not published every minute of the step's high-priority CPU (%s to %s) %s after it: not measured",
			asked.Start.Format(time.TimeOnly), asked.End.Format(time.TimeOnly), s.MaxWait()), 0, nil
	}
	return nil, "", min(s.poll(), left), nil
}

// within is series with only the points of the minutes of asked: minute
// ends in (asked.Start, asked.End].
func within(series []*monitoringpb.TimeSeries, asked Window) []*monitoringpb.TimeSeries {
	out := after(series, asked.Start)
	for _, ts := range out {
		kept := ts.Points[:0]
		for _, p := range ts.Points {
			if !minuteEnd(p).After(asked.End) {
				kept = append(kept, p)
			}
		}
		ts.Points = kept
	}
	return out
}

// complete says whether a high-priority series was read and every one has
// a point for each minute of asked: the step's figure is then of all its
// minutes, in every region, not of those published first.
func complete(series []*monitoringpb.TimeSeries, asked Window) bool {
	want := int(asked.End.Sub(asked.Start) / SamplePeriod)
	high := 0
	for _, ts := range series {
		if ts.GetMetric().GetLabels()[labelPriority] != "high" {
			continue
		}
		high++
		minutes := map[time.Time]bool{}
		for _, p := range ts.GetPoints() {
			minutes[minuteEnd(p)] = true
		}
		if len(minutes) < want {
			return false
		}
	}
	return high > 0
}

func (s StepCPU) poll() time.Duration {
	if s.Poll <= 0 {
		return DefaultStepCPUPoll
	}
	return s.Poll
}

func (s StepCPU) maxSeries() int {
	if s.MaxSeries <= 0 {
		return DefaultMaxSeries
	}
	return s.MaxSeries
}
