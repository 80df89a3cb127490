package dataset_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/dataset"
	"github.com/spanbench/spanbench/spanner/workload"
)

// markersState is the State of a database whose markers are wants, except
// the missing tables (no marker) and the other ones (another hash).
func markersState(wants []dataset.Marker, missing, other []string) dataset.State {
	st := dataset.State{Found: map[string]dataset.Marker{}}
	for _, w := range wants {
		switch {
		case slices.Contains(missing, w.Table):
			st.Missing = append(st.Missing, w)
		case slices.Contains(other, w.Table):
			st.Other = append(st.Other, w)
			st.Found[w.Table] = dataset.Marker{Table: w.Table, SchemaHash: "0123456789abcdef", Rows: 1}
		default:
			st.Match = append(st.Match, w)
		}
	}
	return st
}

// TestDecideKeepsMatchingTablesAndLoadsTheRest: the one decision of
// `spanbench run` and the operator, table by table: a matching table is
// kept, a missing one loaded, one holding another dataset refused without
// reload and, with it, cleared and loaded again with the tables
// interleaved in it; a built-in workload's one marker alike.
func TestDecideKeepsMatchingTablesAndLoadsTheRest(t *testing.T) {
	custom, err := workload.SchemaFor(threeTablesSpec(t, v1alpha1.DialectGoogleSQL, nil), v1alpha1.DialectGoogleSQL)
	if err != nil {
		t.Fatal(err)
	}
	ycsb, err := workload.SchemaFor(spec(100, 10), v1alpha1.DialectGoogleSQL)
	if err != nil {
		t.Fatal(err)
	}
	type want struct{ keep, load, clear []string }
	cases := map[string]struct {
		s              workload.Schema
		missing, other []string
		reload         bool
		want           want
	}{
		"every marker matches":       {s: custom, want: want{keep: []string{"Singers", "Albums", "Labels"}}},
		"a new database":             {s: custom, missing: []string{"Singers", "Albums", "Labels"}, want: want{load: []string{"Singers", "Albums", "Labels"}}},
		"Labels unfinished":          {s: custom, missing: []string{"Labels"}, want: want{keep: []string{"Singers", "Albums"}, load: []string{"Labels"}}},
		"Albums changed, reload":     {s: custom, other: []string{"Albums"}, reload: true, want: want{keep: []string{"Singers", "Labels"}, load: []string{"Albums"}, clear: []string{"Albums"}}},
		"Singers changed, reload":    {s: custom, other: []string{"Singers"}, reload: true, want: want{keep: []string{"Labels"}, load: []string{"Singers", "Albums"}, clear: []string{"Singers", "Albums"}}},
		"Labels missing, Albums too": {s: custom, missing: []string{"Labels"}, other: []string{"Albums"}, reload: true, want: want{keep: []string{"Singers"}, load: []string{"Albums", "Labels"}, clear: []string{"Albums"}}},
		"YCSB loaded":                {s: ycsb, want: want{keep: []string{"usertable"}}},
		"YCSB new":                   {s: ycsb, missing: []string{"usertable"}, want: want{load: []string{"usertable"}}},
		"YCSB changed, reload":       {s: ycsb, other: []string{"usertable"}, reload: true, want: want{load: []string{"usertable"}, clear: []string{"usertable"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			wants := dataset.Wants(tc.s, 100)
			p, err := dataset.Decide(tc.s, wants, markersState(wants, tc.missing, tc.other), tc.reload, "dataset.reload")
			if err != nil {
				t.Fatalf("Decide: %v", err)
			}
			got := want{keep: p.KeepTables(), load: p.LoadTables(), clear: p.Clear}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			if p.Complete() != (len(tc.want.load) == 0) {
				t.Errorf("Complete() = %v with tables to load %q", p.Complete(), tc.want.load)
			}
		})
	}

	wants := dataset.Wants(custom, 100)
	_, err = dataset.Decide(custom, wants, markersState(wants, nil, []string{"Albums"}), false, "spec.workload.dataset.reload")
	if !errors.Is(err, dataset.ErrMismatch) || !strings.Contains(err.Error(), "table Albums holds 1 rows") || !strings.Contains(err.Error(), "set spec.workload.dataset.reload: true") {
		t.Errorf("Decide over a changed Albums without reload: %v; want ErrMismatch naming Albums and the reload field", err)
	}
}

// TestPlanSummaryNamesLoadedAndKeptTables: what a plan says in a
// condition or on the terminal.
func TestPlanSummaryNamesLoadedAndKeptTables(t *testing.T) {
	cases := []struct {
		keep, load []string
		want       string
	}{
		{[]string{"Singers", "Labels"}, []string{"Albums"}, "2 of 3 tables already loaded (markers match: Singers, Labels); loading Albums"},
		{nil, []string{"Singers", "Albums"}, "loading Singers, Albums"},
		{[]string{"Singers"}, nil, "every table already loaded (markers match)"},
	}
	for _, tc := range cases {
		if got := dataset.Summary(tc.keep, tc.load); got != tc.want {
			t.Errorf("Summary(%q, %q) = %q, want %q", tc.keep, tc.load, got, tc.want)
		}
	}
}

// TestLoadOfSpansOnlyTheUnitsOfItsTables: a load of some tables of a
// Custom dataset spans the units that hold their rows (Labels' 5, not
// Singers' 10), writes their markers alone, and refuses names the dataset
// does not have or names twice, as the loader pods meet them in a
// ConfigMap.
func TestLoadOfSpansOnlyTheUnitsOfItsTables(t *testing.T) {
	w := threeTablesSpec(t, v1alpha1.DialectGoogleSQL, nil)
	custom, err := workload.SchemaFor(w, v1alpha1.DialectGoogleSQL)
	if err != nil {
		t.Fatal(err)
	}
	rows := *w.Dataset.Rows
	cases := map[string]struct {
		tables  []string
		units   int64
		markers []string
	}{
		"every table":       {nil, 10, []string{"Singers", "Albums", "Labels"}},
		"Labels":            {[]string{"Labels"}, 5, []string{"Labels"}},
		"Albums, under 10":  {[]string{"Albums"}, 10, []string{"Albums"}},
		"Albums and Labels": {[]string{"Albums", "Labels"}, 10, []string{"Albums", "Labels"}},
	}
	for name, tc := range cases {
		ld, err := dataset.LoadOf(custom, rows, tc.tables)
		if err != nil {
			t.Errorf("%s: LoadOf: %v", name, err)
			continue
		}
		var got []string
		for _, m := range ld.Markers {
			got = append(got, m.Table)
		}
		if ld.Units != tc.units || !cmp.Equal(got, tc.markers) {
			t.Errorf("%s: a load of %d units writing markers %q; want %d units and markers %q", name, ld.Units, got, tc.units, tc.markers)
		}
	}
	// Labels' rows of unit 4 are one mutation; unit 5 holds none of them.
	ld, err := dataset.LoadOf(custom, rows, []string{"Labels"})
	if err != nil {
		t.Fatalf("LoadOf(Labels): %v", err)
	}
	if n, m := len(ld.Schema.Rows(4)), len(ld.Schema.Rows(5)); n != 1 || m != 0 {
		t.Errorf("a load of Labels writes %d rows of unit 4 and %d of unit 5; want 1 and 0", n, m)
	}

	for tables, want := range map[string]string{"Tracks": `table "Tracks" is not a table of the dataset (Singers, Albums, Labels)`, "Albums,Albums": `table "Albums" is named twice`} {
		if _, err := dataset.LoadOf(custom, rows, strings.Split(tables, ",")); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadOf(%s) = %v; want an error saying %q", tables, err, want)
		}
	}
	ycsb, err := workload.SchemaFor(spec(100, 10), v1alpha1.DialectGoogleSQL)
	if err != nil {
		t.Fatal(err)
	}
	if ld, err := dataset.LoadOf(ycsb, 100, []string{"usertable"}); err != nil || ld.Units != 100 || ld.Schema != ycsb {
		t.Errorf("LoadOf(YCSB, usertable) = %+v, %v; want the whole table", ld, err)
	}
}
