package v1alpha1

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func dur(s string) *metav1.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return &metav1.Duration{Duration: d}
}

// goodWorkload is the smallest valid workload: one read at 800/s for 1m.
func goodWorkload() WorkloadSpec {
	return WorkloadSpec{
		Type:       WorkloadYCSB,
		Operations: []OperationSpec{{Type: OpRead, Weight: 3}, {Type: OpUpdate, Weight: 1}},
		Load:       LoadSpec{Rate: ptr.To[int32](800)},
		Duration:   dur("1m"),
	}
}

// TestResolved checks the workload's one defaulting rule: Resolved fills
// what was left out, keeps what was set, never changes its input (it may be
// a cached object), and resolving twice changes nothing.
func TestResolved(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input func() WorkloadSpec
		want  func() WorkloadSpec
	}{{
		name: "every optional field filled",
		input: func() WorkloadSpec {
			w := goodWorkload()
			w.Operations = append(w.Operations,
				OperationSpec{Type: OpScan, Weight: 1},
				OperationSpec{Name: "rmw", Type: OpReadModifyWrite, Weight: 1, Keys: KeysZipfian})
			w.WarmUp = &WarmUpSpec{Mode: WarmUpAuto}
			return w
		},
		want: func() WorkloadSpec {
			return WorkloadSpec{
				Type: WorkloadYCSB,
				Dataset: DatasetSpec{
					Rows: ptr.To(DefaultDatasetRows), FieldBytes: ptr.To(DefaultFieldBytes),
					BatchRows: ptr.To(DefaultBatchRows), Loaders: ptr.To(DefaultLoaders), LoaderPods: ptr.To(DefaultLoaderPods),
				},
				Operations: []OperationSpec{
					{Name: "read", Type: OpRead, Weight: 3, API: APIRead, Keys: KeysUniform},
					{Name: "update", Type: OpUpdate, Weight: 1, WritePath: WriteMutation, Keys: KeysUniform},
					{Name: "scan", Type: OpScan, Weight: 1, API: APIRead, Rows: ptr.To(DefaultRows), Keys: KeysUniform},
					{Name: "rmw", Type: OpReadModifyWrite, Weight: 1, Keys: KeysZipfian},
				},
				Load:     LoadSpec{Rate: ptr.To[int32](800), Arrivals: ArrivalsUniform, MaxInFlight: ptr.To(DefaultMaxInFlight)},
				Duration: dur("1m"),
				WarmUp: &WarmUpSpec{
					Mode: WarmUpAuto, Window: ptr.To(DefaultWarmUpWindow),
					TolerancePercent: ptr.To(DefaultWarmUpTolerance), Max: dur("30s"),
				},
				Interval: &metav1.Duration{Duration: DefaultInterval},
			}
		},
	}, {
		name: "set fields kept, closed loop without arrivals, fixed warm-up without auto fields",
		input: func() WorkloadSpec {
			w := goodWorkload()
			w.Operations = []OperationSpec{{Name: "get", Type: OpRead, Weight: 1, API: APISQL, Keys: KeysLatest}}
			w.Load = LoadSpec{Concurrency: ptr.To[int32](8), MaxInFlight: ptr.To[int32](8)}
			w.Dataset = DatasetSpec{Rows: ptr.To[int64](1), FieldBytes: ptr.To[int32](10), BatchRows: ptr.To[int32](5),
				Loaders: ptr.To[int32](2), LoaderPods: ptr.To[int32](3)}
			w.Interval = dur("5s")
			w.WarmUp = &WarmUpSpec{Mode: WarmUpFixed, Duration: dur("10s")}
			return w
		},
		want: func() WorkloadSpec {
			w := goodWorkload()
			w.Operations = []OperationSpec{{Name: "get", Type: OpRead, Weight: 1, API: APISQL, Keys: KeysLatest}}
			w.Load = LoadSpec{Concurrency: ptr.To[int32](8), MaxInFlight: ptr.To[int32](8)}
			w.Dataset = DatasetSpec{Rows: ptr.To[int64](1), FieldBytes: ptr.To[int32](10), BatchRows: ptr.To[int32](5),
				Loaders: ptr.To[int32](2), LoaderPods: ptr.To[int32](3)}
			w.Interval = dur("5s")
			w.WarmUp = &WarmUpSpec{Mode: WarmUpFixed, Duration: dur("10s")}
			return w
		},
	}, {
		name: "no warm-up is warm-up None",
		input: func() WorkloadSpec {
			w := goodWorkload()
			w.Operations = w.Operations[:1]
			return w
		},
		want: func() WorkloadSpec {
			w := goodWorkload()
			w.Operations = []OperationSpec{{Name: "read", Type: OpRead, Weight: 3, API: APIRead, Keys: KeysUniform}}
			w.Dataset = DatasetSpec{Rows: ptr.To(DefaultDatasetRows), FieldBytes: ptr.To(DefaultFieldBytes),
				BatchRows: ptr.To(DefaultBatchRows), Loaders: ptr.To(DefaultLoaders), LoaderPods: ptr.To(DefaultLoaderPods)}
			w.Load = LoadSpec{Rate: ptr.To[int32](800), Arrivals: ArrivalsUniform, MaxInFlight: ptr.To(DefaultMaxInFlight)}
			w.WarmUp = &WarmUpSpec{Mode: WarmUpNone}
			w.Interval = &metav1.Duration{Duration: DefaultInterval}
			return w
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.input()
			got := in.Resolved()
			if diff := cmp.Diff(tc.want(), got); diff != "" {
				t.Errorf("Resolved (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.input(), in); diff != "" {
				t.Errorf("Resolved changed its input, which may be a cached object (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(got, got.Resolved()); diff != "" {
				t.Errorf("resolving a resolved workload changed it (-once +twice):\n%s", diff)
			}
			if errs := got.Validate(field.NewPath("workload")); len(errs) > 0 {
				t.Errorf("a resolved good workload does not validate: %v", errs)
			}
		})
	}
}

func TestOperationDefaultNameIsKebabCase(t *testing.T) {
	for typ, want := range map[OperationType]string{
		OpRead: "read", OpReadKeys: "read-keys", OpReadModifyWrite: "read-modify-write",
		OpQueryBySort: "query-by-sort", OpFullScan: "full-scan",
	} {
		if got := typ.DefaultName(); got != want {
			t.Errorf("%s.DefaultName() = %q, want %q", typ, got, want)
		}
	}
}

func TestValidateAcceptsGoodWorkloadsBeforeAndAfterResolved(t *testing.T) {
	for name, mutate := range map[string]func(*WorkloadSpec){
		"minimal": func(*WorkloadSpec) {},
		"steps with auto warm-up": func(w *WorkloadSpec) {
			w.Duration = nil
			w.Load = LoadSpec{Steps: []RateStep{{Rate: 100, Duration: *dur("1m")}, {Rate: 200, Duration: *dur("1m")}}}
			w.WarmUp = &WarmUpSpec{Mode: WarmUpAuto, Max: dur("90s")}
		},
		"ramp": func(w *WorkloadSpec) {
			w.Load = LoadSpec{Ramp: &RampSpec{From: 2000, To: 30000, Duration: *dur("30s")}, Arrivals: ArrivalsPoisson}
		},
		"stale directed reads and commit options": func(w *WorkloadSpec) {
			w.Operations = []OperationSpec{
				{Type: OpRead, Weight: 1, Staleness: &StalenessSpec{Max: dur("15s")},
					DirectedRead: &DirectedReadSpec{Include: []ReplicaSelection{{Location: "asia-northeast1"}}}},
				{Type: OpInsert, Weight: 1, Commit: &CommitSpec{MaxCommitDelay: dur("0s")}},
				{Name: "insert-dml", Type: OpInsert, Weight: 1, WritePath: WriteDML, Commit: &CommitSpec{MaxCommitDelay: dur("500ms")}},
			}
		},
		"tweet": func(w *WorkloadSpec) {
			w.Type = WorkloadTweet
			w.Operations = []OperationSpec{{Type: OpInsert, Weight: 9}, {Type: OpQueryBySort, Weight: 1, Rows: ptr.To[int32](10)}}
		},
		"batched inserts at a commit's size": func(w *WorkloadSpec) {
			w.Dataset.FieldBytes, w.Dataset.BatchRows = ptr.To[int32](1_000_000), ptr.To[int32](9)
			w.Operations = []OperationSpec{{Type: OpInsert, Weight: 1, Rows: ptr.To[int32](9)}}
		},
		"batched inserts": func(w *WorkloadSpec) {
			w.Operations = []OperationSpec{{Type: OpInsert, Weight: 1, Rows: ptr.To[int32](MaxInsertRows)},
				{Name: "insert-mutation", Type: OpInsert, Weight: 1, WritePath: WriteMutation, Rows: ptr.To[int32](100)}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			w := goodWorkload()
			mutate(&w)
			if errs := w.Validate(field.NewPath("spec", "workload")); len(errs) > 0 {
				t.Errorf("before Resolved: %v", errs)
			}
			w = w.Resolved()
			if errs := w.Validate(field.NewPath("spec", "workload")); len(errs) > 0 {
				t.Errorf("after Resolved: %v", errs)
			}
		})
	}
}

// TestValidateRefusesBadWorkloadsNamingTheField mirrors the CRD's rules;
// test/apivalidation checks the same cases against the API server.
func TestValidateRefusesBadWorkloadsNamingTheField(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*WorkloadSpec)
		field  string
		detail string
	}{
		{"unknown workload", func(w *WorkloadSpec) { w.Type = "TPCH" }, "w.type", `supported values: "YCSB", "Tweet", "TPCC"`},
		{"negative rows", func(w *WorkloadSpec) { w.Dataset.Rows = ptr.To[int64](-1) }, "w.dataset.rows", "between 0 and 10000000000"},
		{"YCSB batch over Spanner's mutation limit", func(w *WorkloadSpec) { w.Dataset.BatchRows = ptr.To[int32](7273) },
			"w.dataset.batchRows", "80003 mutations, more than the 80000 Cloud Spanner takes; use at most 7272"},
		{"Tweet batch over Spanner's mutation limit", func(w *WorkloadSpec) {
			w.Type, w.Operations = WorkloadTweet, []OperationSpec{{Type: OpInsert, Weight: 1}}
			w.Dataset.BatchRows = ptr.To[int32](8001)
		}, "w.dataset.batchRows", "use at most 8000"},
		{"batch over Spanner's commit size", func(w *WorkloadSpec) {
			w.Dataset.BatchRows, w.Dataset.FieldBytes = ptr.To[int32](100), ptr.To[int32](100_000)
		}, "w.dataset.batchRows", "100000000 bytes of text"},
		{"no operations", func(w *WorkloadSpec) { w.Operations = nil }, "w.operations", "at least one operation"},
		{"17 operations", func(w *WorkloadSpec) {
			for i := 0; i < 15; i++ {
				w.Operations = append(w.Operations, OperationSpec{Name: "op-" + strings.Repeat("x", i+1), Type: OpRead, Weight: 1})
			}
		}, "w.operations", "must have at most 16 items"},
		{"duplicate default names", func(w *WorkloadSpec) { w.Operations[1] = OperationSpec{Type: OpRead, Weight: 1} }, "w.operations[1].name", `Duplicate value: "read"`},
		{"name clashes with a default", func(w *WorkloadSpec) { w.Operations[1].Name = "read" }, "w.operations[1].name", `Duplicate value: "read"`},
		{"bad name", func(w *WorkloadSpec) { w.Operations[0].Name = "Get_By_ID" }, "w.operations[0].name", "lower case letters"},
		{"zero weight", func(w *WorkloadSpec) { w.Operations[0].Weight = 0 }, "w.operations[0].weight", "between 1 and 1000000"},
		{"operation of another workload", func(w *WorkloadSpec) { w.Operations[0].Type = OpFullScan }, "w.operations[0].type", `Unsupported value: "FullScan"`},
		{"rows on a single-row read", func(w *WorkloadSpec) { w.Operations[0].Rows = ptr.To[int32](10) }, "w.operations[0].rows", "only Scan, ReadKeys, QueryBySort"},
		{"rows on an Insert through DML", func(w *WorkloadSpec) {
			w.Operations[1] = OperationSpec{Type: OpInsert, Weight: 1, WritePath: WriteDML, Rows: ptr.To[int32](10)}
		}, "w.operations[1].rows", "one commit of mutations (writePath Mutation)"},
		{"an Insert of more rows than a commit holds", func(w *WorkloadSpec) {
			w.Operations[1] = OperationSpec{Type: OpInsert, Weight: 1, Rows: ptr.To[int32](7273)}
		}, "w.operations[1].rows", "at most 7272 rows"},
		{"an Insert of rows over a commit's size", func(w *WorkloadSpec) {
			w.Dataset.FieldBytes, w.Dataset.BatchRows = ptr.To[int32](1_000_000), ptr.To[int32](9)
			w.Operations[1] = OperationSpec{Type: OpInsert, Weight: 1, Rows: ptr.To[int32](10)}
		}, "w.operations", "operations[1].rows: an Insert of 10 rows is one commit: 10 rows of YCSB hold 100000000 bytes of text (10000000 a row: dataset.fieldBytes x 10 text fields), more than the 90000000 a Cloud Spanner commit (100 MB) leaves room for; use at most 9 rows"},
		{"a Tweet Insert of rows over a commit's size", func(w *WorkloadSpec) {
			w.Type, w.Dataset.FieldBytes = WorkloadTweet, ptr.To[int32](1_000_000)
			w.Operations = []OperationSpec{{Type: OpRead, Weight: 1}, {Type: OpInsert, Weight: 1, Rows: ptr.To[int32](91)}}
		}, "w.operations", "operations[1].rows: an Insert of 91 rows is one commit: 91 rows of Tweet hold 91000000 bytes"},
		{"api on a write", func(w *WorkloadSpec) { w.Operations[1].API = APISQL }, "w.operations[1].api", "only Read, Scan and ReadKeys"},
		{"write path on a read", func(w *WorkloadSpec) { w.Operations[0].WritePath = WriteDML }, "w.operations[0].writePath", "only Insert, Update and Delete"},
		{"staleness on a write", func(w *WorkloadSpec) { w.Operations[1].Staleness = &StalenessSpec{Max: dur("15s")} }, "w.operations[1].staleness", "only reads can be stale"},
		{"staleness exact and max", func(w *WorkloadSpec) {
			w.Operations[0].Staleness = &StalenessSpec{Exact: dur("1s"), Max: dur("1s")}
		}, "w.operations[0].staleness", "exactly one of exact and max"},
		{"zero staleness", func(w *WorkloadSpec) { w.Operations[0].Staleness = &StalenessSpec{Exact: dur("0s")} }, "w.operations[0].staleness.exact", "must be a positive duration"},
		{"directed write", func(w *WorkloadSpec) {
			w.Operations[1].DirectedRead = &DirectedReadSpec{Include: []ReplicaSelection{{Location: "x"}}}
		}, "w.operations[1].directedRead", "only read-only operations"},
		{"directed include and exclude", func(w *WorkloadSpec) {
			w.Operations[0].DirectedRead = &DirectedReadSpec{Include: []ReplicaSelection{{Location: "x"}}, Exclude: []ReplicaSelection{{Location: "y"}}}
		}, "w.operations[0].directedRead", "exactly one of include and exclude"},
		{"directed empty include", func(w *WorkloadSpec) {
			w.Operations[0].DirectedRead = &DirectedReadSpec{Include: []ReplicaSelection{}}
		}, "w.operations[0].directedRead.include", "at least one replica selection"},
		{"directed empty selection", func(w *WorkloadSpec) {
			w.Operations[0].DirectedRead = &DirectedReadSpec{Exclude: []ReplicaSelection{{}}}
		}, "w.operations[0].directedRead.exclude[0]", "a location, a type or both"},
		{"commit on a read", func(w *WorkloadSpec) { w.Operations[0].Commit = &CommitSpec{} }, "w.operations[0].commit", "only to writes"},
		{"commit delay over 500ms", func(w *WorkloadSpec) {
			w.Operations[1].Commit = &CommitSpec{MaxCommitDelay: dur("600ms")}
		}, "w.operations[1].commit.maxCommitDelay", "between 0 and 500ms"},
		{"unknown keys", func(w *WorkloadSpec) { w.Operations[0].Keys = "Hot" }, "w.operations[0].keys", `Unsupported value: "Hot"`},
		{"two load kinds", func(w *WorkloadSpec) { w.Load.Concurrency = ptr.To[int32](4) }, "w.load", "exactly one of rate, steps, ramp, search and concurrency"},
		{"no load kind", func(w *WorkloadSpec) { w.Load.Rate = nil }, "w.load", "exactly one of rate, steps, ramp, search and concurrency"},
		{"negative rate", func(w *WorkloadSpec) { w.Load.Rate = ptr.To[int32](-5) }, "w.load.rate", "between 1 and 10000000"},
		{"empty steps", func(w *WorkloadSpec) { w.Load = LoadSpec{Steps: []RateStep{}}; w.Duration = nil }, "w.load.steps", "at least one step"},
		{"zero step duration", func(w *WorkloadSpec) {
			w.Load = LoadSpec{Steps: []RateStep{{Rate: 1, Duration: *dur("0s")}}}
			w.Duration = nil
		}, "w.load.steps[0].duration", "must be a positive duration"},
		{"zero ramp", func(w *WorkloadSpec) { w.Load = LoadSpec{Ramp: &RampSpec{From: 0, To: 10, Duration: *dur("1m")}} }, "w.load.ramp.from", "between 1 and 10000000"},
		{"arrivals with concurrency", func(w *WorkloadSpec) {
			w.Load = LoadSpec{Concurrency: ptr.To[int32](4), Arrivals: ArrivalsPoisson}
		}, "w.load.arrivals", "only to open-loop loads"},
		{"unknown arrivals", func(w *WorkloadSpec) { w.Load.Arrivals = "Bursty" }, "w.load.arrivals", `Unsupported value: "Bursty"`},
		{"missing duration", func(w *WorkloadSpec) { w.Duration = nil }, "w.duration", "Required value"},
		{"duration and steps", func(w *WorkloadSpec) { w.Load = LoadSpec{Steps: []RateStep{{Rate: 1, Duration: *dur("1m")}}} }, "w.duration", "not both"},
		{"negative duration", func(w *WorkloadSpec) { w.Duration = dur("-1m") }, "w.duration", "must be a positive duration"},
		{"interval under 1s", func(w *WorkloadSpec) { w.Interval = dur("500ms") }, "w.interval", "from 1s to 1h"},
		{"fixed warm-up without duration", func(w *WorkloadSpec) { w.WarmUp = &WarmUpSpec{Mode: WarmUpFixed} }, "w.warmUp.duration", "required when mode is Fixed"},
		{"warm-up as long as the run", func(w *WorkloadSpec) {
			w.WarmUp = &WarmUpSpec{Mode: WarmUpFixed, Duration: dur("1m")}
		}, "w.warmUp.duration", "shorter than the run (1m0s)"},
		{"warm-up longer than the steps", func(w *WorkloadSpec) {
			w.Duration = nil
			w.Load = LoadSpec{Steps: []RateStep{{Rate: 1, Duration: *dur("30s")}, {Rate: 2, Duration: *dur("30s")}}}
			w.WarmUp = &WarmUpSpec{Mode: WarmUpFixed, Duration: dur("2m")}
		}, "w.warmUp.duration", "shorter than the run (1m0s)"},
		{"warm-up duration in Auto mode", func(w *WorkloadSpec) {
			w.WarmUp = &WarmUpSpec{Mode: WarmUpAuto, Duration: dur("10s")}
		}, "w.warmUp.duration", "applies only to mode Fixed"},
		{"warm-up window without Auto", func(w *WorkloadSpec) {
			w.WarmUp = &WarmUpSpec{Window: ptr.To[int32](5)}
		}, "w.warmUp", "apply only to mode Auto"},
		{"auto warm-up max as long as the run", func(w *WorkloadSpec) {
			w.WarmUp = &WarmUpSpec{Mode: WarmUpAuto, Max: dur("1m")}
		}, "w.warmUp.max", "shorter than the run"},
		{"auto warm-up window of 1", func(w *WorkloadSpec) {
			w.WarmUp = &WarmUpSpec{Mode: WarmUpAuto, Window: ptr.To[int32](1)}
		}, "w.warmUp.window", "between 2 and 100"},
		{"unknown warm-up mode", func(w *WorkloadSpec) { w.WarmUp = &WarmUpSpec{Mode: "Smart"} }, "w.warmUp.mode", `Unsupported value: "Smart"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := goodWorkload()
			tc.mutate(&w)
			w = w.Resolved()
			errs := w.Validate(field.NewPath("w"))
			for _, e := range errs {
				if e.Field == tc.field && strings.Contains(e.Error(), tc.detail) {
					return
				}
			}
			t.Errorf("want an error at %s containing %q; got %v", tc.field, tc.detail, errs)
		})
	}
}

func TestTotalDurationIsDurationOrTheSumOfSteps(t *testing.T) {
	w := goodWorkload()
	if got := w.TotalDuration(); got != time.Minute {
		t.Errorf("with duration 1m: TotalDuration() = %s", got)
	}
	w.Duration = nil
	w.Load = LoadSpec{Steps: []RateStep{{Rate: 1, Duration: *dur("1m")}, {Rate: 2, Duration: *dur("90s")}}}
	if got := w.TotalDuration(); got != 150*time.Second {
		t.Errorf("with steps of 1m and 90s: TotalDuration() = %s, want 2m30s", got)
	}
}
