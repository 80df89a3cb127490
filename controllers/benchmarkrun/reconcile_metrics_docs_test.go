package benchmarkrun

import (
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestReconcilePhaseSecondsIsDocumented: the histogram of reconcile times
// the manager serves is named in docs/metrics.md, as every served series
// is (internal/dashboards' TestEveryMetricIsDocumented checks the others).
func TestReconcilePhaseSecondsIsDocumented(t *testing.T) {
	h, err := newReconcilePhaseSeconds()
	if err != nil {
		t.Fatal(err)
	}
	descs := make(chan *prometheus.Desc, 1)
	h.Describe(descs)
	d := (<-descs).String()
	doc, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	name, _, _ := strings.Cut(strings.TrimPrefix(d, `Desc{fqName: "`), `"`)
	if !strings.HasPrefix(name, "spanbench_") {
		t.Fatalf("no series name read from %s", d)
	}
	if !strings.Contains(string(doc), "`"+name+"`") {
		t.Errorf("docs/metrics.md does not name %s, which the manager serves", name)
	}
}
