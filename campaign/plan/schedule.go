package plan

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// ParseSchedule reads a campaign's schedule (standard cron) and its time
// zone: the one parser of schedules, for the controller that starts
// iterations and the webhook that projects their cost alike.
func ParseSchedule(s *v1alpha1.BenchmarkCampaignSpec) (cron.Schedule, *time.Location, error) {
	loc := time.Local
	if s.TimeZone != nil {
		l, err := time.LoadLocation(*s.TimeZone)
		if err != nil {
			return nil, nil, fmt.Errorf("timeZone %q: %w", *s.TimeZone, err)
		}
		loc = l
	}
	sched, err := cron.ParseStandard(s.Schedule)
	if err != nil {
		return nil, nil, fmt.Errorf("schedule %q: %w", s.Schedule, err)
	}
	return sched, loc, nil
}
