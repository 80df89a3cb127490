package dashboards_test

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spanbench/spanbench/internal/userdocs"
)

// documentedMetric is a series name the README or docs/ give: spanbench_
// and the rest, or the shorthand "`_high`" after a name
// ("`..._ratio_low`, `_high`").
var documentedMetric = regexp.MustCompile("`(spanbench_[a-z0-9_]+[a-z0-9])`(, `(_[a-z0-9_]+)`)?")

// TestEveryMetricIsDocumented: every series the manager and the runner
// pods export (exported, in series_test.go) is named in the README or
// docs/, and every spanbench_ series they name is exported, so that
// neither a new series nor a renamed one goes unnoticed. The manager's
// reconcile-phase histogram is its reconciler's, and its own test's
// (TestReconcilePhaseSecondsIsDocumented in controllers/benchmarkrun).
func TestEveryMetricIsDocumented(t *testing.T) {
	docs, err := userdocs.Read(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range documentedMetric.FindAllStringSubmatch(docs, -1) {
		documented[m[1]] = true
		if m[3] != "" {
			documented[m[1][:strings.LastIndex(m[1], "_")]+m[3]] = true
		}
	}
	served := exported(t)
	if len(served) < 40 {
		t.Fatalf("only %d series exported: %v", len(served), served)
	}
	for _, name := range served {
		series := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
		if series != name && slices.Contains(served, series) {
			continue // a histogram's own series
		}
		if !documented[name] {
			t.Errorf("%s is exported but named in no page of docs/ (docs/metrics.md lists the series)", name)
		}
	}
	served = append(served, "spanbench_run_reconcile_phase_seconds")
	for name := range documented {
		if !slices.Contains(served, name) {
			t.Errorf("the docs name %s, which nothing exports", name)
		}
	}
}
