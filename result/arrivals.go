package result

import (
	"fmt"
	"strings"
	"time"
)

// Arrivals says how many arrivals shard's open-loop schedule intends in
// each interval of the given length from the run's start (element k:
// [k·interval, (k+1)·interval)); ok is false for a load that has no
// schedule to bound it (a closed loop). The schedule is deterministic
// (rate profile, shards, seed), so the checker computes it and never reads
// it from a document.
type Arrivals func(shard int, interval time.Duration) (perInterval []uint64, ok bool, err error)

// checkArrivals refuses a document one of whose intervals counts more
// operations (successes, errors and not found) and missed sends than its
// shards' schedules produced in it. An operation is counted in the
// interval of its intended send, so an interval holds at most its
// arrivals whatever the host's load; more is a double count (a shard
// merged twice, an operation recorded twice, an interval counted in two
// windows). Every interval is checked, so the measured window, a sum of
// intervals, is too.
func (e *Expect) checkArrivals(d *Document) error {
	if e.Arrivals == nil || len(d.Intervals) == 0 {
		return nil
	}
	interval := d.interval()
	var bound []uint64
	for _, s := range d.Shards {
		counts, ok, err := e.Arrivals(s.Index, interval)
		if err != nil {
			return invalid("shard %d: its schedule's arrivals: %v", s.Index, err)
		}
		if !ok {
			return nil // a closed loop: no arrivals to bound it
		}
		if len(counts) > len(bound) {
			bound = append(bound, make([]uint64, len(counts)-len(bound))...)
		}
		for k, n := range counts {
			bound[k] += n
		}
	}
	for _, in := range d.Intervals {
		var arrivals uint64
		if in.Index < len(bound) {
			arrivals = bound[in.Index]
		}
		counted := in.Missed
		for _, op := range in.Operations {
			counted += op.OK + op.NotFound + op.ErrorCount() // each within MaxCount (checkCounts): no wrap
		}
		if counted > arrivals {
			return invalid("%s: interval %d counts %d operations and missed sends, more than the %d arrivals %s produced in it",
				shardNames(d.Shards), in.Index, counted, arrivals, schedulesOf(d.Shards))
		}
	}
	return nil
}

// shardNames names a document's shards: "shard 1", "shards 0, 1".
func shardNames(shards []Shard) string {
	if len(shards) == 1 {
		return fmt.Sprintf("shard %d", shards[0].Index)
	}
	names := make([]string, len(shards))
	for i, s := range shards {
		names[i] = fmt.Sprint(s.Index)
	}
	return "shards " + strings.Join(names, ", ")
}

func schedulesOf(shards []Shard) string {
	if len(shards) == 1 {
		return "its schedule"
	}
	return "their schedules"
}
