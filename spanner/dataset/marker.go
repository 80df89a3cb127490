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

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/ddl"
	"github.com/spanbench/spanbench/spanner/workload"
)

// MarkerTable records the datasets loaded into a database, one row per
// workload table.
const MarkerTable = "SpanbenchDataset"

// markerDDL creates the marker table in each dialect, with the same names
// (PostgreSQL quotes them), so that ReadMarker and WriteMarker serve both.
var markerDDL = map[v1alpha1.Dialect]string{
	v1alpha1.DialectGoogleSQL: `CREATE TABLE SpanbenchDataset (
  TableName STRING(MAX) NOT NULL,
  SchemaHash STRING(64) NOT NULL,
  RowCount INT64 NOT NULL,
  LoadedAt TIMESTAMP NOT NULL OPTIONS (allow_commit_timestamp=true),
) PRIMARY KEY (TableName)`,
	v1alpha1.DialectPostgreSQL: `CREATE TABLE "SpanbenchDataset" (
  "TableName" varchar NOT NULL,
  "SchemaHash" varchar(64) NOT NULL,
  "RowCount" bigint NOT NULL,
  "LoadedAt" spanner.commit_timestamp NOT NULL,
  PRIMARY KEY ("TableName")
)`,
}

// MarkerDDL creates the marker table in dialect d ("" is GoogleSQL); it is
// "" for a dialect spanbench does not speak (workload.SchemaFor refuses
// those first).
func MarkerDDL(d v1alpha1.Dialect) string { return markerDDL[d.OrDefault()] }

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
// The hash covers the DDL in the schema's dialect, the schema's parameters
// (field size, dialect) and the generator's version, so any change to what
// a row holds is a new dataset, and a GoogleSQL and a PostgreSQL dataset
// never match.
func Want(s workload.Schema, rows int64) Marker {
	return Marker{Table: s.Table(), SchemaHash: hash(s, fmt.Sprintf("%+v", s)), Rows: rows}
}

// hash is a marker's schema hash: the DDL, the schema's type, what
// identifies its rows, and the generator's version.
func hash(s workload.Schema, identity string) string {
	h := sha256.New()
	h.Write([]byte(strings.Join(s.DDL(), ";\n")))
	fmt.Fprintf(h, "\n%T%s\ngenerator %d", s, identity, workload.GeneratorVersion)
	return hex.EncodeToString(h.Sum(nil))[:16]
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
	if _, err := c.Apply(ctx, []*spanner.Mutation{markerMutation(m)}); err != nil {
		return fmt.Errorf("writing the dataset marker: %w", err)
	}
	return nil
}

func markerMutation(m Marker) *spanner.Mutation {
	return spanner.InsertOrUpdate(MarkerTable, []string{"TableName", "SchemaHash", "RowCount", "LoadedAt"},
		[]any{m.Table, m.SchemaHash, m.Rows, spanner.CommitTimestamp})
}

// ErrMismatch says the database holds another dataset than the spec asks
// for, and the spec does not allow replacing it.
var ErrMismatch = errors.New("dataset mismatch")

// Clear deletes every row of the schema's tables and their markers, before
// a reload.
func Clear(ctx context.Context, c *spanner.Client, s workload.Schema) error {
	var tables []string
	for _, m := range Wants(s, 0) {
		tables = append(tables, m.Table)
	}
	return ClearTables(ctx, c, s, tables)
}

// ClearTables deletes every row of some of the schema's tables, given
// parents first, and their markers. Children are emptied before their
// parents, which ON DELETE NO ACTION requires.
func ClearTables(ctx context.Context, c *spanner.Client, s workload.Schema, tables []string) error {
	for i := len(tables) - 1; i >= 0; i-- {
		if err := clearTable(ctx, c, s.Dialect(), tables[i]); err != nil {
			return err
		}
	}
	return nil
}

// clearTable deletes a table's rows, then its marker. Partitioned DML
// deletes any number of rows without one huge transaction.
func clearTable(ctx context.Context, c *spanner.Client, d v1alpha1.Dialect, table string) error {
	var del string
	switch d {
	case v1alpha1.DialectGoogleSQL:
		del = "DELETE FROM `" + table + "` WHERE true"
	case v1alpha1.DialectPostgreSQL:
		del = "DELETE FROM " + ddl.PostgreSQLName(table) + " WHERE true"
	default:
		return fmt.Errorf("clearing %s: no SQL for dialect %q", table, d)
	}
	if _, err := c.PartitionedUpdate(ctx, spanner.Statement{SQL: del}); err != nil {
		// The emulator parses partitioned DML as GoogleSQL even in a
		// PostgreSQL database, and refuses a quoted name as a string
		// literal (InvalidArgument). A range delete in one transaction
		// empties the small tables an emulator holds.
		if d != v1alpha1.DialectPostgreSQL || spanner.ErrCode(err) != codes.InvalidArgument {
			return fmt.Errorf("clearing %s: %w", table, err)
		}
		if _, rerr := c.Apply(ctx, []*spanner.Mutation{spanner.Delete(table, spanner.AllKeys())}); rerr != nil {
			return fmt.Errorf("clearing %s: %w", table, errors.Join(err, rerr))
		}
	}
	_, err := c.Apply(ctx, []*spanner.Mutation{spanner.Delete(MarkerTable, spanner.Key{table})})
	return err
}
