package main

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/spanbench/spanbench/controllers/collectors"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/metrics"
)

// userDocs is the text a user reads: the README and every page of docs/.
func userDocs(t *testing.T) string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	var all strings.Builder
	for _, p := range append(pages, filepath.Join("..", "..", "README.md")) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
		all.WriteByte('\n')
	}
	return all.String()
}

// flagLine is a flag's first line in a flag set's usage: "  -name type".
var flagLine = regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`)

// TestEveryFlagIsDocumented holds "every field documented" for the flags a
// user passes: every flag of every command but the runner pods' (which
// the controller passes, and whose zap flags are controller-runtime's) is
// named in the README or docs/ as --name (-x for a one-letter flag), so
// that a flag added without a word in the docs fails here.
func TestEveryFlagIsDocumented(t *testing.T) {
	docs := userDocs(t)
	for _, c := range commands {
		if c.name == "runner" || c.name == "version" {
			continue
		}
		var stdout, stderr bytes.Buffer
		dispatch(context.Background(), []string{c.name, "-h"}, &stdout, &stderr)
		flags := flagLine.FindAllStringSubmatch(stderr.String()+stdout.String(), -1)
		if len(flags) == 0 {
			t.Errorf("spanbench %s -h lists no flags: is the usage's format still \"  -name\"?\n%s", c.name, stderr.String())
		}
		for _, f := range flags {
			name := f[1]
			dashes := "--"
			if len(name) == 1 {
				dashes = "-"
			}
			if !regexp.MustCompile(`(^|[^a-z0-9-])` + dashes + regexp.QuoteMeta(name) + `([^a-z0-9-]|$)`).MatchString(docs) {
				t.Errorf("spanbench %s %s%s is in no page of docs/ nor the README: say what it does and its default", c.name, dashes, name)
			}
		}
	}
}

// servedMetrics are the names of every series spanbench serves: the
// manager's result and campaign collectors and the runner pods' live
// metrics. The manager's reconcile-phase histogram is the BenchmarkRun
// reconciler's own and its test's (controllers/benchmarkrun).
func servedMetrics(t *testing.T) []string {
	t.Helper()
	var names []string
	descs := make(chan *prometheus.Desc, 256)
	(&collectors.ResultsCollector{}).Describe(descs)
	(&collectors.CampaignCollector{}).Describe(descs)
	close(descs)
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	for d := range descs {
		m := fqName.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("no fqName in %s", d)
		}
		names = append(names, m[1])
	}
	reg := prometheus.NewRegistry()
	if _, err := metrics.NewEngine(reg, "r", []result.OperationInfo{{Name: "read", Type: "Read"}}); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		names = append(names, f.GetName())
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// documentedMetric is a series name in the docs: spanbench_ and the rest,
// or the shorthand "`_high`" after a name ("`..._ratio_low`, `_high`").
var documentedMetric = regexp.MustCompile("`(spanbench_[a-z0-9_]+[a-z0-9])`(, `(_[a-z0-9_]+)`)?")

// TestEveryMetricIsDocumented: every series the manager and the runner
// pods serve is named in docs/, and every spanbench_ series docs/ and the
// README name is served (or is a histogram's _bucket, _sum or _count of
// one), so that neither a new series nor a renamed one goes unnoticed.
func TestEveryMetricIsDocumented(t *testing.T) {
	docs := userDocs(t)
	documented := map[string]bool{}
	for _, m := range documentedMetric.FindAllStringSubmatch(docs, -1) {
		documented[m[1]] = true
		if m[3] != "" {
			documented[m[1][:strings.LastIndex(m[1], "_")]+m[3]] = true
		}
	}
	served := servedMetrics(t)
	if len(served) < 40 {
		t.Fatalf("only %d series found served: %v", len(served), served)
	}
	for _, name := range served {
		if !documented[name] {
			t.Errorf("%s is served but named in no page of docs/ (docs/metrics.md lists the series)", name)
		}
	}
	// The BenchmarkRun reconciler's own histogram: its test checks the docs
	// name it (TestReconcilePhaseSecondsIsDocumented).
	served = append(served, "spanbench_run_reconcile_phase_seconds")
	for name := range documented {
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
		if !slices.Contains(served, name) && !slices.Contains(served, base) {
			t.Errorf("the docs name %s, which nothing serves", name)
		}
	}
}

// TestEverySampleIsListed: the README's table of samples names every
// manifest of config/samples, and each sample the README's tables or any
// page names as config/samples/NAME exists, so that a sample added,
// renamed or removed without the docs fails here.
func TestEverySampleIsListed(t *testing.T) {
	samplesDir := filepath.Join("..", "..", "config", "samples")
	files, err := filepath.Glob(filepath.Join(samplesDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples in %s: %v", samplesDir, err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var tables strings.Builder
	for l := range strings.Lines(string(readme)) {
		if strings.HasPrefix(l, "|") {
			tables.WriteString(l)
		}
	}
	for _, f := range files {
		if name := filepath.Base(f); !strings.Contains(tables.String(), "`"+name+"`") {
			t.Errorf("config/samples/%s is not in the README's table of samples", name)
		}
	}
	named := regexp.MustCompile(`config/samples/([a-z0-9-]+\.yaml)`).FindAllStringSubmatch(userDocs(t), -1)
	named = append(named, regexp.MustCompile("`([a-z0-9-]+\\.yaml)`").FindAllStringSubmatch(tables.String(), -1)...)
	for _, m := range named {
		if _, err := os.Stat(filepath.Join(samplesDir, m[1])); err != nil {
			t.Errorf("the docs name the sample %s: %v", m[1], err)
		}
	}
}

// reasonConst is a constant that names a condition's or an event's reason.
var reasonConst = regexp.MustCompile(`^(Reason|reason|Event)[A-Z]`)

// TestEveryReasonIsDocumented: every condition and event reason the API
// and the controllers declare (constants named Reason*, reason* or
// Event*) is named in the README or docs/ as `Reason`, so that a user who
// meets one in `kubectl describe` finds what it means.
func TestEveryReasonIsDocumented(t *testing.T) {
	docs := userDocs(t)
	var reasons int
	for _, dir := range []string{"api", "controllers"} {
		err := filepath.WalkDir(filepath.Join("..", "..", dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			for _, decl := range f.Decls {
				gen, ok := decl.(*ast.GenDecl)
				if !ok || gen.Tok != token.CONST {
					continue
				}
				for _, spec := range gen.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if !reasonConst.MatchString(name.Name) || i >= len(vs.Values) {
							continue
						}
						lit, ok := vs.Values[i].(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						reasons++
						if value := strings.Trim(lit.Value, "`\""); !strings.Contains(docs, "`"+value+"`") {
							t.Errorf("%s (%s, %s) is in no page of docs/ nor the README", value, name.Name, path)
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if reasons < 50 {
		t.Fatalf("only %d reason constants found: is the walk broken?", reasons)
	}
}

// TestEveryPageIsListed: the README's list of pages names every page of
// docs/, so that a new page is found from the README.
func TestEveryPageIsListed(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		if entry := "- `docs/" + filepath.Base(p) + "` — "; !strings.Contains(string(readme), entry) {
			t.Errorf("the README's list of pages has no line %q", entry)
		}
	}
}
