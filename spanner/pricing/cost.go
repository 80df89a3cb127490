package pricing

import (
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/robfig/cron/v3"
)

// Each formula below is the one owner of its cost: the manager, the CLI
// and the reports call these, never multiply prices themselves.

// ProcessingUnitsPerNode is Spanner's unit of compute: 1 node = 1000
// processing units (https://cloud.google.com/spanner/docs/compute-capacity).
const ProcessingUnitsPerNode = 1000

// hoursPerMonth is the month a GiB-month price is for: 730 hours, the
// mean month (365 × 24 / 12), as Google's monthly prices count it.
const hoursPerMonth = 730

// bytesPerGiB is the GiB a storage price is for (the Billing Catalog's
// unit is GiBy.mo).
const bytesPerGiB = 1 << 30

// minimumBilledCompute is the least compute an instance is billed for:
// "any compute capacity that you provision will be billed for a minimum of
// one hour" (https://cloud.google.com/spanner/pricing).
const minimumBilledCompute = time.Hour

// Holding says whose instance a run used and so which time it is charged
// for.
type Holding string

const (
	// Ephemeral: the run created the instance and deleted it; it is charged
	// from creation to deletion, at least the one hour Spanner bills for
	// any provisioned capacity.
	Ephemeral Holding = "Ephemeral"
	// Existing: the instance was there before and stays; the run is charged
	// its own share, its window from start to end, with no minimum.
	Existing Holding = "Existing"
)

// Held is what a run held and for how long.
type Held struct {
	Holding         Holding
	ProcessingUnits int64
	// From and To bound the time held: creation to deletion (Ephemeral),
	// the run's start to end (Existing).
	From, To time.Time
}

// Duration is the time held (zero when To is before From).
func (h Held) Duration() time.Duration { return max(h.To.Sub(h.From), 0) }

// billed is the compute time charged: the time held, at least an hour for
// an instance the run provisioned.
func (h Held) billed() time.Duration {
	d := h.Duration()
	if h.Holding == Ephemeral {
		d = max(d, minimumBilledCompute)
	}
	return d
}

// Description says what was held, for a status or a report: "3000 PU,
// Ephemeral, created to deleted: 42m0s (billed 1h0m0s)".
func (h Held) Description() string {
	what := "the run's window"
	if h.Holding == Ephemeral {
		what = "created to deleted"
	}
	s := fmt.Sprintf("%d PU, %s, %s: %s", h.ProcessingUnits, h.Holding, what, h.Duration())
	if b := h.billed(); b != h.Duration() {
		s += fmt.Sprintf(" (billed %s, Spanner's one-hour minimum)", b)
	}
	return s
}

// hoursOf is d in hours, exactly.
func hoursOf(d time.Duration) *big.Rat {
	return new(big.Rat).SetFrac(big.NewInt(int64(d)), big.NewInt(int64(time.Hour)))
}

// InstanceCost is the compute cost of what h held: processing units ×
// billed hours × the rate's price per processing-unit-hour (its node-hour
// price / 1000). Unknown when the rate has no compute price.
func InstanceCost(r Rate, h Held) Money {
	if r.NodeHour == nil {
		return Unknown(fmt.Sprintf("no compute price for %s (%s)", r.Config, r.Edition))
	}
	if h.ProcessingUnits <= 0 {
		return Unknown("no processing units recorded")
	}
	x := new(big.Rat).Mul(r.NodeHour, new(big.Rat).SetFrac64(h.ProcessingUnits, ProcessingUnitsPerNode))
	return moneyOf(x.Mul(x, hoursOf(h.billed())), r.Currency)
}

// StorageCost is the cost of storing bytes for d: GiB × months × the
// rate's GiB-month price. Spanner bills the month's average size, so a
// dataset held for d adds its size × d to that average.
func StorageCost(r Rate, bytes int64, d time.Duration) Money {
	if r.StorageGiBMonth == nil {
		return Unknown(fmt.Sprintf("no storage price for %s (%s)", r.Config, r.Edition))
	}
	if bytes < 0 {
		return Unknown("no dataset size recorded")
	}
	gib := new(big.Rat).SetFrac(big.NewInt(bytes), big.NewInt(bytesPerGiB))
	months := new(big.Rat).Quo(hoursOf(max(d, 0)), big.NewRat(hoursPerMonth, 1))
	x := new(big.Rat).Mul(gib, months)
	return moneyOf(x.Mul(x, r.StorageGiBMonth), r.Currency)
}

// RunnerCost is the runner pods' compute: vCPUs (in millicores, the sum of
// the pods' CPU requests) × d × the admin's price per vCPU-hour. Unknown
// when the catalog has no such price (the admin did not give one).
func RunnerCost(c *Catalog, milliCPU int64, d time.Duration) Money {
	if c.vcpuHour == nil {
		return Unknown("no runner vCPU-hour price (set runnerVCPUHour in the price override)")
	}
	if milliCPU < 0 {
		return Unknown("no runner CPU recorded")
	}
	x := new(big.Rat).Mul(c.vcpuHour, new(big.Rat).SetFrac64(milliCPU, 1000))
	return moneyOf(x.Mul(x, hoursOf(max(d, 0))), c.currency)
}

// PerMillionOps is total / ops × 1,000,000: the cost of a million
// operations at the measured window's rate. total must be the cost of that
// same window (see WindowShare); unknown without operations.
func PerMillionOps(total Money, ops int64) Money {
	if !total.known {
		return total
	}
	if ops <= 0 {
		return Unknown("no operations measured")
	}
	// micros per operation × 1e6 operations / 1e6 micros per unit.
	return moneyOf(new(big.Rat).SetFrac(big.NewInt(total.micros), big.NewInt(ops)), total.currency)
}

// WindowShare is the part of a cost spent during the measured window: the
// cost × window / held, the share a cost per operation charges to the
// operations measured. (The warm-up and the load before it are not the
// measured operations' cost; the whole run's cost is reported beside it.)
func WindowShare(total Money, window, held time.Duration) Money {
	if !total.known {
		return total
	}
	if held <= 0 || window <= 0 {
		return Unknown("no measured window")
	}
	window = min(window, held)
	x := new(big.Rat).SetFrac(big.NewInt(total.micros), big.NewInt(1_000_000))
	x.Mul(x, new(big.Rat).SetFrac(big.NewInt(int64(window)), big.NewInt(int64(held))))
	return moneyOf(x, total.currency)
}

// Sum adds costs; one unknown makes the sum unknown.
func Sum(ms ...Money) Money {
	if len(ms) == 0 {
		return Unknown("nothing to add")
	}
	s := ms[0]
	for _, m := range ms[1:] {
		s = s.Add(m)
	}
	return s
}

// projectionWindow is the month a projection counts a schedule's runs
// over: 30 days from the given time.
const projectionWindow = 30 * 24 * time.Hour

// maxProjectedRuns bounds the walk over a schedule (an every-minute
// schedule fires 43,200 times in 30 days).
const maxProjectedRuns = 50_000

// ErrScheduleTooDense is returned when a schedule fires more often than a
// projection walks.
var ErrScheduleTooDense = errors.New("schedule fires more than 50000 times in 30 days")

// Monthly is the projected cost of 30 days of a campaign: the cost of one
// iteration × the iterations its schedule starts in the 30 days from
// `from`. sched is what the campaign controller's parser returns
// (robfig/cron's standard parser), in loc.
func Monthly(iteration Money, sched cron.Schedule, loc *time.Location, from time.Time) (Money, int, error) {
	if sched == nil {
		return Unknown("no schedule"), 0, errors.New("no schedule")
	}
	if loc == nil {
		loc = time.UTC
	}
	end := from.Add(projectionWindow)
	n := 0
	for t := sched.Next(from.In(loc)); !t.IsZero() && !t.After(end); t = sched.Next(t) {
		n++
		if n > maxProjectedRuns {
			return Unknown(ErrScheduleTooDense.Error()), n, ErrScheduleTooDense
		}
	}
	if !iteration.known {
		return iteration, n, nil
	}
	x := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(iteration.micros), big.NewInt(int64(n))), big.NewInt(1_000_000))
	return moneyOf(x, iteration.currency), n, nil
}
