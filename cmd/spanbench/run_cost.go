package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/cmd/spanbench/manifest"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/spanner/pricing"
	"github.com/spanbench/spanbench/spanner/runcost"
)

// priceCatalog is the embedded catalog with the override file at path
// applied (--price-catalog), and a line saying where its prices come from.
// An override that does not validate is an error naming the entry.
func priceCatalog(path string) (*pricing.Catalog, string, error) {
	base, err := pricing.Default()
	if err != nil {
		return nil, "", err
	}
	from := "embedded catalog taken " + base.TakenOn()
	if path == "" {
		return base, from, nil
	}
	data, err := readPriceFile(path)
	if err != nil {
		return nil, "", err
	}
	c, err := pricing.Override(base, data)
	if err != nil {
		return nil, "", fmt.Errorf("--price-catalog %s: %w", path, err)
	}
	return c, fmt.Sprintf("override %s (taken %s) over the %s", path, c.TakenOn(), from), nil
}

// maxPriceFile bounds an override file: the catalog refuses more than
// 1 MiB anyway; a larger file is not read whole.
const maxPriceFile = 1 << 20

func readPriceFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--price-catalog: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPriceFile+1))
	if err != nil {
		return nil, fmt.Errorf("--price-catalog %s: %w", path, err)
	}
	if len(data) > maxPriceFile {
		return nil, fmt.Errorf("--price-catalog %s: more than %d bytes", path, maxPriceFile)
	}
	return data, nil
}

// cliRun is the BenchmarkRun the CLI runs, for the plan the manager
// would price (runcost.Plan): one process, no runner pods.
func cliRun(run *manifest.Run, t v1alpha1.TargetSpec) *v1alpha1.BenchmarkRun {
	return &v1alpha1.BenchmarkRun{Spec: v1alpha1.BenchmarkRunSpec{Target: t, Workload: run.Workload}}
}

// cliPlan is the run's plan as `spanbench run` holds it: the instance is
// used for the run's window (the CLI creates an instance only on its own
// emulator), no runner pods, and on the emulator the declared
// configuration's price, said to be an estimate for it.
func cliPlan(run *manifest.Run, t v1alpha1.TargetSpec, emulator bool) pricing.Plan {
	p := runcost.Plan(cliRun(run, t))
	p.Holding, p.RunnerMilliCPU, p.Emulator = pricing.Existing, 0, emulator
	return p
}

// printEstimate writes the run's estimate before it starts.
func printEstimate(w io.Writer, c *pricing.Catalog, from string, p pricing.Plan) {
	e := pricing.EstimateRun(c, p, time.Now())
	fmt.Fprintf(w, "estimated cost: %s (%s, %d PU for %s; prices: %s)\n", costText(e.Total, true), p.Config, p.ProcessingUnits, p.Run, from)
	for _, n := range e.Notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
}

// runCost prices a finished run as the CLI held it: the instance for the
// run's window (doc.Start to doc.End), and the measured window's share of
// that per million operations measured.
func runCost(c *pricing.Catalog, p pricing.Plan, doc *result.Document) (held pricing.Held, e pricing.Estimate, perMillion pricing.Money) {
	held = pricing.Held{Holding: pricing.Existing, ProcessingUnits: p.ProcessingUnits, From: doc.Start, To: doc.End}
	e = pricing.Price(c, p, held, held.Duration())
	window := doc.End.Sub(doc.WarmUp.End)
	perMillion = pricing.PerMillionOps(pricing.WindowShare(e.Total, window, held.Duration()), int64(doc.Overall.OK))
	return held, e, perMillion
}

// printRunCost writes what the run's window cost and the cost of a million
// of its measured operations, at the catalog's prices.
func printRunCost(w io.Writer, c *pricing.Catalog, p pricing.Plan, doc *result.Document) {
	held, e, perMillion := runCost(c, p, doc)
	what := ""
	if p.Emulator {
		what = fmt.Sprintf(", an estimate for %s on Cloud Spanner", p.Config)
	}
	fmt.Fprintf(w, "cost: %s for the run's %s%s; per million operations: %s\n", costText(e.Total, false), held.Duration().Round(time.Millisecond), what, costText(perMillion, false))
}

// withCost adds the run's cost section to doc (result/cost.go), as the
// manager adds it to a run's report, so that a campaign run from the
// command line compares CostPerMillionOps too. from says where the prices
// come from; on the emulator the figures are an estimate for the declared
// configuration, and the notes say so.
func withCost(doc *result.Document, c *pricing.Catalog, from string, p pricing.Plan) {
	held, e, perMillion := runCost(c, p, doc)
	fig := func(m pricing.Money) result.CostFigure {
		if !m.Known() {
			return result.CostFigure{Unknown: m.Reason()}
		}
		return result.CostFigure{Amount: m.Decimal()}
	}
	notes := append([]string{held.Description()}, e.Notes...)
	if p.Emulator {
		notes = append(notes, fmt.Sprintf("run on the emulator: an estimate for %s on Cloud Spanner", p.Config))
	}
	doc.Cost = &result.Cost{Currency: c.Currency(), Catalog: from, Holding: string(held.Holding), HeldFrom: held.From, HeldTo: held.To,
		ProcessingUnits: held.ProcessingUnits, Estimate: fig(pricing.EstimateRun(c, p, held.From).Total), Instance: fig(e.Instance),
		Storage: fig(e.Storage), Runners: fig(e.Runners), Total: fig(e.Total), PerMillionOperations: fig(perMillion), Notes: notes}
}

// costText prints a cost, "~" marking an estimate.
func costText(m pricing.Money, estimate bool) string {
	if estimate && m.Known() {
		return "~" + m.String()
	}
	return m.String()
}
