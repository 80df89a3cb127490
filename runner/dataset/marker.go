// Package dataset preloads a workload's rows into a database and records
// what it loaded in a marker table, so that a later run on the same database
// skips the load when the dataset matches and refuses (or, when asked,
// reloads) when it does not.
package dataset

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"cloud.google.com/go/spanner"
	"google.golang.org/grpc/codes"

	"github.com/spanbench/spanbench/runner/workload"
)

// MarkerTable records the datasets loaded into a database, one row per
// workload table.
const MarkerTable = "SpanbenchDataset"

// MarkerDDL creates the marker table.
const MarkerDDL = `CREATE TABLE ` + MarkerTable + ` (
  TableName STRING(MAX) NOT NULL,
  SchemaHash STRING(64) NOT NULL,
  RowCount INT64 NOT NULL,
  LoadedAt TIMESTAMP NOT NULL OPTIONS (allow_commit_timestamp=true),
) PRIMARY KEY (TableName)`

// Marker is what was loaded into a table.
type Marker struct {
	// Table is the workload's main table.
	Table string
	// SchemaHash identifies the DDL and row generator that produced the rows.
	SchemaHash string
	// Rows is the number of preloaded rows.
	Rows int64
}

// Want is the marker a fully loaded dataset of this schema and size has.
// The hash covers the DDL, the schema's parameters (field size) and the
// generator's version, so any change to what a row holds is a new dataset.
func Want(s workload.Schema, rows int64) Marker {
	h := sha256.New()
	h.Write([]byte(strings.Join(s.DDL(), ";\n")))
	fmt.Fprintf(h, "\n%T%+v\ngenerator %d", s, s, workload.GeneratorVersion)
	return Marker{Table: s.Table(), SchemaHash: hex.EncodeToString(h.Sum(nil))[:16], Rows: rows}
}

// ReadMarker returns the marker of table, or ok=false when it has none (a
// new database, or a load that did not finish).
func ReadMarker(ctx context.Context, c *spanner.Client, table string) (m Marker, ok bool, err error) {
	row, err := c.Single().ReadRow(ctx, MarkerTable, spanner.Key{table}, []string{"TableName", "SchemaHash", "RowCount"})
	if spanner.ErrCode(err) == codes.NotFound {
		return Marker{}, false, nil
	}
	if err != nil {
		return Marker{}, false, fmt.Errorf("reading the dataset marker: %w", err)
	}
	if err := row.Columns(&m.Table, &m.SchemaHash, &m.Rows); err != nil {
		return Marker{}, false, fmt.Errorf("reading the dataset marker: %w", err)
	}
	return m, true, nil
}

// WriteMarker records a completed load.
func WriteMarker(ctx context.Context, c *spanner.Client, m Marker) error {
	_, err := c.Apply(ctx, []*spanner.Mutation{spanner.InsertOrUpdate(MarkerTable,
		[]string{"TableName", "SchemaHash", "RowCount", "LoadedAt"},
		[]any{m.Table, m.SchemaHash, m.Rows, spanner.CommitTimestamp})})
	if err != nil {
		return fmt.Errorf("writing the dataset marker: %w", err)
	}
	return nil
}

// ErrMismatch says the database holds another dataset than the spec asks
// for, and the spec does not allow replacing it.
var ErrMismatch = errors.New("dataset mismatch")

// Clear deletes every row of table and its marker, before a reload.
// Partitioned DML deletes any number of rows without one huge transaction.
func Clear(ctx context.Context, c *spanner.Client, table string) error {
	if _, err := c.PartitionedUpdate(ctx, spanner.Statement{SQL: "DELETE FROM " + table + " WHERE true"}); err != nil {
		return fmt.Errorf("clearing %s: %w", table, err)
	}
	_, err := c.Apply(ctx, []*spanner.Mutation{spanner.Delete(MarkerTable, spanner.Key{table})})
	return err
}
