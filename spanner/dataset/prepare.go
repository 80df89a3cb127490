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
	// Loaded are the tables this call loaded.
	Loaded []string
}

// Prepare makes the database hold the dataset the spec asks for, table by
// table (a Custom workload's tables have a marker each; the built-in
// workloads one): nothing to do for a table whose marker matches; a load
// of a table without one (a new database, a new table, or an unfinished
// load, which the idempotent load completes); a refusal with ErrMismatch
// when a table holds another dataset, unless d.Reload allows replacing it
// (and the tables interleaved in it). Only the tables missing or replaced
// are loaded. The marker table must exist (MarkerDDL of the schema's
// dialect).
func Prepare(ctx context.Context, c *spanner.Client, s workload.Schema, d v1alpha1.DatasetSpec, progress func(Progress)) (Outcome, error) {
	wants := Wants(s, *d.Rows)
	st, err := Check(ctx, c, wants)
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{Marker: wants[0]}
	switch {
	case st.Complete():
		out.Skipped = true
		return out, nil
	case len(st.Other) > 0 && !d.Reload:
		return Outcome{}, st.MismatchError("dataset.reload")
	}
	reload := ToReload(s, st)
	if len(reload) > 0 {
		if err := ClearTables(ctx, c, s, reload); err != nil {
			return Outcome{}, err
		}
		out.Reloaded = true
	}
	load := toLoad(wants, st, reload)
	for _, m := range load {
		out.Loaded = append(out.Loaded, m.Table)
	}
	if err := Range(ctx, c, only(s, load), 0, *d.Rows, int(*d.BatchRows), int(*d.Loaders), progress); err != nil {
		return Outcome{}, err
	}
	return out, WriteMarkers(ctx, c, load)
}
