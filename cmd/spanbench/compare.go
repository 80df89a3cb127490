//go:build !runner

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spanbench/spanbench/campaign/stats"
)

// exitRegressed is compare's exit code with --fail-on-regression when a
// comparison reads Regressed: distinct from 1 (bad input) so CI can tell a
// finding from a broken job.
const exitRegressed = 3

func compareCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	confidence := fs.Float64("confidence", stats.DefaultConfidence, "confidence level of the intervals, in (0, 1)")
	minEffect := percentFlag(0.05)
	fs.Var(&minEffect, "min-effect", "smallest change called Improved or Regressed, as a fraction (0.05) or a percentage (5%)")
	sections := fs.Int("sections", 0, "sections per run for the one-run-per-side interval; 0 means ⌈√n⌉ for runs of n intervals, at least 4 and at most 11")
	failOnRegression := fs.Bool("fail-on-regression", false, fmt.Sprintf("exit %d when any comparison reads Regressed", exitRegressed))
	fs.Usage = func() {
		io.WriteString(stderr, "usage: spanbench compare [flags] BASELINE VARIANT [VARIANT...]\n\n"+
			"Compares each variant with the baseline per operation: throughput, p50, p99,\n"+
			"p99.9 and error rate, each with a ratio, a confidence interval and a verdict.\n"+
			"Each argument is one cell: a result file (spanbench run --out, spanbench\n"+
			"report --out), or several repetitions joined by commas, optionally labelled:\n"+
			"  spanbench compare asia1.json tokyo.json\n"+
			"  spanbench compare read=a1.json,a2.json,a3.json sql=b1.json,b2.json,b3.json\n"+
			"One run per side is compared by sectioning its intervals after the warm-up\n"+
			"(Student t over paired sections); several by their exact per-run values (Mann-Whitney).\n"+
			"Merge a run's shard files first with spanbench report --out.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 2 {
		fs.Usage()
		return errors.New("give a baseline and at least one variant")
	}
	o := compareOptions{stats: stats.Options{Confidence: *confidence, MinEffect: float64(minEffect)}, sections: *sections}
	cells, err := loadCells(fs.Args())
	if err != nil {
		return err
	}
	rows, notes, err := compareCells(ctx, cells, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "baseline %s: %d run(s)\n", cells[0].label, len(cells[0].runs))
	if err := stats.WriteTable(stdout, rows); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintf(stdout, "note: %s\n", n)
	}
	return regressionFound(rows, *failOnRegression)
}

// regressionFound is the exit decision: a regression is a finding, reported
// in the table; it fails the command only when asked to.
func regressionFound(rows []stats.Row, fail bool) error {
	n := 0
	for _, r := range rows {
		if r.Comparison.Verdict == stats.Regressed {
			n++
		}
	}
	if !fail || n == 0 {
		return nil
	}
	return &exitError{code: exitRegressed, err: fmt.Errorf("%d of %d comparisons Regressed", n, len(rows))}
}

// cell is one side of a comparison: a label and its runs' series.
type cell struct {
	label string
	paths []string
	runs  []map[string]*opSeries
	ops   []string
}

// loadCells reads every argument's result files; all runs must measure the
// same operations, or there is nothing to compare them on.
func loadCells(args []string) ([]*cell, error) {
	cells := make([]*cell, 0, len(args))
	for _, arg := range args {
		c, err := loadCell(arg)
		if err != nil {
			return nil, err
		}
		if len(cells) > 0 && !slices.Equal(c.ops, cells[0].ops) {
			return nil, fmt.Errorf("%s measured operations %v, but the baseline %s measured %v: results of different workloads cannot be compared",
				c.label, c.ops, cells[0].label, cells[0].ops)
		}
		cells = append(cells, c)
	}
	return cells, nil
}

// loadCell reads one argument: [LABEL=]FILE[,FILE...].
func loadCell(arg string) (*cell, error) {
	c := &cell{}
	files := arg
	if label, rest, ok := strings.Cut(arg, "="); ok && label != "" && !strings.ContainsAny(label, `/\,`) {
		c.label, files = label, rest
	}
	for _, path := range strings.Split(files, ",") {
		if path == "" {
			return nil, fmt.Errorf("argument %q names an empty file", arg)
		}
		// Checked like a report's files, its figures derived again.
		doc, err := mergeFiles([]string{path})
		if err != nil {
			return nil, err
		}
		s, err := runSeries(path, doc)
		if err != nil {
			return nil, err
		}
		ops := slices.Sorted(maps.Keys(s)) // what it measured: a streams result's spec may list more
		if len(c.runs) > 0 && !slices.Equal(ops, c.ops) {
			return nil, fmt.Errorf("%s measured operations %v, but %s measured %v: repetitions of one cell must run one workload",
				path, ops, c.paths[0], c.ops)
		}
		c.paths, c.runs, c.ops = append(c.paths, path), append(c.runs, s), ops
	}
	if c.label == "" {
		names := make([]string, len(c.paths))
		for i, p := range c.paths {
			names[i] = strings.TrimSuffix(filepath.Base(p), ".json")
		}
		c.label = strings.Join(names, ",")
	}
	return c, nil
}

// compareCells compares every variant with the baseline (cells[0]), per
// operation and metric. A metric that cannot be compared (a zero on one
// side) becomes a note, not an error: the rest of the table still stands.
// Any other error (bad options, a histogram that does not merge) ends the
// command.
func compareCells(ctx context.Context, cells []*cell, o compareOptions) ([]stats.Row, []string, error) {
	var rows []stats.Row
	var notes []string
	base := cells[0]
	for _, v := range cells[1:] {
		for _, op := range base.ops {
			for _, m := range compareMetrics() {
				if err := ctx.Err(); err != nil {
					return nil, nil, err
				}
				row, err := compareMetric(sideOf(base, op), sideOf(v, op), m, o)
				row.Variant, row.Metric = v.label, op+" "+m.label
				var incomparable *incomparableError
				switch {
				case errors.Is(err, errNothingToCompare):
				case errors.As(err, &incomparable):
					notes = append(notes, fmt.Sprintf("%s, %s: not compared: %v", row.Variant, row.Metric, err))
				case err != nil:
					return nil, nil, fmt.Errorf("%s, %s: %w", row.Variant, row.Metric, err)
				default:
					rows = append(rows, row)
				}
			}
		}
	}
	return rows, notes, nil
}

// sideOf is one operation's series in each of a cell's runs.
func sideOf(c *cell, op string) []*opSeries {
	s := make([]*opSeries, len(c.runs))
	for i, r := range c.runs {
		s[i] = r[op]
	}
	return s
}

// percentFlag is a fraction given as 0.05 or 5%.
type percentFlag float64

func (p *percentFlag) String() string { return strconv.FormatFloat(float64(*p), 'g', -1, 64) }

func (p *percentFlag) Set(s string) error {
	pct := strings.HasSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(s, "%")), 64)
	if err != nil {
		return fmt.Errorf("%q is not a fraction (0.05) or a percentage (5%%)", s)
	}
	if pct {
		v /= 100
	}
	*p = percentFlag(v)
	return nil
}
