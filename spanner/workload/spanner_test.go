package workload_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/spanner"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/await"
	"github.com/spanbench/spanbench/internal/sessiontest"
	"github.com/spanbench/spanbench/spanner/session"
	"github.com/spanbench/spanbench/spanner/workload"
)

const testRows = 2500 // three key blocks, the last one partial

func ycsbSpec(ops ...v1alpha1.OperationSpec) *v1alpha1.WorkloadSpec {
	rows, rate := int64(testRows), int32(1)
	s := &v1alpha1.WorkloadSpec{Type: v1alpha1.WorkloadYCSB, Dataset: v1alpha1.DatasetSpec{Rows: &rows},
		Operations: ops, Load: v1alpha1.LoadSpec{Rate: &rate}, Duration: &metav1.Duration{Duration: time.Second}}
	*s = s.Resolved()
	return s
}

// readKeys runs op n times with a fixed seed and returns the id column of
// the rows of each call.
func readKeys(t *testing.T, s *session.Session, spec *v1alpha1.WorkloadSpec, n int) [][]string {
	t.Helper()
	return readColumn(t, s, spec, "id", n)
}

// readColumn runs op n times with a fixed seed and returns column col of
// the rows of each call.
func readColumn(t *testing.T, s *session.Session, spec *v1alpha1.WorkloadSpec, col string, n int) [][]string {
	t.Helper()
	w, err := s.Workload(spec, "test", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	op := w.Ops()[0]
	var calls [][]string
	var current []string
	op.ObserveRows(func(r *spanner.Row) {
		var id string
		if err := r.ColumnByName(col, &id); err != nil {
			t.Errorf("reading %s: %v", col, err)
		}
		current = append(current, id)
	})
	rng := rand.New(rand.NewPCG(42, 42))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for range n {
		current = nil
		out, err := op.Do(ctx, rng)
		if err != nil {
			t.Fatalf("%s: %v", op.Spec.Name, err)
		}
		if out.Rows != int64(len(current)) {
			t.Fatalf("%s reported %d rows but returned %d", op.Spec.Name, out.Rows, len(current))
		}
		calls = append(calls, current)
	}
	return calls
}

// dialects are the SQL dialects every workload speaks.
var dialects = []v1alpha1.Dialect{v1alpha1.DialectGoogleSQL, v1alpha1.DialectPostgreSQL}

// TestReadsReturnExactlyTheRowsAskedThroughBothAPIs checks each read shape
// on the real emulator, in a database of each dialect: the Read API and the
// SQL API, driven by the same random choices, return the same rows, and the
// right number of them.
func TestReadsReturnExactlyTheRowsAskedThroughBothAPIs(t *testing.T) {
	for _, d := range dialects {
		t.Run(string(d), func(t *testing.T) {
			s := sessiontest.StartDialect(t, ycsbSpec(v1alpha1.OperationSpec{Type: v1alpha1.OpRead, Weight: 1}), d)
			checkReadsThroughBothAPIs(t, s)
		})
	}
}

func checkReadsThroughBothAPIs(t *testing.T, s *session.Session) {
	ten := int32(10)
	for _, tc := range []struct {
		op   v1alpha1.OperationType
		rows int
	}{{v1alpha1.OpRead, 1}, {v1alpha1.OpScan, 10}, {v1alpha1.OpReadKeys, 10}} {
		byAPI := map[v1alpha1.ReadAPI][][]string{}
		for _, api := range []v1alpha1.ReadAPI{v1alpha1.APIRead, v1alpha1.APISQL} {
			o := v1alpha1.OperationSpec{Type: tc.op, Weight: 1, API: api}
			if tc.op != v1alpha1.OpRead {
				o.Rows = &ten
			}
			byAPI[api] = readKeys(t, s, ycsbSpec(o), 30)
		}
		for i, call := range byAPI[v1alpha1.APIRead] {
			sql := byAPI[v1alpha1.APISQL][i]
			if len(call) != tc.rows {
				t.Fatalf("%s call %d through the Read API returned %d rows, want %d: %v", tc.op, i, len(call), tc.rows, call)
			}
			if !sameSet(call, sql) {
				t.Fatalf("%s call %d: Read API returned %v, SQL API %v", tc.op, i, call, sql)
			}
			if tc.op == v1alpha1.OpScan {
				checkContiguous(t, call)
			}
			if tc.op == v1alpha1.OpReadKeys && distinct(call) != tc.rows {
				t.Fatalf("ReadKeys call %d returned repeated keys: %v", i, call)
			}
		}
	}
}

// checkContiguous asserts a scan returned consecutive preloaded rows.
func checkContiguous(t *testing.T, ids []string) {
	t.Helper()
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	var first int64
	for k := int64(0); k < testRows; k++ {
		if workload.YCSBKey(k) == sorted[0] {
			first = k
			break
		}
	}
	for i, id := range sorted {
		if want := workload.YCSBKey(first + int64(i)); id != want {
			t.Fatalf("scan rows are not consecutive: row %d is %s, want %s (all: %v)", i, id, want, sorted)
		}
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	x, y := append([]string(nil), a...), append([]string(nil), b...)
	sort.Strings(x)
	sort.Strings(y)
	return strings.Join(x, ",") == strings.Join(y, ",")
}

func distinct(a []string) int {
	m := map[string]bool{}
	for _, s := range a {
		m[s] = true
	}
	return len(m)
}

// TestStaleReadSeesDataOlderThanItsStaleness gives every row a new value,
// then checks that the workload's Read operation with a 2 s exact
// staleness, through either API, sees only older data at first (or no row:
// the rows themselves were loaded moments ago) and the new value only once
// 2 s have passed.
func TestStaleReadSeesDataOlderThanItsStaleness(t *testing.T) {
	const staleness = 2 * time.Second
	stale := &v1alpha1.StalenessSpec{Exact: &metav1.Duration{Duration: staleness}}
	s := sessiontest.Start(t, ycsbSpec(v1alpha1.OperationSpec{Type: v1alpha1.OpRead, Weight: 1}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The commit happens between before and written: a read may see it no
	// sooner than staleness after before (less the emulator's clock lead,
	// which EMULATOR.md measures at about 1 µs per RPC), and the first reads
	// prove something only if they come less than staleness after written.
	const clockLead = 50 * time.Millisecond
	before := time.Now()
	if _, err := s.Client.PartitionedUpdate(ctx, spanner.Statement{SQL: "UPDATE usertable SET field0 = 'new' WHERE true"}); err != nil {
		t.Fatal(err)
	}
	written := time.Now()
	reads := map[v1alpha1.ReadAPI]func() []string{}
	for _, api := range []v1alpha1.ReadAPI{v1alpha1.APIRead, v1alpha1.APISQL} {
		reads[api] = staleReader(t, ctx, s, api, stale)
	}
	for api, read := range reads {
		if got := read(); len(got) > 0 && got[0] == "new" {
			t.Fatalf("a %s-stale read through the %s API right after the write saw the new value", staleness, api)
		}
	}
	if time.Since(written) >= staleness {
		t.Fatalf("the first reads took %s, longer than the staleness: the check above proved nothing", time.Since(written))
	}
	for api, read := range reads {
		await.Eventually(t, await.Poll{Within: 20 * time.Second, Every: 100 * time.Millisecond},
			fmt.Sprintf("a %s-stale read through the %s API to see the value written at %s", staleness, api, written),
			func() (bool, string) {
				got := read()
				return len(got) > 0 && got[0] == "new", fmt.Sprintf("read %q", got)
			})
		if age := time.Since(before); age < staleness-clockLead {
			t.Fatalf("a %s-stale read through the %s API saw a value at most %s old", staleness, api, age)
		}
	}
}

// staleReader returns a function running the workload's stale Read
// operation through api once, returning field0 of the rows it read.
func staleReader(t *testing.T, ctx context.Context, s *session.Session, api v1alpha1.ReadAPI, stale *v1alpha1.StalenessSpec) func() []string {
	t.Helper()
	w, err := s.Workload(ycsbSpec(v1alpha1.OperationSpec{Type: v1alpha1.OpRead, Weight: 1, API: api, Staleness: stale}), "test", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	op, rng := w.Ops()[0], rand.New(rand.NewPCG(1, 2))
	var seen []string
	op.ObserveRows(func(r *spanner.Row) {
		var v spanner.NullString
		if err := r.ColumnByName("field0", &v); err != nil {
			t.Errorf("reading field0: %v", err)
		}
		seen = append(seen, v.StringVal)
	})
	return func() []string {
		seen = nil
		if _, err := op.Do(ctx, rng); err != nil {
			t.Fatalf("%s stale read: %v", api, err)
		}
		return seen
	}
}

// TestRunsSharingADatabaseInsertDifferentRows: the runs of a campaign, and
// re-runs, share a database (and its preloaded dataset); each must insert
// rows of its own, or every insert after the first run's fails with
// AlreadyExists. Two workloads of the same run name and shard stand for
// the worst case: the same campaign cell again, the next night.
func TestRunsSharingADatabaseInsertDifferentRows(t *testing.T) {
	for _, typ := range []v1alpha1.WorkloadType{v1alpha1.WorkloadYCSB, v1alpha1.WorkloadTweet} {
		t.Run(string(typ), func(t *testing.T) {
			rows, rate := int64(100), int32(1)
			spec := &v1alpha1.WorkloadSpec{Type: typ, Dataset: v1alpha1.DatasetSpec{Rows: &rows},
				Operations: []v1alpha1.OperationSpec{{Name: "insert", Type: v1alpha1.OpInsert, Weight: 1}},
				Load:       v1alpha1.LoadSpec{Rate: &rate}, Duration: &metav1.Duration{Duration: time.Second}}
			*spec = spec.Resolved()
			s := sessiontest.Start(t, spec)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for run := range 2 {
				w, err := s.Workload(spec, "nightly-r1", 0, 1)
				if err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(1, 1))
				for i := range 3 {
					if _, err := w.Ops()[0].Do(ctx, rng); err != nil {
						t.Fatalf("run %d, insert %d on the database the run before used: %v", run+1, i+1, err)
					}
				}
			}
		})
	}
}
