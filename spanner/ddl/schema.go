// Package ddl reads a Custom workload's schema and statements — with
// memefish, Spanner's GoogleSQL parser, or libpg_query, PostgreSQL's, for
// Spanner's PostgreSQL dialect — so that a bad schema or statement is
// refused before anything starts, and the validator and the engine see the
// same tables, columns and parameters.
package ddl

import (
	"fmt"
	"strings"

	"github.com/cloudspannerecosystem/memefish"
	"github.com/cloudspannerecosystem/memefish/ast"
)

// Column is one column of a table.
type Column struct {
	Name string
	// Type is the scalar type name (INT64, STRING, TIMESTAMP...), of the
	// elements for an array.
	Type    string
	Array   bool
	NotNull bool
	// CommitTimestamp is allow_commit_timestamp=true.
	CommitTimestamp bool
}

// Table is one CREATE TABLE.
type Table struct {
	Name    string
	Columns []*Column
	// Key lists the primary key's columns in order.
	Key []string
	// Parent is the table it is interleaved in, or "".
	Parent string
}

// Index is one CREATE INDEX.
type Index struct {
	Name    string
	Table   string
	Columns []string
}

// Schema is what the DDL creates.
type Schema struct {
	Tables  []*Table
	Indexes []*Index
	// PostgreSQL is true for DDL in Spanner's PostgreSQL dialect, whose
	// statements are then read as PostgreSQL too.
	PostgreSQL bool
}

// ParamText is how a statement of the schema's dialect writes parameter
// name: @name in GoogleSQL, $n for pn in PostgreSQL.
func (s *Schema) ParamText(name string) string {
	if n, ok := strings.CutPrefix(name, "p"); s.PostgreSQL && ok {
		return "$" + n
	}
	return "@" + name
}

// StatementError is a statement that does not parse or does not fit the
// schema; Index is its position in the list given.
type StatementError struct {
	Index int
	Err   error
}

func (e *StatementError) Error() string { return e.Err.Error() }

// Parse reads the DDL statements. Only CREATE TABLE and CREATE INDEX are
// accepted: they are what a benchmark's schema needs, and what the loader
// knows how to fill.
func Parse(stmts []string) (*Schema, error) {
	s := &Schema{}
	for i, text := range stmts {
		d, err := memefish.ParseDDL("statement", text)
		if err != nil {
			return nil, &StatementError{Index: i, Err: fmt.Errorf("does not parse: %s", firstLine(err.Error()))}
		}
		if err := s.add(d); err != nil {
			return nil, &StatementError{Index: i, Err: err}
		}
	}
	return s, nil
}

func (s *Schema) add(d ast.DDL) error {
	switch d := d.(type) {
	case *ast.CreateTable:
		return s.addTable(d)
	case *ast.CreateIndex:
		return s.addIndex(d)
	default:
		return fmt.Errorf("only CREATE TABLE and CREATE INDEX are supported")
	}
}

func (s *Schema) addTable(d *ast.CreateTable) error {
	t := &Table{Name: pathName(d.Name)}
	if err := s.claim("table", t.Name); err != nil {
		return err
	}
	for _, c := range d.Columns {
		col, err := column(c)
		if err != nil {
			return err
		}
		if err := s.addColumn(t, col); err != nil {
			return err
		}
	}
	for _, k := range d.PrimaryKeys {
		c := s.columnRef(t, k.Name.Name)
		if c == nil {
			return fmt.Errorf("table %s: primary key column %s is not a column of the table", t.Name, k.Name.Name)
		}
		t.Key = append(t.Key, c.Name)
	}
	if d.Cluster != nil {
		p := s.tableRef(pathName(d.Cluster.TableName))
		if p == nil {
			return fmt.Errorf("table %s: is interleaved in %s, which no earlier statement creates", t.Name, pathName(d.Cluster.TableName))
		}
		t.Parent = p.Name
	}
	s.Tables = append(s.Tables, t)
	return nil
}

func column(c *ast.ColumnDef) (*Column, error) {
	col := &Column{Name: c.Name.Name, NotNull: c.NotNull}
	typ := c.Type
	if a, ok := typ.(*ast.ArraySchemaType); ok {
		col.Array = true
		typ = a.Item
	}
	switch t := typ.(type) {
	case *ast.ScalarSchemaType:
		col.Type = string(t.Name)
	case *ast.SizedSchemaType:
		col.Type = string(t.Name)
	default:
		return nil, fmt.Errorf("column %s: type %s is not supported", col.Name, typ.SQL())
	}
	if c.Options != nil {
		for _, o := range c.Options.Records {
			if strings.EqualFold(o.Name.Name, "allow_commit_timestamp") {
				b, ok := o.Value.(*ast.BoolLiteral)
				col.CommitTimestamp = ok && b.Value
			}
		}
	}
	return col, nil
}

func (s *Schema) addIndex(d *ast.CreateIndex) error {
	ix := &Index{Name: pathName(d.Name), Table: pathName(d.TableName)}
	if err := s.claim("index", ix.Name); err != nil {
		return err
	}
	t := s.tableRef(ix.Table)
	if t == nil {
		return fmt.Errorf("index %s: table %s is not created by an earlier statement", ix.Name, ix.Table)
	}
	ix.Table = t.Name
	for _, k := range d.Keys {
		c := s.columnRef(t, k.Name.Name)
		if c == nil {
			return fmt.Errorf("index %s: column %s is not a column of table %s", ix.Name, k.Name.Name, t.Name)
		}
		ix.Columns = append(ix.Columns, c.Name)
	}
	s.Indexes = append(s.Indexes, ix)
	return nil
}

// Table finds a table by a name the spec gives: without regard to case,
// which finds at most one (see names.go).
func (s *Schema) Table(name string) *Table {
	for _, t := range s.Tables {
		if sameObject(t.Name, name) {
			return t
		}
	}
	return nil
}

// Index finds an index of a table by names the spec gives.
func (s *Schema) Index(table, name string) *Index {
	for _, ix := range s.Indexes {
		if sameObject(ix.Name, name) && sameObject(ix.Table, table) {
			return ix
		}
	}
	return nil
}

// Column finds a column by a name the spec gives.
func (t *Table) Column(name string) *Column {
	for _, c := range t.Columns {
		if sameObject(c.Name, name) {
			return c
		}
	}
	return nil
}

// IsKey reports whether the column, named as the spec or the DDL names
// it, is part of the primary key.
func (t *Table) IsKey(name string) bool {
	for _, k := range t.Key {
		if sameObject(k, name) {
			return true
		}
	}
	return false
}

// taken says which table or index already has name, regardless of case
// (tables and indexes share one namespace): its kind and name, or "".
func (s *Schema) taken(name string) (kind, have string) {
	for _, t := range s.Tables {
		if sameObject(t.Name, name) {
			return "table", t.Name
		}
	}
	for _, ix := range s.Indexes {
		if sameObject(ix.Name, name) {
			return "index", ix.Name
		}
	}
	return "", ""
}

// claim checks that a new table or index may be named name ("" is a
// PostgreSQL index left for the database to name).
func (s *Schema) claim(kind, name string) error {
	switch haveKind, have := s.taken(name); {
	case name == "" || have == "":
		return nil
	case haveKind == kind && s.refersTo(name, have):
		return fmt.Errorf("%s %s is created twice", kind, name)
	default:
		return fmt.Errorf("%s %s: %s", kind, name, nameClash(haveKind, have))
	}
}

// nameClash says that a name is taken by another object.
func nameClash(kind, have string) string {
	return fmt.Sprintf("%s %s has this name (Spanner's names must differ in more than case)", kind, have)
}

// addColumn adds a column to t, refusing a second of the same name
// regardless of case.
func (s *Schema) addColumn(t *Table, c *Column) error {
	if have := t.Column(c.Name); have != nil {
		if s.refersTo(c.Name, have.Name) {
			return fmt.Errorf("table %s: column %s is defined twice", t.Name, c.Name)
		}
		return fmt.Errorf("table %s: column %s: %s", t.Name, c.Name, nameClash("column", have.Name))
	}
	t.Columns = append(t.Columns, c)
	return nil
}

func pathName(p *ast.Path) string {
	names := make([]string, len(p.Idents))
	for i, id := range p.Idents {
		names[i] = id.Name
	}
	return strings.Join(names, ".")
}

// firstLine keeps memefish's message and drops the source excerpt it
// appends, which the field error already shows as the statement.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
