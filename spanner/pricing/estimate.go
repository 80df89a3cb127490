package pricing

import (
	"fmt"
	"time"
)

// Plan is what a run's spec says before anything exists: the inputs of
// its estimate. The manager and the CLI fill it from the resolved spec.
type Plan struct {
	// Config and Edition are the declared instance configuration and
	// edition ("" = the configuration's default edition). On the
	// emulator, the declared configuration is priced: the estimate is what
	// the run would cost on Cloud Spanner.
	Config  string
	Edition Edition
	// Holding is Ephemeral when the run creates its instance.
	Holding         Holding
	ProcessingUnits int64
	// Setup is the planned time before the measured run (instance and
	// database creation, schema, the dataset's load): an Ephemeral
	// instance is billed for it. The spec gives no expected load time, so
	// the wiring passes its deadlines (prepare + load), an upper bound.
	Setup time.Duration
	// Run is the run's planned duration, warm-up included.
	Run time.Duration
	// DatasetBytes is the dataset the run loads, from
	// spanner/workload.DatasetBytes: rows × the bytes one row of the
	// workload's schema stores (its keys, fields and index entries),
	// without Spanner's per-row overhead; so storage is a lower bound.
	DatasetBytes int64
	// RunnerMilliCPU is the runner pods' summed CPU requests.
	RunnerMilliCPU int64
	// Emulator is true when the target is the emulator.
	Emulator bool
}

// Estimate is a run's cost before it starts, line by line.
type Estimate struct {
	// Held is the compute the estimate charges for.
	Held     Held
	Instance Money
	Storage  Money
	Runners  Money
	// Total is Instance + Storage, + Runners when the admin priced them
	// (an unpriced runner line is left out of the total, and said so in
	// Notes, rather than making the whole estimate unknown).
	Total Money
	// Notes say what the figure assumes, for the reader.
	Notes []string
}

// EstimateRun prices a plan with the catalog. from is the planned start
// (only the length of the holding matters).
func EstimateRun(c *Catalog, p Plan, from time.Time) Estimate {
	held := Held{Holding: p.Holding, ProcessingUnits: p.ProcessingUnits, From: from}
	switch p.Holding {
	case Ephemeral:
		held.To = from.Add(p.Setup + p.Run)
	default:
		held.To = from.Add(p.Run)
	}
	e := Price(c, p, held, p.Run)
	if p.Emulator {
		e.Notes = append(e.Notes, fmt.Sprintf("estimate for %s on Cloud Spanner; the emulator itself costs nothing", p.Config))
	}
	if p.Holding == Ephemeral {
		e.Notes = append(e.Notes, "setup time is the deadlines' upper bound; Spanner bills at least one hour")
	}
	return e
}

// Price prices what a run held: the plan's configuration and dataset for
// held (the instance and its storage), and its runners for runTime. The
// estimate and a finished run's cost are both this, over planned or
// recorded times.
func Price(c *Catalog, p Plan, held Held, runTime time.Duration) Estimate {
	e := Estimate{Held: held}
	r, ok, why := c.Lookup(p.Config, p.Edition)
	if !ok {
		e.Instance, e.Storage = Unknown(why), Unknown(why)
	} else {
		e.Instance = InstanceCost(r, held)
		e.Storage = StorageCost(r, p.DatasetBytes, held.Duration())
	}
	e.Runners = RunnerCost(c, p.RunnerMilliCPU, runTime)
	e.Total = e.Instance.Add(e.Storage)
	if e.Runners.Known() {
		e.Total = e.Total.Add(e.Runners)
	} else {
		e.Notes = append(e.Notes, "runner pods not counted: "+e.Runners.Reason())
	}
	e.Notes = append(e.Notes, fmt.Sprintf("storage counts the dataset's estimated bytes (%d), without Spanner's overhead", p.DatasetBytes))
	return e
}
