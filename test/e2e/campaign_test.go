//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/comparison"
	"github.com/spanbench/spanbench/campaign/plan"
)

// The campaign of TestCampaignOnRealPods: the demo run at two total rates,
// two repetitions each. Its four runs share one database, so they run one
// after the other (about 15 s each: 6 s of load, pod starts, merging); the
// campaign took 60 s and the whole test 62 s (without the 30 s the ratio
// series is awaited when missing) on 2 busy cores.
const (
	campaignName = "rates"
	slowRate     = 60
	fastRate     = 120
	// ratioSeries is the manager's comparison ratio, per campaign, variant,
	// operation and statistic (docs/metrics.md).
	ratioSeries = "spanbench_campaign_comparison_ratio"
	// campaignTimeout bounds the four runs, one after the other.
	campaignTimeout = 8 * time.Minute
)

// TestCampaignOnRealPods runs a 2-cell × 2-repetition BenchmarkCampaign on
// real pods against the emulator, with a real Prometheus scraping the
// runners and the manager, and checks what a user relies on: the runs were
// created interleaved (slow fast slow fast) and never overlapped on their
// shared database; every run succeeded; the status holds the comparison,
// whose throughput ratio is the 2x the cells differ by, and a verdict;
// `kubectl get benchmarkcampaigns` shows that verdict; Prometheus serves
// the comparison's ratios; and every dashboard panel's query returns
// series after this real campaign (see requireDashboardsServed).
func TestCampaignOnRealPods(t *testing.T) {
	kustomizePassOnly(t)
	t.Parallel()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatalf("no prometheus binary: install Debian's with `hack/install-deps.sh prometheus`")
	}
	ns := newNamespace(t, "e2e-campaign")
	prom := startPrometheus(t, bin, ns, metricsReaderToken(t, ns))
	from := time.Now()

	c := rateCampaign(t, ns)
	create(t, c)
	c = waitCampaign(t, ns, c.Name)
	runs := campaignRuns(t, c)
	t.Logf("campaign %s: verdict %s after %s", c.Name, c.Status.Verdict, time.Since(from).Round(time.Second))

	t.Run("RunsInterleavedAndSequential", func(t *testing.T) { requireInterleaved(t, c, runs) })
	t.Run("StatusHoldsTheComparison", func(t *testing.T) { requireComparison(t, c) })
	t.Run("KubectlShowsTheVerdict", func(t *testing.T) { requireVerdictColumn(t, c) })
	t.Run("PrometheusServesTheRatios", func(t *testing.T) { requireRatioSeries(t, prom, c) })
	t.Run("EveryDashboardQueryReturnsSeries", func(t *testing.T) {
		requireDashboardsServed(t, prom, from, map[string]string{
			"namespace": ns,
			"run":       runs[0].Name,
			"campaign":  c.Name,
			"iteration": c.Status.Iterations[0].Name,
			"variant":   "fast",
			"operation": "read",
		})
	})
}

// rateCampaign is the demo run, shortened (6 s of load after a fixed 2 s
// warm-up), at a total rate of slowRate (the baseline cell "slow") and
// fastRate ("fast"), two repetitions each, compared on throughput and p99.
func rateCampaign(t *testing.T, ns string) *v1alpha1.BenchmarkCampaign {
	t.Helper()
	tmpl := demoRun(t, ns, "template", withLoad(6*time.Second, slowRate), func(r *v1alpha1.BenchmarkRun) {
		r.Spec.Workload.WarmUp = &v1alpha1.WarmUpSpec{Mode: v1alpha1.WarmUpFixed, Duration: &metav1.Duration{Duration: 2 * time.Second}}
		r.Spec.Workload.Interval = &metav1.Duration{Duration: time.Second}
	})
	rate := func(label string, v int) v1alpha1.AxisValue {
		return v1alpha1.AxisValue{Label: label, Value: apiextensionsv1.JSON{Raw: []byte(strconv.Itoa(v))}}
	}
	return &v1alpha1.BenchmarkCampaign{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: campaignName},
		Spec: v1alpha1.BenchmarkCampaignSpec{
			Template: v1alpha1.BenchmarkRunTemplate{Spec: tmpl.Spec},
			Matrix: &v1alpha1.MatrixSpec{Axes: []v1alpha1.MatrixAxis{{
				Name: "rate", Path: "workload.load.rate", Values: []v1alpha1.AxisValue{rate("slow", slowRate), rate("fast", fastRate)},
			}}},
			Repetitions: ptr.To[int32](2),
			Order:       v1alpha1.OrderInterleaved,
			Comparison: v1alpha1.ComparisonSpec{Metrics: []v1alpha1.MetricSpec{
				{Statistic: v1alpha1.StatisticThroughput}, {Statistic: v1alpha1.StatisticP99},
			}},
		},
	}
}

// waitCampaign waits until the campaign's first iteration has ended and
// its comparison is in the status; a failed iteration fails the test.
func waitCampaign(t *testing.T, ns, name string) *v1alpha1.BenchmarkCampaign {
	t.Helper()
	c := &v1alpha1.BenchmarkCampaign{}
	eventually(t, campaignTimeout, "campaign "+name+" to finish its iteration", func(ctx context.Context) (bool, string) {
		if err := suite.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, c); err != nil {
			return false, err.Error()
		}
		state := describeCampaign(c)
		if len(c.Status.Iterations) == 0 {
			return false, state
		}
		switch it := c.Status.Iterations[0]; it.Outcome {
		case v1alpha1.IterationSucceeded:
			return c.Status.Comparison != nil, state
		case v1alpha1.IterationFailed, v1alpha1.IterationMissed:
			t.Fatalf("campaign %s: iteration %s ended %s: %s", name, it.Name, it.Outcome, state)
		}
		return false, state
	})
	return c
}

// describeCampaign is where a campaign stands: its iterations, active runs
// and conditions.
func describeCampaign(c *v1alpha1.BenchmarkCampaign) string {
	var b strings.Builder
	for _, it := range c.Status.Iterations {
		fmt.Fprintf(&b, "iteration %s %s (%d/%d succeeded, %d failed); ", it.Name, it.Outcome, it.Succeeded, it.Runs, it.Failed)
	}
	fmt.Fprintf(&b, "active %v", c.Status.Active)
	for _, cond := range c.Status.Conditions {
		if cond.Status == metav1.ConditionTrue {
			fmt.Fprintf(&b, "; %s %s: %s", cond.Type, cond.Reason, cond.Message)
		}
	}
	return b.String()
}

// campaignRuns lists the campaign's runs in creation order, failing the
// test unless each of them succeeded.
func campaignRuns(t *testing.T, c *v1alpha1.BenchmarkCampaign) []v1alpha1.BenchmarkRun {
	t.Helper()
	list := &v1alpha1.BenchmarkRunList{}
	if err := suite.c.List(t.Context(), list, client.InNamespace(c.Namespace), client.MatchingLabels{v1alpha1.LabelCampaign: c.Name}); err != nil {
		t.Fatal(err)
	}
	runs := list.Items
	slices.SortStableFunc(runs, func(a, b v1alpha1.BenchmarkRun) int {
		return a.CreationTimestamp.Compare(b.CreationTimestamp.Time)
	})
	for i := range runs {
		requireSucceeded(t, &runs[i], v1alpha1.ReasonCompleted)
	}
	return runs
}

// requireInterleaved: the runs were created in the Interleaved order that
// campaign/plan computes (slow fast slow fast, repetition 1 then 2), each
// only after the previous one had finished — they share one database, and
// two runs never use one database at once.
func requireInterleaved(t *testing.T, c *v1alpha1.BenchmarkCampaign, runs []v1alpha1.BenchmarkRun) {
	cells := []string{"slow", "fast"}
	var want, got []string
	for _, s := range plan.Order(v1alpha1.OrderInterleaved, c.Spec.OrderSeed(), len(cells), 2) {
		want = append(want, fmt.Sprintf("%s/%d", cells[s.Cell], s.Repetition))
	}
	for _, r := range runs {
		got = append(got, r.Labels[v1alpha1.LabelVariant]+"/"+r.Labels[v1alpha1.LabelRepetition])
	}
	if !slices.Equal(got, want) {
		t.Errorf("runs created in the order %v (variant/repetition), want %v", got, want)
	}
	for i := 1; i < len(runs); i++ {
		prev, next := &runs[i-1], &runs[i]
		done := meta.FindStatusCondition(prev.Status.Conditions, v1alpha1.ConditionSucceeded)
		if done == nil || next.CreationTimestamp.Before(&done.LastTransitionTime) {
			t.Errorf("run %s was created at %s, before run %s on the same database finished (%v)",
				next.Name, next.CreationTimestamp, prev.Name, done)
		}
	}
}

// requireComparison: the status holds a comparison of the iteration, fast
// against the baseline slow, on every operation's throughput and p99, with
// a verdict; the throughput ratios are about the 2x the cells' rates differ
// by (an open loop below the emulator's capacity achieves its target
// rate). About: with some 100 operations of each kind a run, the random
// operation mix alone moves one operation's rate by ~10 % a run (a ratio
// of 2.44 was seen), so the bounds only tell 2x from 1x and from the
// cells swapped.
func requireComparison(t *testing.T, c *v1alpha1.BenchmarkCampaign) {
	cmp := c.Status.Comparison
	if cmp.Iteration != c.Status.Iterations[0].Name || cmp.Baseline != "slow" {
		t.Errorf("status.comparison is of iteration %q with baseline %q; want %q and slow", cmp.Iteration, cmp.Baseline, c.Status.Iterations[0].Name)
	}
	if cmp.Verdict == "" || c.Status.Verdict == "" {
		t.Errorf("no verdict: comparison %q, campaign %q", cmp.Verdict, c.Status.Verdict)
	}
	var metrics []string
	for _, row := range cmp.Rows {
		metrics = append(metrics, row.Metric)
		t.Logf("%s %s: baseline %s value %s ratio %s [%s, %s] n %s p %s %s", row.Variant, row.Metric, row.Baseline, row.Value,
			row.Ratio, row.Low, row.High, row.N, row.PValue, row.Verdict)
		if row.Variant != "fast" || row.N != "2+2" || row.Verdict == "" {
			t.Errorf("row %+v: want variant fast, n 2+2 and a verdict", row)
		}
		if !strings.HasSuffix(row.Metric, " ops/s") {
			continue
		}
		if r, err := strconv.ParseFloat(row.Ratio, 64); err != nil || r < 1.4 || r > 2.9 {
			t.Errorf("%s: ratio %s, want about %d/%d = 2", row.Metric, row.Ratio, fastRate, slowRate)
		}
	}
	var want []string
	for _, op := range []string{"read", "read-strong", "update"} {
		want = append(want, comparison.MetricName(op, v1alpha1.StatisticThroughput), comparison.MetricName(op, v1alpha1.StatisticP99))
	}
	slices.Sort(metrics)
	slices.Sort(want)
	if !slices.Equal(metrics, want) || cmp.OmittedRows != 0 {
		t.Errorf("status.comparison rows compare %v (%d omitted), want %v", metrics, cmp.OmittedRows, want)
	}
}

// requireVerdictColumn: `kubectl get benchmarkcampaigns` prints the
// campaign's verdict in its VERDICT column.
func requireVerdictColumn(t *testing.T, c *v1alpha1.BenchmarkCampaign) {
	out := kubectl(t, "-n", c.Namespace, "get", "benchmarkcampaigns")
	lines := strings.Split(out, "\n")
	col := strings.Index(lines[0], "VERDICT")
	if col < 0 || len(lines) != 2 {
		t.Fatalf("kubectl get benchmarkcampaigns: want a VERDICT column and one campaign:\n%s", out)
	}
	row := lines[1]
	got := ""
	if col < len(row) {
		got = strings.Fields(row[col:] + " ")[0]
	}
	if !strings.HasPrefix(row, c.Name+" ") || got != string(c.Status.Verdict) {
		t.Errorf("kubectl get benchmarkcampaigns shows verdict %q, the status %q:\n%s", got, c.Status.Verdict, out)
	}
	t.Logf("kubectl get benchmarkcampaigns:\n%s", out)
}

// requireRatioSeries: the manager serves spanbench_campaign_comparison_ratio
// for every row of the status's comparison — labels namespace, campaign,
// variant, operation and statistic — with the row's ratio, and Prometheus
// scrapes it.
func requireRatioSeries(t *testing.T, prom *prometheus, c *v1alpha1.BenchmarkCampaign) {
	q := fmt.Sprintf(`%s{namespace=%q, campaign=%q, job="spanbench-manager"}`, ratioSeries, c.Namespace, c.Name)
	eventually(t, 30*time.Second, ratioSeries+" in Prometheus", func(ctx context.Context) (bool, string) {
		res, err := prom.query(ctx, q)
		if err != nil {
			return false, err.Error()
		}
		if len(res) == 0 {
			return false, fmt.Sprintf("%s: no series; the manager does not export the campaign's comparison ratios (docs/metrics.md)", q)
		}
		if missing := unmatchedRows(c.Status.Comparison.Rows, res); len(missing) > 0 {
			return false, fmt.Sprintf("%s: %v; no series with the ratio of %s", q, res, strings.Join(missing, ", "))
		}
		if len(res) != len(c.Status.Comparison.Rows) {
			return false, fmt.Sprintf("%s: %d series for %d comparison rows: %v", q, len(res), len(c.Status.Comparison.Rows), res)
		}
		return true, ""
	})
}

// unmatchedRows are the comparison rows without a ratio series: same
// variant, an operation and statistic naming the row's metric, and the
// row's ratio (the status rounds it to 3 decimals).
func unmatchedRows(rows []v1alpha1.ComparisonRow, series []sample) []string {
	var missing []string
	for _, row := range rows {
		ratio, err := strconv.ParseFloat(row.Ratio, 64)
		found := false
		for _, s := range series {
			stat := statisticNamed(s.labels["statistic"])
			found = found || (err == nil && s.labels["variant"] == row.Variant && stat != "" &&
				comparison.MetricName(s.labels["operation"], stat) == row.Metric && math.Abs(s.value-ratio) <= 0.0005+1e-9)
		}
		if !found {
			missing = append(missing, fmt.Sprintf("%s %s (ratio %s)", row.Variant, row.Metric, row.Ratio))
		}
	}
	return missing
}

// statisticNamed is the campaign statistic a label value names (in any
// case), or "".
func statisticNamed(label string) v1alpha1.CampaignStatistic {
	for _, s := range []v1alpha1.CampaignStatistic{v1alpha1.StatisticThroughput, v1alpha1.StatisticP50, v1alpha1.StatisticP90,
		v1alpha1.StatisticP99, v1alpha1.StatisticP999} {
		if strings.EqualFold(label, string(s)) {
			return s
		}
	}
	return ""
}
