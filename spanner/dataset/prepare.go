package dataset

import (
	"context"

	"cloud.google.com/go/spanner"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/workload"
)

// Outcome says what Prepare did.
type Outcome struct {
	// Skipped is true when the database already held the dataset.
	Skipped bool
	// Reloaded is true when a different dataset was replaced.
	Reloaded bool
	// Marker is the dataset the database now holds (its first table's,
	// for a dataset of several tables).
	Marker Marker
	// Loaded are the tables this call loaded; Kept those it left as they
	// were, their markers matching.
	Loaded, Kept []string
}

// Prepare makes the database hold the dataset the spec asks for, table by
// table (a Custom workload's tables have a marker each; the built-in
// workloads one), as PlanLoad decides: nothing to do for a table whose
// marker matches; a load of a table without one (a new database, a new
// table, or an unfinished load, which the idempotent load completes); a
// refusal with ErrMismatch when a table holds another dataset, unless
// d.Reload allows replacing it (and the tables interleaved in it). Only
// the tables missing or replaced are loaded, and only their markers
// written. The marker table must exist (MarkerDDL of the schema's
// dialect).
func Prepare(ctx context.Context, c *spanner.Client, s workload.Schema, d v1alpha1.DatasetSpec, progress func(Progress)) (Outcome, error) {
	p, err := PlanLoad(ctx, c, s, d, "dataset.reload")
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{Marker: Wants(s, *d.Rows)[0], Skipped: p.Complete(), Reloaded: len(p.Clear) > 0, Loaded: p.LoadTables(), Kept: p.KeepTables()}
	if out.Skipped {
		return out, nil
	}
	load, err := LoadOf(s, *d.Rows, out.Loaded)
	if err != nil {
		return Outcome{}, err
	}
	if err := Range(ctx, c, load.Schema, 0, load.Units, WritersOf(d, 1), progress); err != nil {
		return Outcome{}, err
	}
	return out, WriteMarkers(ctx, c, load.Markers)
}
