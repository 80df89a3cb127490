package dashboards_test

import (
	"os"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc/codes"

	"github.com/spanbench/spanbench/controllers/collectors"
	"github.com/spanbench/spanbench/internal/dashboards"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/metrics"
)

// rulesFile holds the alert rules, which query the same series.
const rulesFile = "../../config/prometheus/rules.yaml"

// exported lists the spanbench series the code exports today: the
// manager's result and campaign series (from the collectors' descriptions) and a
// runner's live series (from a registry the load engine's collectors
// fill), histograms with their _bucket, _sum and _count series.
func exported(t *testing.T) []string {
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
	eng, err := metrics.NewEngine(reg, "run", []result.OperationInfo{{Name: "read", Type: "Read"}})
	if err != nil {
		t.Fatal(err)
	}
	eng.Finished(0, codes.OK, time.Millisecond)
	eng.Missed()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		names = append(names, f.GetName())
		if f.GetType() == dto.MetricType_HISTOGRAM {
			names = append(names, f.GetName()+"_bucket", f.GetName()+"_sum", f.GetName()+"_count")
		}
	}
	return names
}

var seriesName = regexp.MustCompile(`\bspanbench_[a-z_]+`)

// TestQueriesReadExportedSeries: every spanbench series a panel, a
// dashboard variable or an alert names is one the code exports, so a
// renamed metric fails here rather than leaving a panel empty.
func TestQueriesReadExportedSeries(t *testing.T) {
	known := exported(t)
	check := func(where, text string) {
		for _, name := range seriesName.FindAllString(text, -1) {
			if !slices.Contains(known, name) {
				t.Errorf("%s reads %s, which spanbench does not export (it exports %v)", where, name, known)
			}
		}
	}
	files, err := dashboards.ReadDir(committed)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		// Panel queries and variable definitions alike: all of the JSON.
		check(name, string(b))
	}
	rules, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	check(rulesFile, string(rules))
}
