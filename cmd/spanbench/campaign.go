//go:build !runner

package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/comparison"
	"github.com/spanbench/spanbench/campaign/plan"
	"github.com/spanbench/spanbench/campaign/stats"
	"github.com/spanbench/spanbench/cmd/spanbench/manifest"
	"github.com/spanbench/spanbench/cmd/spanbench/report"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/spanner/emulator"
	"github.com/spanbench/spanbench/spanner/pricing"
)

// campaignFlags are `spanbench campaign`'s flags.
type campaignFlags struct {
	file, endpoint, emulatorPath, outDir, progress, html string
	spanner, freshEmulator                               bool
	estimateOnly                                         bool
	priceCatalog                                         string
}

func parseCampaignFlags(args []string, stderr io.Writer) (*campaignFlags, error) {
	f := &campaignFlags{}
	fs := flag.NewFlagSet("campaign", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.file, "f", "", "BenchmarkCampaign manifest (YAML or JSON); required")
	fs.BoolVar(&f.estimateOnly, "estimate", false, "print the campaign's estimated cost (an iteration, and 30 days at its schedule) and exit without running it")
	fs.StringVar(&f.priceCatalog, "price-catalog", "", "a price override file in the catalog's format (docs/cost.md) over the embedded catalog")
	fs.StringVar(&f.endpoint, "endpoint", "", "host:port of a running Cloud Spanner emulator (default: $SPANNER_EMULATOR_HOST, else the template's target.emulatorHost, else start a fresh emulator)")
	fs.BoolVar(&f.freshEmulator, "fresh-emulator", false, "start a fresh emulator and run every run against it, whatever the template's target.emulatorHost names (the samples name make demo's, which pods reach)")
	fs.BoolVar(&f.spanner, "spanner", false, "run against Cloud Spanner itself, with Application Default Credentials, on the template's target (the instance must exist)")
	fs.StringVar(&f.emulatorPath, "emulator-path", "", "the emulator's gateway_main (default: $"+emulator.PathEnv+", else "+emulator.DefaultPath+")")
	fs.StringVar(&f.outDir, "out-dir", "", "write each run's result document (JSON) to DIR/<run>.json")
	fs.StringVar(&f.progress, "progress", "auto", "live progress line of each run: auto (on a terminal), always, never")
	fs.StringVar(&f.html, "html", "", "also write the comparison as a self-contained HTML page (table and ratio-with-interval plots) to this file")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if f.file == "" || fs.NArg() > 0 {
		fs.Usage()
		return nil, errors.New("usage: spanbench campaign -f FILE [flags]")
	}
	if f.freshEmulator && (f.spanner || f.endpoint != "") {
		return nil, errFreshEmulatorAlone
	}
	return f, nil
}

// campaignCommand runs one iteration of a campaign from the command line:
// every cell × repetition in the campaign's order, one run at a time, then
// prints the comparison table. One at a time is the rule that two runs
// never share a database, kept the simplest way; maxParallel and the
// schedule are the controller's.
func campaignCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseCampaignFlags(args, stderr)
	if err != nil {
		return err
	}
	c, err := manifest.ReadCampaignFile(f.file)
	if err != nil {
		return manifestGuidance(err, "campaign", f.file)
	}
	cells, baseline, err := plan.Admit(&c.Spec)
	if err != nil {
		return err
	}
	if err := printCampaignEstimate(stderr, c, cells, f.priceCatalog); err != nil || f.estimateOnly {
		return err
	}
	prices, from, err := priceCatalog(f.priceCatalog)
	if err != nil {
		return err
	}
	start := time.Now()
	results, err := runCells(ctx, c, cells, f, start, priced{prices, from}, stderr)
	if err != nil {
		return err
	}
	tab, err := comparison.Assemble(&c.Spec.Comparison, results, baseline)
	if err != nil {
		return err
	}
	if f.html != "" {
		var page bytes.Buffer
		status := tab.Status(plan.IterationName(c.Name, start))
		if err := report.WriteComparisonHTML(&page, report.Comparison{Campaign: c.Name, Table: status}); err != nil {
			return err
		}
		if err := writeFileWhole(f.html, page.Bytes()); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "campaign %s: %d cells × %d repetitions (%s order) in %s; baseline %s; verdict %s\n\n",
		c.Name, len(cells), c.Spec.RepetitionCount(), c.Spec.RunOrder(), time.Since(start).Round(time.Second), tab.Baseline, tab.Verdict)
	return stats.WriteTable(stdout, tab.Rows)
}

// runCells runs every cell's repetitions in the campaign's order, one at a
// time, each as `spanbench run` runs a manifest (resolveTarget, execute),
// on the database its cell's spec names. Runs of one cell share that
// database's dataset: the dataset marker skips reloading an identical one.
// Each run's result carries its cost at prices, before it is written.
func runCells(ctx context.Context, c *v1alpha1.BenchmarkCampaign, cells []plan.Cell, f *campaignFlags, scheduled time.Time,
	prices priced, stderr io.Writer) ([]comparison.Cell, error) {
	rf := &runFlags{endpoint: f.endpoint, emulatorPath: f.emulatorPath, spanner: f.spanner, freshEmulator: f.freshEmulator,
		progress: f.progress, file: f.file}
	results := make([]comparison.Cell, len(cells))
	for i := range cells {
		results[i].Name = cells[i].Name
	}
	slots := plan.Order(c.Spec.RunOrder(), c.Spec.OrderSeed(), len(cells), c.Spec.RepetitionCount())
	stop, created := func() {}, false
	defer func() { stop() }()
	origin := endpointOrigin(rf)
	for i, s := range slots {
		cell := &cells[s.Cell]
		run := &manifest.Run{Name: plan.RunName(c.Name, scheduled, cell, s.Repetition), Target: &cell.Spec.Target,
			Workload: cell.Spec.Workload.Resolved()}
		t, err := resolveTarget(run.Target, rf)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			if stop, created, err = ensureEmulator(ctx, rf, &t, stderr); err != nil {
				return nil, err
			}
		}
		fmt.Fprintf(stderr, "run %d/%d: %s (cell %s, repetition %d)\n", i+1, len(slots), run.Name, cell.Name, s.Repetition)
		// One seed per repetition, the same in every cell: cells compared
		// within a repetition see the same operation choices and arrivals.
		rf.seed = c.Spec.OrderSeed() + int64(s.Repetition)
		doc, err := execute(ctx, run, t, rf, 0, 1, time.Time{}, created, stderr)
		if err != nil {
			return nil, targetGuidance(fmt.Errorf("run %s: %w", run.Name, err), "campaign", origin, rf, created)
		}
		withCost(doc, prices.catalog, prices.from, cliPlan(run, t, !f.spanner))
		if f.outDir != "" {
			if err := writeRunResult(f.outDir, doc); err != nil {
				return nil, err
			}
		}
		results[s.Cell].Runs = append(results[s.Cell].Runs, doc)
	}
	return results, nil
}

// priced is a price catalog and where its prices come from.
type priced struct {
	catalog *pricing.Catalog
	from    string
}

func writeRunResult(dir string, doc *result.Document) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return result.WriteFile(filepath.Join(dir, doc.Run+".json"), doc)
}
