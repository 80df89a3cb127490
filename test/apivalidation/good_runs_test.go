package apivalidation

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// goodRun is a manifest the API server must accept and store as sent.
type goodRun struct {
	name  string
	base  string
	patch string
}

var goodRuns = []goodRun{
	{name: "minimal", base: "minimal.yaml"},
	// 7,200 rows at 1 a second take 2h: exactly the load deadline.
	{name: "load-cap-within-its-deadline", base: "minimal.yaml", patch: `
spec:
  deadlines:
    load: 2h
  workload:
    dataset:
      rows: 7200
      maxRowsPerSecond: 1`},
	{name: "full", base: "full.yaml"},
	{name: "custom", base: "custom.yaml"},
	{name: "custom-postgresql", base: "custom-postgresql.yaml"},
	{name: "custom-postgresql-quoted", base: "custom-postgresql-quoted.yaml"},
	{name: "steps-with-auto-warm-up", base: "minimal.yaml", patch: `
spec:
  workload:
    duration: null
    load:
      rate: null
      steps:
      - rate: 4000
        duration: 1m
      - rate: 8000
        duration: 1m
    warmUp:
      mode: Auto
      window: 3
      tolerancePercent: 10
      max: 90s`},
	{name: "ramp-on-fresh-database", base: "minimal.yaml", patch: `
spec:
  workload:
    load:
      rate: null
      ramp:
        from: 2000
        to: 30000
        duration: 10m
    duration: 30m
    warmUp:
      mode: Auto`},
	{name: "closed-loop", base: "minimal.yaml", patch: `
spec:
  workload:
    load:
      rate: null
      concurrency: 64
      maxInFlight: 64`},
	{name: "tweet-with-index-query", base: "minimal.yaml", patch: `
spec:
  workload:
    type: Tweet
    operations:
    - type: Insert
      weight: 90
      commit:
        maxCommitDelay: 500ms
    - name: insert-batch
      type: Insert
      weight: 10
      rows: 100
    - type: QueryBySort
      weight: 9
      rows: 10
    - type: FullScan
      weight: 1
      priority: Low
    - name: stale-read
      type: Read
      weight: 5
      staleness:
        exact: 15s`},
	// An Insert of rows whose text fills a commit's size to the byte
	// (9 rows of 10 fields of 1,000,000 bytes: 90,000,000).
	{name: "insert-rows-at-a-commit-size", base: "minimal.yaml", patch: `
spec:
  workload:
    dataset:
      fieldBytes: 1000000
      batchRows: 9
    operations:
    - type: Insert
      weight: 1
      rows: 9`},
	{name: "processing-units-below-a-node", base: "minimal.yaml", patch: `
spec:
  target:
    instance:
      mode: Ephemeral
      config: regional-asia-northeast1
      processingUnits: 500`},
	{name: "ephemeral-multi-region-pre-split", base: "minimal.yaml", patch: `
spec:
  target:
    instance:
      mode: Ephemeral
      config: nam-eur-asia1
      nodes: 3
      edition: EnterprisePlus
    splitPoints:
      count: 30`},
	{name: "explicit-split-points", base: "minimal.yaml", patch: `
spec:
  target:
    splitPoints:
      keys: ["40000000", "80000000", "c0000000"]`},
	{name: "largest-ycsb-batch-spanner-commits", base: "minimal.yaml", patch: `
spec:
  workload:
    dataset:
      batchRows: 7272`},
	{name: "eight-loader-pods", base: "minimal.yaml", patch: `
spec:
  workload:
    dataset:
      rows: 40000000
      loaderPods: 8`},
	{name: "postgresql-dialect", base: "minimal.yaml", patch: `
spec:
  target:
    dialect: PostgreSQL`},
	{name: "processing-units-of-whole-nodes", base: "minimal.yaml", patch: `
spec:
  target:
    instance:
      processingUnits: 2000`},
	{name: "fractional-and-microsecond-durations", base: "minimal.yaml", patch: `
spec:
  workload:
    duration: 1.5h
    interval: 2500000us
    warmUp:
      mode: Fixed
      duration: 1h29m57.5s`},
	{name: "same-type-named-apart", base: "minimal.yaml", patch: `
spec:
  workload:
    operations:
    - name: read-sql
      type: Read
      weight: 1
      api: SQL
    - name: read-api
      type: Read
      weight: 1
      api: Read`},
}

// admitUnchanged creates obj, which must be good, deletes it when the test
// ends, and asserts that the API server stored its spec as sent: nothing
// pruned, nothing defaulted, so what a user sends is what the controller
// and the report see. It returns obj's JSON, for the Go validator.
func admitUnchanged(t *testing.T, obj *unstructured.Unstructured) []byte {
	t.Helper()
	sent := obj.DeepCopy()
	js, err := obj.MarshalJSON()
	if err != nil {
		t.Fatalf("encoding the manifest: %v", err)
	}
	if err := createStrict(t, obj); err != nil {
		t.Fatalf("the API server refused a good %s: %v", obj.GetKind(), err)
	}
	t.Cleanup(func() { deleteIfCreated(t, obj) })
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(obj.GroupVersionKind())
	if err := k8sClient.Get(bounded(t), keyOf(obj), stored); err != nil {
		t.Fatalf("reading the %s back: %v", obj.GetKind(), err)
	}
	if diff := cmp.Diff(sent.Object["spec"], stored.Object["spec"]); diff != "" {
		t.Errorf("the stored spec differs from the manifest (pruned or defaulted fields?) (-sent +stored):\n%s", diff)
	}
	return js
}

func TestAdmissionAcceptsGoodRuns(t *testing.T) {
	for _, tc := range slices.Concat(goodRuns, boundedGoodRuns, tpccGoodRuns, streamsGoodRuns, leftoverGoodRuns) {
		t.Run(tc.name, func(t *testing.T) {
			js := admitUnchanged(t, object(t, manifest(t, tc.base, tc.patch), tc.name, strings.TrimSuffix(tc.base, ".yaml")))
			errs, decodeErr := goValidate(js)
			if decodeErr != nil {
				t.Fatalf("the CLI cannot decode a manifest the API server accepts: %v", decodeErr)
			}
			if len(errs) > 0 {
				t.Errorf("BenchmarkRun.Validate refuses a manifest the API server accepts: %v", errs)
			}
		})
	}
}
