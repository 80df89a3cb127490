package protocol

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/runner/protocol/chunks"
)

func ycsb(rows int64, duration time.Duration, ops ...v1alpha1.OperationSpec) v1alpha1.WorkloadSpec {
	rate := int32(200)
	w := v1alpha1.WorkloadSpec{
		Type: v1alpha1.WorkloadYCSB, Dataset: v1alpha1.DatasetSpec{Rows: &rows}, Operations: ops,
		Load: v1alpha1.LoadSpec{Rate: &rate}, Duration: &metav1.Duration{Duration: duration},
		Interval: &metav1.Duration{Duration: time.Second},
	}
	return w.Resolved()
}

var (
	readOp   = v1alpha1.OperationSpec{Type: v1alpha1.OpRead, Weight: 3}
	updateOp = v1alpha1.OperationSpec{Type: v1alpha1.OpUpdate, Weight: 1}
)

func goodControl() Control {
	return Control{Run: "r", Namespace: "ns", Shards: 3, Region: "asia-northeast1",
		Workload: ycsb(1000, time.Minute, readOp, updateOp),
		Target:   v1alpha1.TargetSpec{Project: "spanbench-test", Instance: v1alpha1.InstanceSpec{Name: "test"}, Database: "bench"}}
}

func TestDecodeControlReadsWhatEncodeControlWrites(t *testing.T) {
	want := goodControl()
	b, err := EncodeControl(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeControl([]byte(b))
	if err != nil {
		t.Fatalf("DecodeControl of a good document: %v", err)
	}
	want.Version = Version
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Fatalf("decoded control differs (-want +got):\n%s", diff)
	}
}

func TestDecodeControlRefusesBadInputNamingTheProblem(t *testing.T) {
	good, err := EncodeControl(goodControl())
	if err != nil {
		t.Fatal(err)
	}
	edit := func(old, new string) string { return strings.Replace(good, old, new, 1) }
	cases := map[string]struct{ doc, want string }{
		"empty":          {"", "unexpected end of JSON input"},
		"trailing data":  {good + "{}", "after top-level value"},
		"newer version":  {edit(`"Version":1`, `"Version":2`), "Version: Invalid value: 2: this pod speaks protocol version 1"},
		"unknown field":  {edit(`"Shards"`, `"Shard":1,"Shards"`), `unknown field "Shard"`},
		"duplicate":      {edit(`"Shards":3`, `"Shards":3,"Shards":4`), `duplicate field "Shards"`},
		"wrong type":     {edit(`"Shards":3`, `"Shards":"3"`), "Shards"},
		"no run":         {edit(`"Run":"r"`, `"Run":""`), "Run: Required value"},
		"no shards":      {edit(`"Shards":3`, `"Shards":0`), "Shards: Invalid value: 0"},
		"many loaders":   {edit(`"loaderPods":1`, `"loaderPods":101`), "Workload.dataset.loaderPods: Invalid value: 101"},
		"bad target":     {edit(`"project":"spanbench-test"`, `"project":"X"`), "Target.project"},
		"bad workload":   {edit(`"weight":3`, `"weight":-3`), "Workload.operations[0].weight"},
		"case-different": {edit(`"Run"`, `"run"`), `unknown field "run"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeControl([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("DecodeControl returned %v; want an error saying %q", err, tc.want)
			}
		})
	}
}

func TestSliceBoundsCoverEveryKeyOnce(t *testing.T) {
	for _, rows := range []int64{0, 1, 2, 7, 1001, 40_000_000, 1 << 62} {
		for _, n := range []int{1, 2, 3, 7, 1000} {
			var next int64
			for i := range n {
				from, to := SliceBounds(rows, i, n)
				if from != next || to < from {
					t.Fatalf("rows %d, shards %d: shard %d gets [%d, %d); want it to start at %d", rows, n, i, from, to, next)
				}
				if size := to - from; size < rows/int64(n) || size > rows/int64(n)+1 {
					t.Fatalf("rows %d, shards %d: shard %d gets %d rows; want %d or one more", rows, n, i, size, rows/int64(n))
				}
				next = to
			}
			if next != rows {
				t.Fatalf("rows %d, shards %d: the slices end at %d", rows, n, next)
			}
		}
	}
}

func TestProtocolNamesFitAtTheRunNameLimit(t *testing.T) {
	if got := ShardConfigMapName("tokyo", 12); got != "tokyo-shard-12" {
		t.Errorf("ShardConfigMapName = %q, want tokyo-shard-12", got)
	}
	run := strings.Repeat("a", v1alpha1.MaxRunNameLength)
	for _, name := range []string{ShardConfigMapName(run, 999), ShardChunkNames(run, 999)[chunks.MaxShardChunks-1], LoaderConfigMapName(run, 99), ControlConfigMapName(run)} {
		if len(name) > 63 {
			t.Errorf("%s is %d characters for a run named at the limit, over 63", name, len(name))
		}
	}
}

func TestEncodeControlLeavesTheCredentialsOut(t *testing.T) {
	c := goodControl()
	c.Target.Credentials = &v1alpha1.CredentialsSpec{SecretName: "spanner-key", Key: "key.json"}
	b, err := EncodeControl(c)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b, "spanner-key") || strings.Contains(b, "key.json") {
		t.Errorf("the control document names the credentials Secret: %s", b)
	}
	if c.Target.Credentials == nil {
		t.Error("EncodeControl cleared the caller's credentials reference")
	}
}

func TestStartTimeRoundTripsAndRefusesGarbage(t *testing.T) {
	want := time.Date(2026, 11, 24, 1, 2, 3, 456_000_000, time.FixedZone("JST", 9*3600))
	got, ok, err := DecodeStart(EncodeStart(want))
	if err != nil || !ok || !got.Equal(want) {
		t.Fatalf("DecodeStart(EncodeStart(%s)) = %s, %v, %v; want the same instant", want, got, ok, err)
	}
	if _, ok, err := DecodeStart(map[string]string{}); ok || err != nil {
		t.Errorf("DecodeStart of a map without a start time: ok %v, err %v; want not yet, no error", ok, err)
	}
	_, _, err = DecodeStart(map[string]string{KeyStartTime: "tomorrow"})
	var de *DecodeError
	if !errors.As(err, &de) || de.Key != KeyStartTime {
		t.Errorf("DecodeStart of %q: %v; want a *DecodeError naming %s", "tomorrow", err, KeyStartTime)
	}
}

// customControl is a control document of a Custom workload of two tables,
// Albums interleaved in Singers, whose loaders load loadTables.
func customControl(t *testing.T, loadTables ...string) Control {
	t.Helper()
	var w v1alpha1.WorkloadSpec
	err := yaml.UnmarshalStrict([]byte(`
type: Custom
custom:
  ddl:
  - CREATE TABLE Singers (SingerId INT64 NOT NULL, Name STRING(100)) PRIMARY KEY (SingerId)
  - CREATE TABLE Albums (SingerId INT64 NOT NULL, AlbumId INT64 NOT NULL) PRIMARY KEY (SingerId, AlbumId), INTERLEAVE IN PARENT Singers ON DELETE CASCADE
  tables: [{name: Singers, rows: 10}, {name: Albums, rowsPerParent: 2}]
operations:
- name: get
  type: ReadRows
  weight: 1
  custom:
    read: {table: Singers, columns: [Name], shape: Key}
load: {rate: 10}
`), &w)
	if err != nil {
		t.Fatal(err)
	}
	w.Duration = &metav1.Duration{Duration: time.Minute}
	c := goodControl()
	c.Workload, c.LoadTables = w.Resolved(), loadTables
	return c
}

// TestDecodeControlCarriesTheTablesToLoad: the tables a Custom dataset's
// loaders load travel in LoadTables; a list naming a table the workload
// does not have, one named twice, or any list for a built-in workload
// (one marker) is refused, naming the entry.
func TestDecodeControlCarriesTheTablesToLoad(t *testing.T) {
	want := customControl(t, "Albums")
	b, err := EncodeControl(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeControl([]byte(b))
	if err != nil {
		t.Fatalf("DecodeControl of a Custom document loading Albums: %v", err)
	}
	if !slices.Equal(got.LoadTables, []string{"Albums"}) {
		t.Errorf("decoded LoadTables = %q, want [Albums]", got.LoadTables)
	}
	ycsbWithTables := goodControl()
	ycsbWithTables.LoadTables = []string{"usertable"}
	cases := map[string]struct {
		c    Control
		want string
	}{
		"unknown table":   {customControl(t, "Albums", "Tracks"), `LoadTables[1]: Unsupported value: "Tracks": supported values: "Singers", "Albums"`},
		"named twice":     {customControl(t, "Albums", "Albums"), `LoadTables[1]: Duplicate value: "Albums"`},
		"built-in tables": {ycsbWithTables, "LoadTables: Forbidden: only a Custom workload's dataset has a marker per table"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			doc, err := EncodeControl(tc.c)
			if err != nil {
				t.Fatal(err)
			}
			_, err = DecodeControl([]byte(doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("DecodeControl returned %v; want an error saying %q", err, tc.want)
			}
		})
	}
}
