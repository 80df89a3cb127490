package workload

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"cloud.google.com/go/spanner"
)

// DatasetTable is one table of a dataset that spans several, as its own
// dataset marker records it.
type DatasetTable struct {
	// Name is the table, as the DDL creates it.
	Name string
	// Identity covers everything the table's rows depend on; a change to
	// it makes the table a different dataset.
	Identity string
	// Rows is the table's exact row count once loaded.
	Rows int64
	// Parent is the table it is interleaved in, or "".
	Parent string
}

// TableSet is a Schema whose dataset spans several tables with a marker
// each, so that a partly loaded or partly changed dataset loads only the
// tables that are missing or different.
type TableSet interface {
	Schema
	// DatasetTables are the tables, parents before their children.
	DatasetTables() []DatasetTable
	// Only is the schema restricted to some tables: its Rows(k) write only
	// their rows of unit k.
	Only(tables []string) Schema
	// UnitsOf is how many units hold a row of some of the tables: a load
	// of those tables alone spans units [0, UnitsOf).
	UnitsOf(tables []string) int64
}

// DatasetTables implements TableSet. A table's identity covers the DDL,
// its own dataset spec, and those of the tables its values come from: its
// parents (whose keys it copies) and the tables its References draw keys
// of.
func (s *customSchema) DatasetTables() []DatasetTable {
	out := make([]DatasetTable, len(s.tables))
	for i, ct := range s.tables {
		dt := DatasetTable{Name: ct.t.Name, Rows: ct.rows, Identity: s.identity(ct)}
		if ct.parent != nil {
			dt.Parent = ct.parent.t.Name
		}
		out[i] = dt
	}
	return out
}

// identity hashes what table ct's rows depend on.
func (s *customSchema) identity(ct *customTable) string {
	h := sha256.New()
	h.Write([]byte(string(s.dialect) + "\n" + strings.Join(s.ddl, ";\n")))
	seen := map[*customTable]bool{}
	var add func(t *customTable)
	add = func(t *customTable) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		js, _ := json.Marshal(t.spec) // plain data: cannot fail
		h.Write([]byte("\n" + t.t.Name + " " + string(js)))
		add(t.parent)
		for _, g := range t.gens {
			add(g.ref)
		}
	}
	add(ct)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Only implements TableSet.
func (s *customSchema) Only(tables []string) Schema {
	return customSubset{customSchema: s, only: s.chosen(tables)}
}

// chosen are the named tables' datasets; unknown names are left out.
func (s *customSchema) chosen(tables []string) map[*customTable]bool {
	only := map[*customTable]bool{}
	for _, name := range tables {
		if ct := s.table(name); ct != nil {
			only[ct] = true
		}
	}
	return only
}

// UnitsOf implements TableSet: the largest row count of the tables that
// are not interleaved and hold one of the tables or have one interleaved
// under them (unit k is row k of each such table).
func (s *customSchema) UnitsOf(tables []string) int64 {
	only := s.chosen(tables)
	var units int64
	for _, ct := range s.tables {
		if ct.parent == nil && ct.holdsAny(only) {
			units = max(units, ct.rows)
		}
	}
	return units
}

// holdsAny reports whether ct or a table interleaved under it is chosen.
func (ct *customTable) holdsAny(only map[*customTable]bool) bool {
	if only[ct] {
		return true
	}
	for _, child := range ct.children {
		if child.holdsAny(only) {
			return true
		}
	}
	return false
}

// customSubset is a Custom schema that writes only some of its tables.
type customSubset struct {
	*customSchema
	only map[*customTable]bool
}

// Rows are unit k's rows of the chosen tables.
func (c customSubset) Rows(k int64) []*spanner.Mutation {
	var ms []*spanner.Mutation
	for _, ct := range c.tables {
		if ct.parent == nil && k < ct.rows {
			ms = c.appendTree(ms, ct, k)
		}
	}
	return ms
}

func (c customSubset) appendTree(ms []*spanner.Mutation, ct *customTable, r int64) []*spanner.Mutation {
	if c.only[ct] {
		ms = append(ms, spanner.InsertOrUpdate(ct.t.Name, ct.columns(), ct.valuesOf(r)))
	}
	for _, child := range ct.children {
		for j := range child.perParent {
			ms = c.appendTree(ms, child, r*child.perParent+j)
		}
	}
	return ms
}

var _ TableSet = (*customSchema)(nil)
