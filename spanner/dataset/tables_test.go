package dataset_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/spanner"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/sessiontest"
	"github.com/spanbench/spanbench/spanner/dataset"
	"github.com/spanbench/spanbench/spanner/session"
	"github.com/spanbench/spanbench/spanner/workload"
)

// threeTables is a Custom workload of two root tables, one with an
// interleaved child.
const threeTables = `
type: Custom
custom:
  ddl: []
  tables:
  - {name: Singers, rows: 10}
  - {name: Albums, rowsPerParent: 2}
  - {name: Labels, rows: 5}
operations:
- name: get
  type: ReadRows
  weight: 1
  custom:
    read: {table: Singers, columns: [Name], shape: Key}
load:
  rate: 1
`

// threeTablesDDL is threeTables' schema in each dialect, with the same
// (quoted in PostgreSQL) names.
var threeTablesDDL = map[v1alpha1.Dialect][]string{
	v1alpha1.DialectGoogleSQL: {
		`CREATE TABLE Singers (SingerId INT64 NOT NULL, Name STRING(100)) PRIMARY KEY (SingerId)`,
		`CREATE TABLE Albums (SingerId INT64 NOT NULL, AlbumId INT64 NOT NULL, Title STRING(MAX)) PRIMARY KEY (SingerId, AlbumId), INTERLEAVE IN PARENT Singers ON DELETE CASCADE`,
		`CREATE TABLE Labels (LabelId INT64 NOT NULL, Name STRING(100)) PRIMARY KEY (LabelId)`,
	},
	v1alpha1.DialectPostgreSQL: {
		`CREATE TABLE "Singers" ("SingerId" bigint NOT NULL, "Name" varchar(100), PRIMARY KEY ("SingerId"))`,
		`CREATE TABLE "Albums" ("SingerId" bigint NOT NULL, "AlbumId" bigint NOT NULL, "Title" text, PRIMARY KEY ("SingerId", "AlbumId")) INTERLEAVE IN PARENT "Singers" ON DELETE CASCADE`,
		`CREATE TABLE "Labels" ("LabelId" bigint NOT NULL, "Name" varchar(100), PRIMARY KEY ("LabelId"))`,
	},
}

// threeTablesSpec is threeTables in dialect d with its tables' sizes
// changed by edit.
func threeTablesSpec(t *testing.T, d v1alpha1.Dialect, edit func(*v1alpha1.CustomWorkloadSpec)) *v1alpha1.WorkloadSpec {
	t.Helper()
	var w v1alpha1.WorkloadSpec
	if err := yaml.UnmarshalStrict([]byte(threeTables), &w); err != nil {
		t.Fatal(err)
	}
	w.Custom.DDL = threeTablesDDL[d]
	w.Duration = &metav1.Duration{Duration: time.Second}
	w.Interval = &metav1.Duration{Duration: time.Second} // a run holds at least one interval
	if edit != nil {
		edit(w.Custom)
	}
	w = w.Resolved()
	return &w
}

var keyColumn = map[string]string{"Singers": "SingerId", "Albums": "AlbumId", "Labels": "LabelId"}

func rowsOf(t *testing.T, s *session.Session, table string) int64 {
	t.Helper()
	var n int64
	err := s.Client.Single().Read(context.Background(), table, spanner.AllKeys(), []string{keyColumn[table]}).Do(func(*spanner.Row) error { n++; return nil })
	if err != nil {
		t.Fatalf("counting %s: %v", table, err)
	}
	return n
}

// TestCustomDatasetHasOneMarkerPerTableAndReloadsOnlyWhatChanged: each
// table of a Custom dataset carries its own marker (its own row count), so
// a table whose load is missing is loaded alone, a changed table is
// refused or, with reload, replaced with the tables interleaved in it,
// and the other tables are left as they are (a sentinel value survives),
// in a database of each dialect.
func TestCustomDatasetHasOneMarkerPerTableAndReloadsOnlyWhatChanged(t *testing.T) {
	for _, d := range []v1alpha1.Dialect{v1alpha1.DialectGoogleSQL, v1alpha1.DialectPostgreSQL} {
		t.Run(string(d), func(t *testing.T) { checkMarkerPerTable(t, d) })
	}
}

func checkMarkerPerTable(t *testing.T, d v1alpha1.Dialect) {
	ctx := context.Background()
	first := threeTablesSpec(t, d, nil)
	s := sessiontest.StartDialect(t, first, d)
	for table, want := range map[string]int64{"Singers": 10, "Albums": 20, "Labels": 5} {
		m, ok, err := dataset.ReadMarker(ctx, s.Client, table)
		if err != nil || !ok || m.Rows != want {
			t.Fatalf("marker of %s = %+v (present %v, err %v); want one of %d rows", table, m, ok, err, want)
		}
		if got := rowsOf(t, s, table); got != want {
			t.Fatalf("%s holds %d rows, want %d", table, got, want)
		}
	}
	prepare := func(w *v1alpha1.WorkloadSpec) (dataset.Outcome, error) {
		t.Helper()
		schema, err := workload.SchemaFor(w, d)
		if err != nil {
			t.Fatal(err)
		}
		return dataset.Prepare(ctx, s.Client, schema, w.Dataset, nil)
	}
	if out, err := prepare(first); err != nil || !out.Skipped {
		t.Fatalf("preparing the loaded dataset again: %+v, %v; want skipped", out, err)
	}

	// A sentinel the loader would overwrite if it rewrote Singers.
	if _, err := s.Client.Apply(ctx, []*spanner.Mutation{spanner.Update("Singers", []string{"SingerId", "Name"}, []any{int64(0), "sentinel"})}); err != nil {
		t.Fatal(err)
	}
	sentinelKept := func(step string) {
		t.Helper()
		row, err := s.Client.Single().ReadRow(ctx, "Singers", spanner.Key{int64(0)}, []string{"Name"})
		var name string
		if err == nil {
			err = row.Columns(&name)
		}
		if err != nil || name != "sentinel" {
			t.Errorf("%s rewrote Singers (singer 0 is named %q, %v); only the other tables were to be loaded", step, name, err)
		}
	}

	// Labels half loaded: no marker, rows missing.
	if _, err := s.Client.Apply(ctx, []*spanner.Mutation{
		spanner.Delete("Labels", spanner.KeyRange{Start: spanner.Key{int64(2)}, End: spanner.Key{int64(4)}, Kind: spanner.ClosedClosed}),
		spanner.Delete(dataset.MarkerTable, spanner.Key{"Labels"}),
	}); err != nil {
		t.Fatal(err)
	}
	out, err := prepare(first)
	if err != nil || out.Skipped || out.Reloaded || !slices.Equal(out.Loaded, []string{"Labels"}) {
		t.Fatalf("preparing with Labels unfinished: %+v, %v; want only Labels loaded", out, err)
	}
	if got := rowsOf(t, s, "Labels"); got != 5 {
		t.Errorf("after completing Labels it holds %d rows, want 5", got)
	}
	sentinelKept("completing Labels")

	// Albums changed: refused naming Albums alone, then reloaded alone.
	moreAlbums := threeTablesSpec(t, d, func(c *v1alpha1.CustomWorkloadSpec) { c.Tables[1].RowsPerParent = new(int32(3)) })
	_, err = prepare(moreAlbums)
	if !errors.Is(err, dataset.ErrMismatch) || !strings.Contains(err.Error(), "table Albums holds 20 rows") || strings.Contains(err.Error(), "table Singers") {
		t.Fatalf("preparing 3 albums per singer over 2: %v; want ErrMismatch naming Albums only", err)
	}
	moreAlbums.Dataset.Reload = true
	out, err = prepare(moreAlbums)
	if err != nil || !out.Reloaded || !slices.Equal(out.Loaded, []string{"Albums"}) {
		t.Fatalf("reloading Albums: %+v, %v; want Albums alone reloaded", out, err)
	}
	if got := rowsOf(t, s, "Albums"); got != 30 {
		t.Errorf("after the reload Albums holds %d rows, want 30", got)
	}
	sentinelKept("reloading Albums")

	// Singers changed: it and its interleaved Albums are reloaded; Labels
	// is left alone.
	moreSingers := threeTablesSpec(t, d, func(c *v1alpha1.CustomWorkloadSpec) {
		c.Tables[0].Rows = new(int64(12))
		c.Tables[1].RowsPerParent = new(int32(3))
	})
	moreSingers.Dataset.Reload = true
	out, err = prepare(moreSingers)
	if err != nil || !slices.Equal(out.Loaded, []string{"Singers", "Albums"}) {
		t.Fatalf("reloading Singers: %+v, %v; want Singers and Albums reloaded, Labels not", out, err)
	}
	for table, want := range map[string]int64{"Singers": 12, "Albums": 36, "Labels": 5} {
		if got := rowsOf(t, s, table); got != want {
			t.Errorf("after reloading Singers, %s holds %d rows, want %d", table, got, want)
		}
	}
	if out, err := prepare(moreSingers); err != nil || !out.Skipped {
		t.Errorf("preparing the reloaded dataset again: %+v, %v; want skipped", out, err)
	}
}
