package benchmarkcampaign_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/comparison"
	"github.com/spanbench/spanbench/controllers/runreport"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/protocol"
)

// TestCampaignRefusesATamperedReportWithInvalidRows: a run's report
// ConfigMap edited after its run wrote it (counts that its histograms do
// not hold, a result of another spec, more operations than the run's
// schedule produced, bytes that are no result) is read
// through the checks of the run's own aggregation: every row of its cell
// is Invalid naming the run, the iteration fails, and no verdict (the
// 50 % slower variant's Regressed) comes out of it.
func TestCampaignRefusesATamperedReportWithInvalidRows(t *testing.T) {
	encode := func(t *testing.T, d *result.Document) []byte {
		data, err := protocol.EncodeResult(d)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	for _, tc := range []struct {
		name string
		// variant is the cell whose run's report is tampered with.
		variant string
		report  func(t *testing.T, run *v1alpha1.BenchmarkRun) []byte
		// want is in the rows' reason.
		want string
	}{
		{"edited counts", "slow", func(t *testing.T, run *v1alpha1.BenchmarkRun) []byte {
			d := campaignResultDoc(t, run, 1.5)
			d.Intervals[3].Operations[0].OK += 50 // the histogram still holds the old count
			return encode(t, d)
		}, "interval"},
		{"another spec", "slow", func(t *testing.T, run *v1alpha1.BenchmarkRun) []byte {
			other := run.DeepCopy()
			rate := *other.Spec.Workload.Load.Rate * 2
			other.Spec.Workload.Load.Rate = &rate
			return encode(t, campaignResultDoc(t, other, 1.5))
		}, "spec"},
		{"more than its schedule produced", "slow", func(t *testing.T, run *v1alpha1.BenchmarkRun) []byte {
			// A result of twice the run's rate, consistent in itself (its
			// histograms hold its counts), labelled with the run's spec:
			// only the schedule's arrivals can tell.
			busier := run.DeepCopy()
			rate := *busier.Spec.Workload.Load.Rate * 2
			busier.Spec.Workload.Load.Rate = &rate
			d := campaignResultDoc(t, busier, 1.5)
			run.Status.StartTime = busier.Status.StartTime // as campaignResultDoc sets the run's
			w := run.Spec.Workload.Resolved()
			spec, err := protocol.RecordedSpec(&w)
			if err != nil {
				t.Fatal(err)
			}
			d.Spec = spec
			return encode(t, d)
		}, "arrivals"},
		{"garbage in the baseline", "base", func(t *testing.T, _ *v1alpha1.BenchmarkRun) []byte {
			return []byte("not a gzipped result")
		}, "unreadable result"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testCampaign("tamper", 1, 2, axis("rate", "workload.load.rate", "base=50", "slow=100"))
			f := newFakeCampaign(t, c, interceptor.Funcs{})
			var tampered string
			for range 2 {
				f.settle()
				for _, run := range f.runs() {
					if run.IsFinished() {
						continue
					}
					if run.Labels[v1alpha1.LabelVariant] != tc.variant {
						finishCampaignRun(t, f.stored, &run, map[string]float64{"base": 1, "slow": 1.5}[run.Labels[v1alpha1.LabelVariant]])
						continue
					}
					tampered = run.Name
					data := tc.report(t, &run)
					cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ResultConfigMapName(&run), Namespace: run.Namespace,
						Labels: v1alpha1.RunLabels(&run)}, BinaryData: map[string][]byte{runreport.ReportKey: data}}
					writeReportAndSucceed(t, f.stored, &run, cm)
				}
			}
			f.settle()
			st := f.campaign().Status
			if len(st.Iterations) != 1 || st.Iterations[0].Outcome != v1alpha1.IterationFailed {
				t.Fatalf("iterations %+v; want one Failed", st.Iterations)
			}
			if st.Comparison == nil || len(st.Comparison.Rows) == 0 {
				t.Fatalf("comparison %+v; want Invalid rows", st.Comparison)
			}
			for _, row := range st.Comparison.Rows {
				if row.Verdict != v1alpha1.VerdictInvalid {
					t.Errorf("row %s %s: verdict %s; want Invalid", row.Variant, row.Metric, row.Verdict)
				}
			}
			report := &corev1.ConfigMap{}
			if err := f.stored.Get(context.Background(), client.ObjectKey{Namespace: c.Namespace, Name: st.Iterations[0].Report}, report); err != nil {
				t.Fatalf("the iteration's report: %v", err)
			}
			var table struct {
				Rows []struct{ Verdict, Reason string }
			}
			if err := json.Unmarshal([]byte(report.Data[comparison.ReportJSONKey]), &table); err != nil || len(table.Rows) == 0 {
				t.Fatalf("the iteration's report's rows (%v): %s", err, report.Data[comparison.ReportJSONKey])
			}
			for _, row := range table.Rows {
				if row.Verdict != "Invalid" || !strings.Contains(row.Reason, tampered) || !strings.Contains(row.Reason, tc.want) {
					t.Errorf("report row: verdict %s, reason %q; want Invalid naming run %s and %q", row.Verdict, row.Reason, tampered, tc.want)
				}
			}
			if cond := meta.FindStatusCondition(st.Conditions, v1alpha1.CampaignReady); cond == nil || !strings.Contains(cond.Message, tampered) {
				t.Errorf("Ready = %+v; want it to name run %s", cond, tampered)
			}
			if st.Verdict != v1alpha1.VerdictInvalid || st.Iterations[0].Verdict != v1alpha1.VerdictInvalid {
				t.Errorf("verdict %s (iteration %s); want Invalid: a tampered report claims nothing", st.Verdict, st.Iterations[0].Verdict)
			}
		})
	}
}
