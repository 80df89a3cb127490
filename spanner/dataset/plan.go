package dataset

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"cloud.google.com/go/spanner"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/workload"
)

// Plan is what a database needs before a run can use its dataset, table
// by table. It is the one decision of both `spanbench run` (Prepare) and
// the operator, whose loader pods then load the Load tables alone.
type Plan struct {
	// Keep are the tables whose markers match: loaded as wanted, and not
	// written again.
	Keep []Marker
	// Load are the tables to load, in the wanted order (parents first):
	// those without a marker and those Clear empties.
	Load []Marker
	// Clear are the tables a reload empties before the load: those holding
	// another dataset and every table interleaved in one, parents first.
	Clear []string
}

// Complete reports whether the database holds the whole dataset.
func (p Plan) Complete() bool { return len(p.Load) == 0 }

// LoadTables are the names of the tables to load.
func (p Plan) LoadTables() []string { return tableNames(p.Load) }

// KeepTables are the names of the tables left as they are.
func (p Plan) KeepTables() []string { return tableNames(p.Keep) }

// Reloads reports whether the table is loaded again after a reload
// cleared it (rather than loaded where it had no marker).
func (p Plan) Reloads(table string) bool { return slices.Contains(p.Clear, table) }

// Summary says what the plan loads and keeps, for a log line or a
// condition.
func (p Plan) Summary() string { return Summary(p.KeepTables(), p.LoadTables()) }

// Summary says which tables a load writes and which it keeps because their
// markers match, such as "2 of 3 tables already loaded (markers match:
// Singers, Labels); loading Albums". The controller, which finds the
// tables in a run's status, and Plan word it alike.
func Summary(keep, load []string) string {
	switch {
	case len(load) == 0:
		return "every table already loaded (markers match)"
	case len(keep) == 0:
		return "loading " + strings.Join(load, ", ")
	}
	return fmt.Sprintf("%d of %d tables already loaded (markers match: %s); loading %s",
		len(keep), len(keep)+len(load), strings.Join(keep, ", "), strings.Join(load, ", "))
}

func tableNames(ms []Marker) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Table
	}
	return out
}

// Decide plans the load of a dataset whose wanted markers (Wants of s)
// compare with the database's as st says: a table whose marker matches is
// kept; one without a marker (never loaded, or a load that did not finish)
// is loaded; one holding another dataset is refused with ErrMismatch,
// naming reloadField, unless reload allows replacing it, in which case it
// and the tables interleaved in it are cleared and loaded again.
func Decide(s workload.Schema, wants []Marker, st State, reload bool, reloadField string) (Plan, error) {
	if len(st.Other) > 0 && !reload {
		return Plan{}, st.MismatchError(reloadField)
	}
	p := Plan{Clear: ToReload(s, st)}
	for _, w := range wants {
		missing := slices.ContainsFunc(st.Missing, func(m Marker) bool { return m.Table == w.Table })
		if missing || p.Reloads(w.Table) {
			p.Load = append(p.Load, w)
		} else {
			p.Keep = append(p.Keep, w)
		}
	}
	return p, nil
}

// PlanLoad reads the markers of the dataset d of schema s, decides what to
// load (Decide) and clears the tables the plan reloads: afterwards the
// database lacks exactly the plan's Load tables. reloadField names d's
// reload flag in errors.
func PlanLoad(ctx context.Context, c *spanner.Client, s workload.Schema, d v1alpha1.DatasetSpec, reloadField string) (Plan, error) {
	wants := Wants(s, *d.Rows)
	st, err := Check(ctx, c, wants)
	if err != nil {
		return Plan{}, err
	}
	p, err := Decide(s, wants, st, d.Reload, reloadField)
	if err != nil {
		return Plan{}, err
	}
	if len(p.Clear) > 0 {
		if err := ClearTables(ctx, c, s, p.Clear); err != nil {
			return Plan{}, err
		}
	}
	return p, nil
}

// Load is what a load of some tables of a dataset writes.
type Load struct {
	// Schema writes only the tables' rows of a unit.
	Schema workload.Schema
	// Units is where the load ends: it spans units [0, Units), those that
	// hold a row of the tables.
	Units int64
	// Markers are written once the load is complete.
	Markers []Marker
}

// LoadOf is the load of the named tables of s's dataset of rows units;
// no names is every table. The names may come from a ConfigMap: one that
// is not a table of the dataset, or named twice, is an error.
func LoadOf(s workload.Schema, rows int64, tables []string) (Load, error) {
	wants := Wants(s, rows)
	if len(tables) == 0 {
		return Load{Schema: s, Units: rows, Markers: wants}, nil
	}
	var markers []Marker
	for i, name := range tables {
		at := slices.IndexFunc(wants, func(m Marker) bool { return m.Table == name })
		switch {
		case at < 0:
			return Load{}, fmt.Errorf("table %q is not a table of the dataset (%s)", name, strings.Join(tableNames(wants), ", "))
		case slices.Contains(tables[:i], name):
			return Load{}, fmt.Errorf("table %q is named twice", name)
		}
		markers = append(markers, wants[at])
	}
	ts, ok := s.(workload.TableSet)
	if !ok {
		return Load{Schema: s, Units: rows, Markers: markers}, nil
	}
	return Load{Schema: ts.Only(tables), Units: ts.UnitsOf(tables), Markers: markers}, nil
}
