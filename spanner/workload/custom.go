package workload

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"

	"cloud.google.com/go/spanner"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/customcheck"
	"github.com/spanbench/spanbench/spanner/ddl"
)

// customSchema is a Custom workload's schema and dataset: the user's DDL,
// and per table a row count and generators. Its dataset is counted in
// units: unit k is row k of every table that is not interleaved (and has
// more than k rows) with all the rows interleaved under it, so that the
// loader's slices of units load every table in parallel and a unit is a
// pure function of k.
type customSchema struct {
	// hash identifies the DDL and the dataset spec; the dataset marker's
	// schema hash covers it through String.
	hash   string
	ddl    []string
	schema *ddl.Schema
	// dialect is the database's, which the DDL and SQL are written in.
	dialect v1alpha1.Dialect
	// tables are in the spec's order, parents before children.
	tables []*customTable
	units  int64
}

// customTable is one table's dataset.
type customTable struct {
	t         *ddl.Table
	parent    *customTable
	children  []*customTable
	perParent int64
	// rows is the table's total row count.
	rows int64
	gens []*columnGen
	salt uint64
	// spec is the table's dataset spec, which its marker's identity covers.
	spec *v1alpha1.CustomTableSpec
}

// newCustomSchema reads a resolved, valid Custom workload written in
// dialect d (GoogleSQL or PostgreSQL).
func newCustomSchema(spec *v1alpha1.WorkloadSpec, d v1alpha1.Dialect) (*customSchema, error) {
	// The API server checks a Custom run only when the BenchmarkRun
	// webhook is installed; the engine checks again rather than trust it,
	// so that a run admitted without it fails with the validator's errors,
	// never a panic.
	if errs := customcheck.Workload(field.NewPath("workload"), spec, d); len(errs) > 0 {
		return nil, fmt.Errorf("invalid Custom workload: %w", errs.ToAggregate())
	}
	c := spec.Custom
	schema, err := customcheck.Schema(c, d)
	if err != nil {
		return nil, fmt.Errorf("custom.ddl: %w", err)
	}
	js, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(js)
	s := &customSchema{hash: hex.EncodeToString(sum[:8]), ddl: c.DDL, schema: schema, dialect: d.OrDefault()}
	for i := range c.Tables {
		ct, err := s.addTable(&c.Tables[i])
		if err != nil {
			return nil, fmt.Errorf("custom.tables[%d]: %w", i, err)
		}
		if ct.parent == nil {
			s.units = max(s.units, ct.rows)
		}
	}
	for _, ct := range s.tables {
		for _, g := range ct.gens {
			if err := g.resolve(s); err != nil {
				return nil, fmt.Errorf("table %s, column %s: %w", ct.t.Name, g.col.Name, err)
			}
		}
	}
	return s, nil
}

func (s *customSchema) addTable(spec *v1alpha1.CustomTableSpec) (*customTable, error) {
	t := s.schema.Table(spec.Name)
	if t == nil {
		return nil, fmt.Errorf("table %s is not in the DDL", spec.Name)
	}
	// The salt folds the name (as it always has, so that loaded values
	// stay the same); tables differing only in case cannot exist, so no
	// two tables of a schema share it.
	h := fnv.New64a()
	_, _ = h.Write([]byte(strings.ToLower(t.Name)))
	ct := &customTable{t: t, salt: h.Sum64(), spec: spec}
	if t.Parent != "" {
		ct.parent = s.table(t.Parent)
		if ct.parent == nil || spec.RowsPerParent == nil {
			return nil, fmt.Errorf("table %s: its parent %s must be listed before it, and it needs rowsPerParent", t.Name, t.Parent)
		}
		ct.perParent = int64(*spec.RowsPerParent)
		ct.rows = ct.parent.rows * ct.perParent
		ct.parent.children = append(ct.parent.children, ct)
	} else if spec.Rows != nil {
		ct.rows = *spec.Rows
	}
	for _, col := range t.Columns {
		g := &columnGen{col: col, key: t.IsKey(col.Name), inherited: -1, pg: s.schema.PostgreSQL}
		if ct.parent != nil && ct.parent.t.IsKey(col.Name) {
			g.inherited = ct.parent.columnIndex(col.Name)
		}
		for i := range spec.Columns {
			if t.Column(spec.Columns[i].Name) == col {
				g.spec = &spec.Columns[i].Generator
			}
		}
		ct.gens = append(ct.gens, g)
	}
	s.tables = append(s.tables, ct)
	return ct, nil
}

// table finds a table's dataset by a name the spec gives, or the DDL's,
// as the schema matches it.
func (s *customSchema) table(name string) *customTable {
	t := s.schema.Table(name)
	for _, ct := range s.tables {
		if ct.t == t {
			return ct
		}
	}
	return nil
}

// columnIndex is the position of a column, named in the spec or as the
// DDL stored it, or -1.
func (ct *customTable) columnIndex(name string) int {
	col := ct.t.Column(name)
	for i, c := range ct.t.Columns {
		if c == col {
			return i
		}
	}
	return -1
}

// columns are the table's column names, in DDL order.
func (ct *customTable) columns() []string {
	out := make([]string, len(ct.t.Columns))
	for i, c := range ct.t.Columns {
		out[i] = c.Name
	}
	return out
}

// String identifies the schema for the dataset marker's hash.
func (s *customSchema) String() string { return "custom " + s.hash }

// Dialect is the dialect the DDL and SQL are written in.
func (s *customSchema) Dialect() v1alpha1.Dialect { return s.dialect }

// DDL is the user's DDL.
func (s *customSchema) DDL() []string { return s.ddl }

// Table is the first table that is not interleaved: the dataset marker is
// recorded under its name, with the number of units loaded.
func (s *customSchema) Table() string {
	for _, ct := range s.tables {
		if ct.parent == nil {
			return ct.t.Name
		}
	}
	return s.tables[0].t.Name
}

// Rows are the mutations that write unit k: row k of each table that is
// not interleaved and holds more than k rows, and everything interleaved
// under it. They are InsertOrUpdate and a pure function of k (except
// Timestamp Now and Commit values), so a repeated load converges.
func (s *customSchema) Rows(k int64) []*spanner.Mutation {
	var ms []*spanner.Mutation
	for _, ct := range s.tables {
		if ct.parent == nil && k < ct.rows {
			ms = ct.appendTree(ms, k)
		}
	}
	return ms
}

// appendTree appends row r of ct and, below it, its children's rows.
func (ct *customTable) appendTree(ms []*spanner.Mutation, r int64) []*spanner.Mutation {
	ms = append(ms, spanner.InsertOrUpdate(ct.t.Name, ct.columns(), ct.valuesOf(r)))
	for _, child := range ct.children {
		for j := range child.perParent {
			ms = child.appendTree(ms, r*child.perParent+j)
		}
	}
	return ms
}

// colRand is the generator of column col of row r: seeded by the table,
// the column and the row, so a value is the same in every load and can
// be computed alone (a key, for a read or a Reference).
func (ct *customTable) colRand(col int, r int64) *rand.Rand {
	return rand.New(rand.NewPCG(ct.salt+uint64(col)*0x9e3779b97f4a7c15, uint64(r)))
}

// loadedValue is column i of row r as the loader writes it. A column of
// the parent's key takes the parent row's value. It recurses only up the
// parents and into References, which name key columns that are never
// References themselves (validated), so it ends.
func (ct *customTable) loadedValue(i int, r int64) any {
	g := ct.gens[i]
	if g.inherited >= 0 {
		return ct.parent.loadedValue(g.inherited, r/ct.perParent)
	}
	local := r
	if ct.parent != nil {
		local = r % ct.perParent
	}
	return g.value(ct.colRand(i, r), local)
}

// keyOf is the primary key of row r, computed as the loader writes it.
func (ct *customTable) keyOf(r int64) spanner.Key {
	key := make(spanner.Key, 0, len(ct.t.Key))
	for _, k := range ct.t.Key {
		key = append(key, ct.loadedValue(ct.columnIndex(k), r))
	}
	return key
}

// valuesOf is row r as the loader writes it, in column order.
func (ct *customTable) valuesOf(r int64) []any {
	vals := make([]any, len(ct.gens))
	for i := range ct.gens {
		vals[i] = ct.loadedValue(i, r)
	}
	return vals
}

// rowValuesAt generates a new row at index local (within its parent row,
// whose values are parentValues, for an interleaved table) with rng: an
// inserted row.
func (ct *customTable) rowValuesAt(local int64, parentValues []any, rng *rand.Rand) []any {
	vals := make([]any, len(ct.gens))
	for i, g := range ct.gens {
		if g.inherited >= 0 && parentValues != nil {
			vals[i] = parentValues[g.inherited]
			continue
		}
		vals[i] = g.value(rng, local)
	}
	return vals
}

// unitBytes estimates the data one unit holds: every row of it, each
// column at its generator's average size (16 bytes without one).
func (s *customSchema) unitBytes() int64 {
	var total int64
	for _, ct := range s.tables {
		per := int64(1)
		for p := ct; p.parent != nil; p = p.parent {
			per *= p.perParent
		}
		var row int64
		for _, g := range ct.gens {
			row += g.bytes()
		}
		total += per * row
	}
	return max(total, 1)
}

// bytes is a generated value's average size.
func (g *columnGen) bytes() int64 {
	if g.spec != nil && (g.spec.Type == v1alpha1.GenString || g.spec.Type == v1alpha1.GenBytes) {
		lo := int64(0)
		if g.spec.MinLength != nil {
			lo = int64(*g.spec.MinLength)
		}
		return (lo + int64(*g.spec.MaxLength)) / 2
	}
	return 8 + 8 // a value and its overhead
}
