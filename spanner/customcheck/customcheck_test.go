package customcheck_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/customcheck"
)

// workload is a Custom workload whose query names a column its DDL does
// not create; only a SQL parser sees it.
const workload = `
type: Custom
load: {rate: 10}
custom:
  ddl:
  - CREATE TABLE Singers (SingerId INT64 NOT NULL, Name STRING(100)) PRIMARY KEY (SingerId)
  tables:
  - name: Singers
    rows: 10
operations:
- name: get-singer
  type: Query
  weight: 1
  custom:
    sql: SELECT Nickname FROM Singers WHERE SingerId = @id
    params:
    - name: id
      key: {table: Singers, column: SingerId}
`

// TestSQLChecksAreThisPackagesNotTheAPIs: the API's Validate, which links
// no SQL parser, admits a Custom workload whose statement names a column
// the DDL lacks; Workload, Spec and Run refuse it at the statement's
// field, and pass what the API refuses through unchanged.
func TestSQLChecksAreThisPackagesNotTheAPIs(t *testing.T) {
	var w v1alpha1.WorkloadSpec
	if err := yaml.UnmarshalStrict([]byte(workload), &w); err != nil {
		t.Fatal(err)
	}
	w.Duration = &metav1.Duration{Duration: time.Second}
	w.Interval = &metav1.Duration{Duration: time.Second}
	w = w.Resolved()
	path := field.NewPath("spec", "workload")
	if errs := w.Validate(path); len(errs) > 0 {
		t.Fatalf("the API's Validate refuses what only the SQL checks should: %v", errs)
	}
	const want = "spec.workload.operations[0].custom.sql"
	refused := func(name string, errs field.ErrorList) {
		t.Helper()
		if len(errs) != 1 || errs[0].Field != want || !strings.Contains(errs[0].Detail, "Nickname") {
			t.Errorf("%s: %v; want one error at %s naming the column Nickname", name, errs, want)
		}
	}
	refused("Workload", customcheck.Workload(path, &w, v1alpha1.DialectGoogleSQL))
	run := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "custom"}}
	run.Spec.Workload = w
	if err := yaml.UnmarshalStrict([]byte("{project: my-project, instance: {name: bench}, database: bench}"), &run.Spec.Target); err != nil {
		t.Fatal(err)
	}
	refused("Spec", customcheck.Spec(field.NewPath("spec"), &run.Spec))
	refused("Run", customcheck.Run(run))

	w.Custom.DDL = nil // refused by the API (required), and then not parsed
	errs := customcheck.Workload(path, &w, v1alpha1.DialectGoogleSQL)
	if apiErrs := w.Validate(path); len(errs) != len(apiErrs) || len(errs) == 0 {
		t.Errorf("Workload with the API's refusal: %v; want exactly the API's %v", errs, apiErrs)
	}
}
