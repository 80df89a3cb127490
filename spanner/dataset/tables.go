package dataset

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"cloud.google.com/go/spanner"

	"github.com/spanbench/spanbench/spanner/workload"
)

// Wants are the markers a fully loaded dataset of this schema and size
// has: one per table for a dataset of several tables (a Custom workload's,
// workload.TableSet), each with the table's own row count and a hash of
// what its rows depend on; Want's one otherwise.
func Wants(s workload.Schema, rows int64) []Marker {
	ts, ok := s.(workload.TableSet)
	if !ok {
		return []Marker{Want(s, rows)}
	}
	tables := ts.DatasetTables()
	out := make([]Marker, len(tables))
	for i, t := range tables {
		out[i] = Marker{Table: t.Name, SchemaHash: hash(s, t.Identity), Rows: t.Rows}
	}
	return out
}

// State is how the database's markers compare with the wanted ones.
type State struct {
	// Match are the tables loaded as wanted; Missing have no marker (never
	// loaded, or a load that did not finish); Other hold another dataset.
	// Each lists wanted markers.
	Match, Missing, Other []Marker
	// Found are the markers of the Other tables, by table.
	Found map[string]Marker
}

// Complete reports whether every table holds its wanted dataset.
func (st State) Complete() bool { return len(st.Missing) == 0 && len(st.Other) == 0 }

// Check reads the marker of every wanted table.
func Check(ctx context.Context, c *spanner.Client, wants []Marker) (State, error) {
	st := State{Found: map[string]Marker{}}
	for _, w := range wants {
		have, ok, err := ReadMarker(ctx, c, w.Table)
		switch {
		case err != nil:
			return State{}, err
		case !ok:
			st.Missing = append(st.Missing, w)
		case have == w:
			st.Match = append(st.Match, w)
		default:
			st.Other = append(st.Other, w)
			st.Found[w.Table] = have
		}
	}
	return st, nil
}

// MismatchError is the refusal of a database holding another dataset
// than wanted; field names the spec's reload flag for the reader.
func (st State) MismatchError(reloadField string) error {
	parts := make([]string, len(st.Other))
	for i, w := range st.Other {
		have := st.Found[w.Table]
		parts[i] = fmt.Sprintf("table %s holds %d rows of schema %s, the spec asks for %d rows of schema %s", w.Table, have.Rows, have.SchemaHash, w.Rows, w.SchemaHash)
	}
	return fmt.Errorf("%w: %s; set %s: true to replace it, or use another database", ErrMismatch, strings.Join(parts, "; "), reloadField)
}

// ToReload are the tables a reload replaces: those holding another
// dataset and, below them, every table interleaved in one (a parent's
// rows are deleted with theirs, and give them their keys), parents first.
func ToReload(s workload.Schema, st State) []string {
	var out []string
	for _, w := range st.Other {
		out = append(out, w.Table)
	}
	ts, ok := s.(workload.TableSet)
	if !ok {
		return out
	}
	var ordered []string
	for _, t := range ts.DatasetTables() {
		if slices.Contains(out, t.Name) || slices.Contains(ordered, t.Parent) && t.Parent != "" {
			ordered = append(ordered, t.Name)
		}
	}
	return ordered
}

// WriteMarkers records completed loads of several tables in one commit.
func WriteMarkers(ctx context.Context, c *spanner.Client, ms []Marker) error {
	muts := make([]*spanner.Mutation, len(ms))
	for i, m := range ms {
		muts[i] = markerMutation(m)
	}
	if _, err := c.Apply(ctx, muts); err != nil {
		return fmt.Errorf("writing the dataset markers: %w", err)
	}
	return nil
}
