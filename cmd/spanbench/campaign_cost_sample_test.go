package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/comparison"
	"github.com/spanbench/spanbench/campaign/plan"
	"github.com/spanbench/spanbench/cmd/spanbench/manifest"
	"github.com/spanbench/spanbench/internal/pricetest"
	"github.com/spanbench/spanbench/result"
)

// seedLeaderCPU is the leader region's high-priority CPU, in percent, a
// run of each cell of the single- vs multi-region sample reports from
// Cloud Monitoring: the seed's figures (asia1's leader at about 1.86x
// tokyo's at 3 nodes each), and asia1 at twice the nodes holding about
// tokyo's. The emulator has no CPU metrics: as the campaign's server-figure
// test (controllers/benchmarkcampaign, TestCampaignComparesTheLeaderRegionsCPUOnceCollected)
// does, they are written into each run's result as Cloud Monitoring's
// section, which a stand-in would have served.
var seedLeaderCPU = map[string]float64{"tokyo": 21, "asia1": 39, "asia1-2x": 20.5}

// TestTokyoVsAsia1SampleShowsTheSeedsCostConclusion runs the single- vs
// multi-region campaign sample (config/samples/campaign-tokyo-vs-asia1.yaml),
// shortened to 2 repetitions of 3 s, on a fresh emulator with
// `spanbench campaign -f --price-catalog`, and reads the seed's
// conclusion off its comparison: asia1 at twice the nodes holds tokyo's
// leader CPU, and costs about six times as much per operation (twice the
// nodes x three times the price per node).
//
// The prices are internal/pricetest's fixture, an ILLUSTRATIVE OVERRIDE,
// NOT GOOGLE'S PRICES: the embedded catalog has none yet (docs/cost.md).
// It prices asia1 (Enterprise Plus) at 3x regional-asia-northeast1
// (Standard), the seed's "about three times the price"; the ratios below
// follow from that ratio and the cells' nodes, and the operations the
// emulator really served.
func TestTokyoVsAsia1SampleShowsTheSeedsCostConclusion(t *testing.T) {
	t.Parallel() // against a fresh emulator of its own
	c, err := manifest.ReadCampaignFile(filepath.Join("..", "..", "config", "samples", "campaign-tokyo-vs-asia1.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cost, cpu *v1alpha1.MetricSpec
	for i, m := range c.Spec.Comparison.Metrics {
		switch m.Statistic {
		case v1alpha1.StatisticCostPerMillionOps:
			cost = &c.Spec.Comparison.Metrics[i]
		case v1alpha1.StatisticServerHighPriorityCPU:
			cpu = &c.Spec.Comparison.Metrics[i]
		}
	}
	if cost == nil || cpu == nil {
		t.Fatalf("the sample compares %+v; want CostPerMillionOps and the leader's ServerHighPriorityCPU", c.Spec.Comparison.Metrics)
	}
	// Shorter, so that the test takes seconds: the matrix, the cells'
	// nodes and configurations, the workload and its rate are the sample's.
	c.Spec.Repetitions = ptr.To[int32](2)
	c.Spec.Template.Spec.Workload.Duration = &metav1.Duration{Duration: 3 * time.Second}
	data, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	prices := writeFile(t, "illustrative-prices.yaml", pricetest.Override)
	code, stdout, stderr := runCLI(t, "campaign", "-f", writeFile(t, "tokyo-vs-asia1.yaml", string(data)), "--fresh-emulator",
		"--progress", "never", "--out-dir", out, "--price-catalog", prices)
	if code != 0 {
		t.Fatalf("spanbench campaign exited %d:\n%s", code, stderr)
	}
	for _, want := range []string{"asia1-2x", "cost per million ops"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the comparison printed lacks %q:\n%s", want, stdout)
		}
	}

	// The runs' results as written, each with its cost; the leader's CPU
	// added as Cloud Monitoring's section.
	cells, base, err := plan.Expand(&c.Spec)
	if err != nil {
		t.Fatal(err)
	}
	results := make([]comparison.Cell, len(cells))
	for i := range cells {
		results[i].Name = cells[i].Name
		files, err := filepath.Glob(filepath.Join(out, "tokyo-vs-asia1-*-"+cells[i].Hash+"-r*.json"))
		if err != nil || len(files) != 2 {
			t.Fatalf("cell %s: results %v (%v); want its 2 runs'", cells[i].Name, files, err)
		}
		for j, f := range files {
			d, err := result.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if d.Cost == nil || d.Cost.PerMillionOperations.Amount == "" {
				t.Fatalf("run %s carries no cost per million operations: %+v", d.Run, d.Cost)
			}
			p := seedLeaderCPU[cells[i].Name] * (1 + 0.01*float64(j))
			d.Monitoring = &result.Monitoring{Version: result.MonitoringSchemaVersion, AlignmentSeconds: 60,
				CPU: []result.MonitoringCPU{{Priority: "high", Location: "asia-northeast1", MeanRatio: p / 100, MaxRatio: p / 100}}}
			results[i].Runs = append(results[i].Runs, d)
		}
	}
	spec := c.Spec.Comparison
	spec.Metrics = []v1alpha1.MetricSpec{*cpu, *cost}
	tab, err := comparison.Assemble(&spec, results, base)
	if err != nil {
		t.Fatal(err)
	}
	ratios := map[string]float64{}
	for _, r := range tab.Rows {
		ratios[r.Variant+" "+r.Metric] = r.Comparison.Ratio
	}
	cpuRow, costRow := comparison.MetricName("asia-northeast1", cpu.Statistic), comparison.MetricName("overall", cost.Statistic)
	for _, want := range []struct {
		row    string
		lo, hi float64
		why    string
	}{
		{"asia1 " + cpuRow, 1.8, 1.95, "at 3 nodes asia1's leader works about twice as hard"},
		{"asia1-2x " + cpuRow, 0.9, 1.1, "twice the nodes hold tokyo's CPU"},
		{"asia1 " + costRow, 2.7, 3.3, "the same nodes at three times the price"},
		{"asia1-2x " + costRow, 5.4, 6.6, "twice the nodes at three times the price: the seed's six times"},
	} {
		got, ok := ratios[want.row]
		if !ok || got < want.lo || got > want.hi {
			t.Errorf("%s: ratio to tokyo %s (found %v), want %g to %g: %s\n%s", want.row, strconv.FormatFloat(got, 'f', 3, 64), ok, want.lo, want.hi, want.why, stdout)
		}
	}
	t.Logf("the comparison printed:\n%s", stdout)
}
