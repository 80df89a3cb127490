package collectors_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/collectors"
	"github.com/spanbench/spanbench/internal/runtest"
)

// TestResultsCollectorServesTpmCAndCommittedTpmC: a consistent TPCC run
// has its tpmC and its committed tpmC (status.tpcc.committedTpmC) as
// series side by side; a run whose consistency checks failed has neither,
// only the count of failed conditions; a status written before
// committedTpmC existed has its tpmC and no committed series, never a 0.
func TestResultsCollectorServesTpmCAndCommittedTpmC(t *testing.T) {
	passed := []v1alpha1.TPCCCheckStatus{{Name: "W_YTD = sum(D_YTD)", Passed: true}}
	consistent := runtest.Run("consistent").InNamespace("bench").Obj()
	consistent.Status.TPCC = &v1alpha1.TPCCStatus{TpmC: "1523.0", CommittedTpmC: "1507.8", Checks: passed}
	inconsistent := runtest.Run("inconsistent").InNamespace("bench").Obj()
	inconsistent.Status.TPCC = &v1alpha1.TPCCStatus{TpmC: "1523.0", CommittedTpmC: "1507.8",
		Checks: append([]v1alpha1.TPCCCheckStatus{{Name: "D_NEXT_O_ID - 1 = max(O_ID)", Detail: "warehouse 1 district 2"}}, passed...)}
	older := runtest.Run("older").InNamespace("bench").Obj()
	older.Status.TPCC = &v1alpha1.TPCCStatus{TpmC: "98.5"}
	for _, run := range []*v1alpha1.BenchmarkRun{consistent, inconsistent, older} {
		run.Status.Overall = &v1alpha1.ResultFigures{Count: 1000, Throughput: "100.0"} // a finished run's figures
	}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(consistent, inconsistent, older).Build()
	want := `
# HELP spanbench_run_committed_tpmc spanbench_run_tpmc without the New-Orders rolled back by design: committed New-Order transactions per minute; absent when the consistency checks failed.
# TYPE spanbench_run_committed_tpmc gauge
spanbench_run_committed_tpmc{namespace="bench",run="consistent"} 1507.8
# HELP spanbench_run_consistency_failed TPC-C consistency conditions that failed after a finished TPCC run (0 when all held); absent when they were not checked.
# TYPE spanbench_run_consistency_failed gauge
spanbench_run_consistency_failed{namespace="bench",run="consistent"} 0
spanbench_run_consistency_failed{namespace="bench",run="inconsistent"} 1
# HELP spanbench_run_tpmc New-Order transactions per minute of a finished TPCC run, after the warm-up, across all runners; absent when its consistency checks failed.
# TYPE spanbench_run_tpmc gauge
spanbench_run_tpmc{namespace="bench",run="consistent"} 1523
spanbench_run_tpmc{namespace="bench",run="older"} 98.5
`
	if err := testutil.CollectAndCompare(&collectors.ResultsCollector{Reader: reader}, strings.NewReader(want),
		"spanbench_run_tpmc", "spanbench_run_committed_tpmc", "spanbench_run_consistency_failed"); err != nil {
		t.Error(err)
	}
}
