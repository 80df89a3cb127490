package apivalidation

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

const immutableSpec = `Invalid value: "object": spec: immutable once the run is created; create a new BenchmarkRun to run with other settings`

// createMinimal creates testdata/minimal.yaml as name and returns it typed.
func createMinimal(t *testing.T, name string) *v1alpha1.BenchmarkRun {
	t.Helper()
	obj := object(t, manifest(t, "minimal.yaml", ""), name, "minimal")
	if err := createStrict(t, obj); err != nil {
		t.Fatalf("creating the minimal run: %v", err)
	}
	t.Cleanup(func() { deleteIfCreated(t, obj) })
	run := &v1alpha1.BenchmarkRun{}
	if err := k8sClient.Get(bounded(t), keyOf(obj), run); err != nil {
		t.Fatalf("reading the run back: %v", err)
	}
	return run
}

func TestSpecIsImmutable(t *testing.T) {
	run := createMinimal(t, "immutable")

	t.Run("an update that changes the spec is refused", func(t *testing.T) {
		changed := run.DeepCopy()
		changed.Spec.Workload.Load.Rate = ptr.To[int32](200)
		err := k8sClient.Update(bounded(t), changed)
		want := []cause{{"spec", immutableSpec}}
		if diff := cmp.Diff(want, causesOf(err)); diff != "" {
			t.Errorf("changing spec.workload.load.rate: refusal differs (-want +got):\n%s\nerror: %v", diff, err)
		}
	})

	t.Run("a merge patch that adds a spec field is refused", func(t *testing.T) {
		// What `kubectl apply` of an edited manifest sends.
		patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"runners":{"replicas":3}}}`))
		err := k8sClient.Patch(bounded(t), run.DeepCopy(), patch)
		want := []cause{{"spec", immutableSpec}}
		if diff := cmp.Diff(want, causesOf(err)); diff != "" {
			t.Errorf("patching spec.runners.replicas: refusal differs (-want +got):\n%s\nerror: %v", diff, err)
		}
	})

	t.Run("metadata can change through a patch", func(t *testing.T) {
		// What a controller adding a finalizer, or kubectl label, sends.
		labelled := run.DeepCopy()
		labelled.Labels = map[string]string{"experiment": "single-vs-multi-region"}
		labelled.Finalizers = []string{"bench.spanbench.io/test"}
		if err := k8sClient.Patch(bounded(t), labelled, client.MergeFrom(run)); err != nil {
			t.Fatalf("patching labels and a finalizer was refused: %v", err)
		}
		unlabelled := labelled.DeepCopy()
		unlabelled.Finalizers = nil
		if err := k8sClient.Patch(bounded(t), unlabelled, client.MergeFrom(labelled)); err != nil {
			t.Fatalf("removing the finalizer was refused: %v", err)
		}
		if unlabelled.Generation != run.Generation {
			t.Errorf("metadata changes bumped metadata.generation from %d to %d", run.Generation, unlabelled.Generation)
		}
	})

	t.Run("a typed update re-encodes the spec and is refused", func(t *testing.T) {
		// The rule compares the stored JSON: a typed client re-encodes
		// durations (1m becomes 1m0s), so an Update of a typed object
		// changes the spec even when no field did. Controllers must change
		// a run's metadata with a patch, as above.
		relabelled := &v1alpha1.BenchmarkRun{}
		if err := k8sClient.Get(bounded(t), keyOf(run), relabelled); err != nil {
			t.Fatalf("reading the run: %v", err)
		}
		relabelled.Labels = map[string]string{"only": "metadata"}
		err := k8sClient.Update(bounded(t), relabelled)
		want := []cause{{"spec", immutableSpec}}
		if diff := cmp.Diff(want, causesOf(err)); diff != "" {
			t.Errorf("a typed Update: refusal differs (-want +got):\n%s\nerror: %v", diff, err)
		}
	})
}

// fullStatus is a finished run's status as the controller writes it, built
// with the helpers it uses.
func fullStatus(run *v1alpha1.BenchmarkRun, now time.Time) v1alpha1.BenchmarkRunStatus {
	r := run.DeepCopy()
	r.SetCondition(v1alpha1.ConditionTargetReady, metav1.ConditionTrue, v1alpha1.ReasonTargetAvailable, "instance bench (asia1, 3 nodes), database ycsb", now)
	r.SetCondition(v1alpha1.ConditionDatasetLoaded, metav1.ConditionTrue, v1alpha1.ReasonDatasetReady, "1000 rows match", now)
	r.SetCondition(v1alpha1.ConditionRunnersReady, metav1.ConditionTrue, v1alpha1.ReasonAllRunnersReady, "4/4 runners ready", now)
	r.SetCondition(v1alpha1.ConditionLoadCompleted, metav1.ConditionTrue, v1alpha1.ReasonShardsReported, "4/4 shard results", now)
	r.MarkSucceeded(false, "merged 4 shards", now)
	start := metav1.NewTime(now.Add(-time.Minute))
	warm := metav1.NewTime(start.Add(10 * time.Second))
	latency := &v1alpha1.LatencySummary{
		P50:  v1alpha1.LatencyFromMicros(4211),
		P90:  v1alpha1.LatencyFromMicros(7730),
		P99:  v1alpha1.LatencyFromMicros(12345),
		P999: v1alpha1.LatencyFromMicros(40102),
		Max:  v1alpha1.LatencyFromMicros(1_250_000),
	}
	r.Status.StartTime = &start
	r.Status.WarmUpEnd = &warm
	r.Status.WarmUpStable = ptr.To(true)
	r.Status.StartSkew = &metav1.Duration{Duration: 3200 * time.Microsecond}
	r.Status.Operations = []v1alpha1.OperationResult{{
		Name: "read",
		Type: v1alpha1.OpRead,
		ResultFigures: v1alpha1.ResultFigures{
			Count: 48120, Throughput: v1alpha1.FormatThroughput(802.0), Latency: latency,
			Errors: 3, ErrorsByCode: map[string]int64{"DeadlineExceeded": 2, "Unavailable": 1},
			Retries: 0, Missed: 7,
		},
	}}
	r.Status.Overall = &v1alpha1.ResultFigures{
		Count: 48120, Throughput: v1alpha1.FormatThroughput(802.04), Latency: latency,
		Errors: 3, ErrorsByCode: map[string]int64{"DeadlineExceeded": 2, "Unavailable": 1}, Missed: 7,
	}
	// The final figures the columns show once the run ended (live while
	// it runs: docs/benchmarkrun.md, "Live progress").
	r.Status.Progress = &v1alpha1.RunProgress{
		Elapsed: metav1.Duration{Duration: 50 * time.Second}, Total: metav1.Duration{Duration: 50 * time.Second},
		Operations: 48120, Errors: 3, Throughput: v1alpha1.FormatThroughput(802.0),
		P99: &metav1.Duration{Duration: 12345 * time.Microsecond}, Summary: "50s/50s", Achieved: "802.0/s", Latency: "12.345ms",
	}
	r.Status.Environment = &v1alpha1.RunEnvironment{
		Endpoint: v1alpha1.EndpointSpanner, SpanbenchVersion: "v0.1.0", ClientVersion: "v1.96.1",
		GoVersion: "go1.26.0", InstanceConfig: "asia1", Nodes: ptr.To[int32](3), ProcessingUnits: ptr.To[int32](3000),
		Runners: 4, RunnerRegion: "asia-northeast1",
	}
	r.Status.Report = &v1alpha1.ReportReference{ConfigMapName: v1alpha1.ResultConfigMapName(r), Key: "result.json"}
	r.Status.Dataset = &v1alpha1.DatasetStatus{Table: "usertable", Rows: 1000, Loaded: 1000, RowsPerSecond: "250.0",
		DDL: []string{"CREATE TABLE usertable (id STRING(MAX) NOT NULL) PRIMARY KEY (id)"}, Source: v1alpha1.DatasetLoaded,
		Tables: []v1alpha1.DatasetTableStatus{{Name: "usertable", Rows: 1000, Source: v1alpha1.DatasetLoaded}}}
	end := metav1.NewTime(now)
	r.Status.Cost = &v1alpha1.RunCost{Currency: "USD", Catalog: "override spanbench-system/prices (taken 2026-11-29)",
		Estimate: &v1alpha1.CostFigure{Amount: "9.75"}, Holding: v1alpha1.CostHoldingExisting, HeldFrom: &start, HeldTo: &end,
		Instance: &v1alpha1.CostFigure{Amount: "0.15"}, Storage: &v1alpha1.CostFigure{Amount: "0.000012"},
		Runners: &v1alpha1.CostFigure{UnknownReason: "no runner vCPU-hour price"}, Total: &v1alpha1.CostFigure{Amount: "0.150012"},
		PerMillionOperations: &v1alpha1.CostFigure{Amount: "2.60"}, Summary: "USD 0.150012", Notes: []string{"3000 PU, Existing"}}
	return r.Status
}

func TestStatusRoundTripsAndPrints(t *testing.T) {
	run := createMinimal(t, "finished")
	now := time.Now().Truncate(time.Second)
	run.Status = fullStatus(run, now)
	want := run.Status.DeepCopy()
	if err := k8sClient.Status().Update(bounded(t), run); err != nil {
		t.Fatalf("writing a complete status was refused: %v", err)
	}

	got := &v1alpha1.BenchmarkRun{}
	if err := k8sClient.Get(bounded(t), keyOf(run), got); err != nil {
		t.Fatalf("reading the run back: %v", err)
	}
	if diff := cmp.Diff(*want, got.Status); diff != "" {
		t.Errorf("the stored status differs from the one written (-written +stored):\n%s", diff)
	}

	table := getTable(t, got.Name)
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	wantNames := []string{"Name", "Phase", "Loaded", "Rows", "Load Rate", "Config", "Rate", "Progress", "Achieved", "P99", "Errors", "Capacity", "Cost", "Age", "Succeeded", "Reason"}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Fatalf("printer columns differ (-want +got):\n%s", diff)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("the table has %d rows, want 1", len(table.Rows))
	}
	cells := table.Rows[0].Cells
	// Age (cells[13]) depends on the clock. Capacity is empty: the run is
	// no search.
	gotCells := fmt.Sprint(append(cells[:13:13], cells[14:]...))
	wantCells := fmt.Sprint([]any{"finished", "Succeeded", int64(1000), int64(1000), "250.0", nil, int64(100), "50s/50s", "802.0/s", "12.345ms", int64(3), nil, "USD 0.150012", "True", "Completed"})
	if gotCells != wantCells {
		t.Errorf("printer column cells:\n got: %s\nwant: %s", gotCells, wantCells)
	}
}

func TestStatusRefusesMalformedFigures(t *testing.T) {
	run := createMinimal(t, "bad-status")
	run.Status.Overall = &v1alpha1.ResultFigures{Throughput: "fast"}
	err := k8sClient.Status().Update(bounded(t), run)
	want := []cause{{"status.overall.throughput", `Invalid value: "fast": overall.throughput in body should match '^[0-9]+([.][0-9]+)?$'`}}
	if diff := cmp.Diff(want, causesOf(err)); diff != "" {
		t.Errorf("a non-numeric throughput: refusal differs (-want +got):\n%s\nerror: %v", diff, err)
	}
}

// getTable reads a run as kubectl get does: as a server-side Table.
func getTable(t *testing.T, name string) *metav1.Table {
	t.Helper()
	return getTableOf(t, "benchmarkruns", name)
}

// getTableOf reads an object of resource as kubectl get does.
func getTableOf(t *testing.T, resource, name string) *metav1.Table {
	t.Helper()
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatalf("building an HTTP client: %v", err)
	}
	url := strings.TrimSuffix(cfg.Host, "/") + "/apis/bench.spanbench.io/v1alpha1/namespaces/default/" + resource + "/" + name
	req, err := http.NewRequestWithContext(bounded(t), http.MethodGet, url, nil)
	if err != nil {
		t.Fatalf("building the request: %v", err)
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("getting the run as a table: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("getting the run as a table: HTTP %d, %v: %s", resp.StatusCode, err, body)
	}
	table := &metav1.Table{}
	if err := json.Unmarshal(body, table); err != nil {
		t.Fatalf("decoding the table: %v\n%s", err, body)
	}
	return table
}

func TestCampaignTemplateIsEditable(t *testing.T) {
	// The run spec's immutability is BenchmarkRun.spec's rule, not its
	// type's: a campaign's template, of the same type, is edited to change
	// the next iteration.
	obj := object(t, manifest(t, "campaign.yaml", ""), "editable", "campaign")
	if err := createStrict(t, obj); err != nil {
		t.Fatalf("creating the campaign: %v", err)
	}
	t.Cleanup(func() { deleteIfCreated(t, obj) })
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"template":{"spec":{"runners":{"replicas":3}}}}}`))
	if err := k8sClient.Patch(bounded(t), obj, patch); err != nil {
		t.Errorf("editing the campaign's template.spec.runners.replicas was refused: %v", err)
	}
}
