package protocol

import (
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
)

// TestFileExpectationReadsACustomSpecInItsTargetsDialect: `spanbench
// report` on the result of a PostgreSQL Custom run validates the recorded
// spec as PostgreSQL (the dialect the document records), not GoogleSQL.
func TestFileExpectationReadsACustomSpecInItsTargetsDialect(t *testing.T) {
	var w v1alpha1.WorkloadSpec
	err := yaml.UnmarshalStrict([]byte(`
type: Custom
custom:
  ddl: ["CREATE TABLE t (id bigint NOT NULL, v varchar, PRIMARY KEY (id))"]
  tables: [{name: t, rows: 10}]
operations:
- name: get
  type: Query
  weight: 1
  custom:
    sql: SELECT v FROM t WHERE id = $1
    params: [{name: p1, key: {table: t, column: id}}]
load: {rate: 10}
`), &w)
	if err != nil {
		t.Fatal(err)
	}
	w.Duration = &metav1.Duration{Duration: time.Minute}
	w = w.Resolved()
	js, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := result.NewSpec(js)
	if err != nil {
		t.Fatal(err)
	}
	d := &result.Document{Run: "r", Spec: spec, Start: time.Now(), Shards: []result.Shard{{Index: 0, Count: 1}},
		Target: result.Target{Dialect: string(v1alpha1.DialectPostgreSQL)}}
	if _, err := FileExpectation(d); err != nil {
		t.Fatalf("FileExpectation of a PostgreSQL Custom run's result: %v", err)
	}
}
