package dataset

import (
	"context"
	"fmt"

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
	// Marker is the dataset the database now holds.
	Marker Marker
}

// Prepare makes the database hold the dataset the spec asks for: nothing to
// do when the marker matches; a load when there is no marker (a new database
// or an unfinished load, which the idempotent load completes); a refusal
// with ErrMismatch when another dataset is there, unless d.Reload allows
// replacing it. The marker table must exist (MarkerDDL of the schema's
// dialect).
func Prepare(ctx context.Context, c *spanner.Client, s workload.Schema, d v1alpha1.DatasetSpec, progress func(Progress)) (Outcome, error) {
	want := Want(s, *d.Rows)
	have, ok, err := ReadMarker(ctx, c, s.Table())
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{Marker: want}
	switch {
	case ok && have == want:
		out.Skipped = true
		return out, nil
	case ok && !d.Reload:
		return Outcome{}, fmt.Errorf("%w: table %s holds %d rows of schema %s, the spec asks for %d rows of schema %s; "+
			"set dataset.reload: true to replace it, or use another database", ErrMismatch, s.Table(), have.Rows, have.SchemaHash, want.Rows, want.SchemaHash)
	case ok:
		if err := Clear(ctx, c, s); err != nil {
			return Outcome{}, err
		}
		out.Reloaded = true
	}
	if err := Range(ctx, c, s, 0, want.Rows, int(*d.BatchRows), int(*d.Loaders), progress); err != nil {
		return Outcome{}, err
	}
	return out, WriteMarker(ctx, c, want)
}
