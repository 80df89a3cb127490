package workload_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"cloud.google.com/go/spanner"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/sessiontest"
	"github.com/spanbench/spanbench/spanner/session"
	"github.com/spanbench/spanbench/spanner/workload"
)

// smallRows keeps the write tests' tables small enough to compare whole.
const smallRows = 200

func smallSpec(typ v1alpha1.WorkloadType, ops ...v1alpha1.OperationSpec) *v1alpha1.WorkloadSpec {
	rows, fieldBytes, rate := int64(smallRows), int32(16), int32(1)
	s := &v1alpha1.WorkloadSpec{Type: typ, Dataset: v1alpha1.DatasetSpec{Rows: &rows, FieldBytes: &fieldBytes},
		Operations: ops, Load: v1alpha1.LoadSpec{Rate: &rate}, Duration: &metav1.Duration{Duration: time.Second}}
	*s = s.Resolved()
	return s
}

// table is a workload's main table as the Read API sees it: the same names
// in both dialects.
type table struct {
	name    string
	columns []string // key first
}

var (
	usertable = table{"usertable", []string{"id", "field0", "field1", "field2", "field3", "field4", "field5", "field6", "field7", "field8", "field9"}}
	tweet     = table{"Tweet", []string{"Id", "Author", "CommitedAt", "Content", "CreatedAt", "Favos", "Sort", "UpdatedAt"}}
)

// snapshot reads the whole table through the Read API: key -> column ->
// value, rendered for comparison. The key is the first column.
func (tb table) snapshot(t *testing.T, c *spanner.Client) map[string]map[string]string {
	t.Helper()
	rows := map[string]map[string]string{}
	err := c.Single().Read(context.Background(), tb.name, spanner.AllKeys(), tb.columns).Do(func(r *spanner.Row) error {
		var key string
		if err := r.Column(0, &key); err != nil {
			return err
		}
		row := map[string]string{}
		for i, col := range tb.columns {
			var v spanner.GenericColumnValue
			if err := r.Column(i, &v); err != nil {
				return err
			}
			row[col] = v.Value.String()
		}
		rows[key] = row
		return nil
	})
	if err != nil {
		t.Fatalf("reading %s: %v", tb.name, err)
	}
	return rows
}

// change is what one operation did to a table.
type change struct {
	added, removed []string
	changed        map[string][]string // key -> changed columns
}

func diff(before, after map[string]map[string]string) change {
	c := change{changed: map[string][]string{}}
	for k, row := range after {
		old, ok := before[k]
		if !ok {
			c.added = append(c.added, k)
			continue
		}
		for col, v := range row {
			if old[col] != v {
				c.changed[k] = append(c.changed[k], col)
			}
		}
		slices.Sort(c.changed[k])
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			c.removed = append(c.removed, k)
		}
	}
	return c
}

// TestWritesChangeExactlyTheirRowsInBothDialects runs every write of both
// workloads through both write paths on a database of each dialect, and
// compares the whole table before and after each: an insert adds one row,
// an update changes the columns it should of one row, a delete removes the
// row the same path inserted.
func TestWritesChangeExactlyTheirRowsInBothDialects(t *testing.T) {
	paths := []v1alpha1.WritePath{v1alpha1.WriteMutation, v1alpha1.WriteDML}
	for _, d := range dialects {
		t.Run(string(d), func(t *testing.T) {
			for _, wl := range []struct {
				typ   v1alpha1.WorkloadType
				table table
				extra []v1alpha1.OperationType // writes with no write path
			}{
				{v1alpha1.WorkloadYCSB, usertable, []v1alpha1.OperationType{v1alpha1.OpReadModifyWrite}},
				{v1alpha1.WorkloadTweet, tweet, nil},
			} {
				var ops []v1alpha1.OperationSpec
				for _, p := range paths {
					for _, typ := range []v1alpha1.OperationType{v1alpha1.OpInsert, v1alpha1.OpUpdate, v1alpha1.OpDelete} {
						ops = append(ops, v1alpha1.OperationSpec{Name: fmt.Sprintf("%s-%s", typ, p), Type: typ, WritePath: p, Weight: 1, Keys: v1alpha1.KeysUniform})
					}
				}
				for _, typ := range wl.extra {
					ops = append(ops, v1alpha1.OperationSpec{Name: string(typ), Type: typ, Weight: 1, Keys: v1alpha1.KeysUniform})
				}
				spec := smallSpec(wl.typ, ops...)
				s := sessiontest.StartDialect(t, spec, d)
				w, err := s.Workload(spec, "test", 0, 1)
				if err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(7, 7))
				var inserted string
				for _, op := range w.Ops() {
					before := wl.table.snapshot(t, s.Client)
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					out, err := op.Do(ctx, rng)
					cancel()
					if err != nil {
						t.Fatalf("%s %s on %s: %v", wl.typ, op.Spec.Name, d, err)
					}
					got := diff(before, wl.table.snapshot(t, s.Client))
					where := fmt.Sprintf("%s %s on a %s database", wl.typ, op.Spec.Name, d)
					if out.Rows != 1 {
						t.Errorf("%s reported %d rows, want 1", where, out.Rows)
					}
					switch op.Spec.Type {
					case v1alpha1.OpInsert:
						if len(got.added) != 1 || len(got.removed)+len(got.changed) > 0 {
							t.Fatalf("%s: %+v; want one row added and nothing else", where, got)
						}
						inserted = got.added[0]
					case v1alpha1.OpDelete:
						if !slices.Equal(got.removed, []string{inserted}) || len(got.added)+len(got.changed) > 0 {
							t.Fatalf("%s: %+v; want only the row inserted before (%s) removed", where, got, inserted)
						}
					default:
						checkUpdate(t, where, s.Client, wl.typ, op.Spec.WritePath, got)
					}
				}
			}
		})
	}
}

// checkUpdate asserts an update changed one row, and which of its columns.
func checkUpdate(t *testing.T, where string, c *spanner.Client, typ v1alpha1.WorkloadType, path v1alpha1.WritePath, got change) {
	t.Helper()
	if len(got.changed) != 1 || len(got.added)+len(got.removed) > 0 {
		t.Fatalf("%s: %+v; want exactly one row changed", where, got)
	}
	for key, cols := range got.changed {
		switch {
		case typ == v1alpha1.WorkloadYCSB:
			if len(cols) != 1 || cols[0] == "id" {
				t.Errorf("%s changed columns %v of %s; want one field", where, cols, key)
			}
		case path == v1alpha1.WriteDML:
			if want := []string{"CommitedAt", "Favos", "UpdatedAt"}; !slices.Equal(cols, want) {
				t.Errorf("%s changed columns %v of %s; want %v", where, cols, key, want)
			}
			row, err := c.Single().ReadRow(context.Background(), "Tweet", spanner.Key{key}, []string{"Favos"})
			var favos []string
			if err == nil {
				err = row.Columns(&favos)
			}
			if err != nil || len(favos) != 1 {
				t.Errorf("%s: Favos of %s = %v (%v); want the one favourite appended", where, key, favos, err)
			}
		default:
			if want := []string{"CommitedAt", "Content", "UpdatedAt"}; !slices.Equal(cols, want) {
				t.Errorf("%s changed columns %v of %s; want %v", where, cols, key, want)
			}
		}
	}
}

// TestTweetReadsAndQueriesReturnTheRightRowsInBothDialects checks the
// Tweet workload's reads on a database of each dialect against the table
// itself: Read returns the same row through both APIs, QueryBySort the
// next rows in Sort order, FullScan the top authors.
func TestTweetReadsAndQueriesReturnTheRightRowsInBothDialects(t *testing.T) {
	for _, d := range dialects {
		t.Run(string(d), func(t *testing.T) {
			op := func(typ v1alpha1.OperationType, api v1alpha1.ReadAPI) *v1alpha1.WorkloadSpec {
				return smallSpec(v1alpha1.WorkloadTweet, v1alpha1.OperationSpec{Type: typ, API: api, Weight: 1, Keys: v1alpha1.KeysUniform})
			}
			s := sessiontest.StartDialect(t, op(v1alpha1.OpRead, ""), d)
			var sorts []int64
			counts := map[string]int64{}
			err := s.Client.Single().Read(context.Background(), "Tweet", spanner.AllKeys(), []string{"Sort", "Author"}).Do(func(r *spanner.Row) error {
				var sort int64
				var author string
				err := r.Columns(&sort, &author)
				sorts, counts[author] = append(sorts, sort), counts[author]+1
				return err
			})
			if err != nil {
				t.Fatal(err)
			}

			byRead := readColumn(t, s, op(v1alpha1.OpRead, v1alpha1.APIRead), "Id", 20)
			bySQL := readColumn(t, s, op(v1alpha1.OpRead, v1alpha1.APISQL), "Id", 20)
			for i := range byRead {
				if len(byRead[i]) != 1 || !slices.Equal(byRead[i], bySQL[i]) {
					t.Fatalf("Read call %d: Read API returned %v, SQL API %v; want the same one tweet", i, byRead[i], bySQL[i])
				}
			}

			slices.Sort(sorts)
			for i, call := range observe(t, s, op(v1alpha1.OpQueryBySort, ""), 10, func(r *spanner.Row) int64 {
				var v int64
				if err := r.ColumnByName("Sort", &v); err != nil {
					t.Errorf("reading Sort: %v", err)
				}
				return v
			}) {
				if len(call) == 0 {
					continue // the random lower bound was above every Sort
				}
				first, _ := slices.BinarySearch(sorts, call[0])
				want := sorts[first:min(first+int(v1alpha1.DefaultRows), len(sorts))]
				if !slices.Equal(call, want) {
					t.Fatalf("QueryBySort call %d returned Sort %v; want the next %d in order, %v", i, call, len(want), want)
				}
			}

			authors := make([]string, 0, len(counts))
			for a := range counts {
				authors = append(authors, a)
			}
			sort.Slice(authors, func(i, j int) bool {
				a, b := authors[i], authors[j]
				return counts[a] > counts[b] || counts[a] == counts[b] && a < b
			})
			var want []string
			for _, a := range authors[:10] {
				want = append(want, fmt.Sprintf("%s=%d", a, counts[a]))
			}
			got := observe(t, s, op(v1alpha1.OpFullScan, ""), 1, func(r *spanner.Row) string {
				var a string
				var n int64
				if err := r.Columns(&a, &n); err != nil {
					t.Errorf("reading a FullScan row: %v", err)
				}
				return fmt.Sprintf("%s=%d", a, n)
			})[0]
			if !slices.Equal(got, want) {
				t.Errorf("FullScan returned %v; want the top 10 authors %v", got, want)
			}
		})
	}
}

// observe runs the spec's one operation n times with a fixed seed and
// returns what read makes of each row of each call.
func observe[T any](t *testing.T, s *session.Session, spec *v1alpha1.WorkloadSpec, n int, read func(*spanner.Row) T) [][]T {
	t.Helper()
	w, err := s.Workload(spec, "test", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	op := w.Ops()[0]
	var calls [][]T
	var current []T
	op.ObserveRows(func(r *spanner.Row) { current = append(current, read(r)) })
	rng := rand.New(rand.NewPCG(42, 42))
	for range n {
		current = nil
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		out, err := op.Do(ctx, rng)
		cancel()
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

// TestSchemaForRefusesAnUnknownDialect: a dialect spanbench has no SQL for
// is an error, not GoogleSQL by accident; "" is GoogleSQL.
func TestSchemaForRefusesAnUnknownDialect(t *testing.T) {
	for _, typ := range []v1alpha1.WorkloadType{v1alpha1.WorkloadYCSB, v1alpha1.WorkloadTweet} {
		spec := smallSpec(typ, v1alpha1.OperationSpec{Type: v1alpha1.OpInsert, Weight: 1})
		if s, err := workload.SchemaFor(spec, "MySQL"); err == nil {
			t.Errorf("SchemaFor(%s, MySQL) = %v; want an error", typ, s)
		}
		s, err := workload.SchemaFor(spec, "")
		if err != nil || s.Dialect() != v1alpha1.DialectGoogleSQL {
			t.Errorf("SchemaFor(%s, \"\") = %v, %v; want GoogleSQL", typ, s, err)
		}
		pg, err := workload.SchemaFor(spec, v1alpha1.DialectPostgreSQL)
		if err != nil || pg.Dialect() != v1alpha1.DialectPostgreSQL || slices.Equal(pg.DDL(), s.DDL()) || pg.Table() != s.Table() {
			t.Errorf("SchemaFor(%s, PostgreSQL) = %v, %v; want its own DDL for the same table %s", typ, pg, err, s.Table())
		}
	}
}
