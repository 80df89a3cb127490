package ddl

import (
	"fmt"
	"regexp"
	"strings"
)

// pgTypes maps the PostgreSQL types Spanner's PostgreSQL interface has
// (as the parser names them) to the Spanner type a column of that type
// holds, which generators and values are written for.
var pgTypes = map[string]string{
	"int8":        "INT64",
	"bool":        "BOOL",
	"bytea":       "BYTES",
	"date":        "DATE",
	"float8":      "FLOAT64",
	"float4":      "FLOAT32",
	"jsonb":       "JSON",
	"numeric":     "NUMERIC",
	"text":        "STRING",
	"varchar":     "STRING",
	"timestamptz": "TIMESTAMP",
}

// interleave is Spanner's PostgreSQL extension that no PostgreSQL parser
// knows: `INTERLEAVE IN PARENT p [ON DELETE ...]` after a CREATE TABLE's
// column list, `INTERLEAVE IN p` after a CREATE INDEX's. It always follows
// the statement's last parenthesis (a CREATE INDEX's WHERE, which may come
// after it, is `col IS NOT NULL [AND ...]`, without one), so it is found
// there, outside any literal, and cut out before parsing.
var interleave = regexp.MustCompile(`(?is)^(.*\))\s*INTERLEAVE\s+IN\s+(PARENT\s+)?("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)(\s+ON\s+DELETE\s+(?:CASCADE|NO\s+ACTION))?([^)]*)$`)

// ParsePostgreSQL reads DDL in Spanner's PostgreSQL dialect with
// libpg_query, PostgreSQL's own parser (pure Go: compiled to WebAssembly
// and run by wazero), after cutting out the INTERLEAVE clause it does not
// know. As in GoogleSQL, only CREATE TABLE and CREATE INDEX are accepted.
func ParsePostgreSQL(stmts []string) (*Schema, error) {
	s := &Schema{PostgreSQL: true}
	for i, text := range stmts {
		if err := s.addPG(text); err != nil {
			return nil, &StatementError{Index: i, Err: err}
		}
	}
	return s, nil
}

func (s *Schema) addPG(text string) error {
	parent, isParent := "", false
	if m := interleave.FindStringSubmatch(text); m != nil {
		parent, isParent = pgIdent(m[3]), m[2] != ""
		text = m[1] + m[5]
		if m[4] != "" && !isParent {
			return fmt.Errorf("ON DELETE belongs to INTERLEAVE IN PARENT of a table")
		}
	}
	stmt, err := parsePG(text)
	if err != nil {
		return err
	}
	switch typ, n := pgNode(stmt); typ {
	case "CreateStmt":
		if parent != "" && !isParent {
			return fmt.Errorf("a table is interleaved with INTERLEAVE IN PARENT, an index with INTERLEAVE IN")
		}
		return s.addPGTable(n, parent)
	case "IndexStmt":
		if isParent {
			return fmt.Errorf("an index is interleaved with INTERLEAVE IN, a table with INTERLEAVE IN PARENT")
		}
		return s.addPGIndex(n)
	}
	return fmt.Errorf("only CREATE TABLE and CREATE INDEX are supported")
}

// addPGTable reads a CreateStmt.
func (s *Schema) addPGTable(d *pgObject, parent string) error {
	t := &Table{Name: d.obj("relation").str("relname")}
	if err := s.claim("table", t.Name); err != nil {
		return err
	}
	var keys []string
	for _, e := range d.list("tableElts") {
		switch typ, e := pgNode(e); typ {
		case "ColumnDef":
			col, key, err := pgColumn(e)
			if err != nil {
				return err
			}
			if err := s.addColumn(t, col); err != nil {
				return err
			}
			if key {
				keys = append(keys, col.Name)
			}
		case "Constraint":
			if e.str("contype") == "CONSTR_PRIMARY" {
				keys = append(keys, stringNodes(e.list("keys"))...)
			}
		}
	}
	if len(keys) == 0 {
		return fmt.Errorf("table %s has no PRIMARY KEY", t.Name)
	}
	for _, k := range keys {
		c := s.columnRef(t, k)
		if c == nil {
			return fmt.Errorf("table %s: primary key column %s is not a column of the table%s", t.Name, k, s.columnHint(k, t))
		}
		t.Key = append(t.Key, c.Name)
	}
	if parent != "" {
		p := s.tableRef(parent)
		if p == nil {
			return fmt.Errorf("table %s: is interleaved in %s, which no earlier statement creates%s", t.Name, parent, s.tableHint(parent))
		}
		t.Parent = p.Name
	}
	s.Tables = append(s.Tables, t)
	return nil
}

// pgColumn reads a ColumnDef; key is an inline PRIMARY KEY.
func pgColumn(c *pgObject) (col *Column, key bool, err error) {
	col = &Column{Name: c.str("colname"), NotNull: c.boolean("is_not_null")}
	tn := c.obj("typeName")
	names := stringNodes(tn.list("names"))
	typ := ""
	if len(names) > 0 {
		typ = names[len(names)-1]
	}
	col.Array = len(tn.list("arrayBounds")) > 0
	switch {
	case len(names) == 2 && names[0] == "spanner" && typ == "commit_timestamp":
		col.Type, col.CommitTimestamp = "TIMESTAMP", true
	case len(names) == 1 || len(names) > 1 && names[0] == "pg_catalog":
		col.Type = pgTypes[typ]
	}
	if col.Type == "" {
		return nil, false, fmt.Errorf("column %s: type %s is not supported", col.Name, strings.Join(names, "."))
	}
	for _, n := range c.list("constraints") {
		switch pgNodeOf(n, "Constraint").str("contype") {
		case "CONSTR_NOTNULL":
			col.NotNull = true
		case "CONSTR_PRIMARY":
			key = true
		}
	}
	return col, key, nil
}

// addPGIndex reads an IndexStmt.
func (s *Schema) addPGIndex(d *pgObject) error {
	ix := &Index{Name: d.str("idxname"), Table: d.obj("relation").str("relname")}
	if err := s.claim("index", ix.Name); err != nil {
		return err
	}
	t := s.tableRef(ix.Table)
	if t == nil {
		return fmt.Errorf("index %s: table %s is not created by an earlier statement%s", ix.Name, ix.Table, s.tableHint(ix.Table))
	}
	ix.Table = t.Name
	for _, p := range d.list("indexParams") {
		name := pgNodeOf(p, "IndexElem").str("name")
		c := s.columnRef(t, name)
		if c == nil {
			return fmt.Errorf("index %s: column %s is not a column of table %s%s", ix.Name, name, t.Name, s.columnHint(name, t))
		}
		ix.Columns = append(ix.Columns, c.Name)
	}
	s.Indexes = append(s.Indexes, ix)
	return nil
}

// stringNodes are the values of a list of String nodes (names).
func stringNodes(ns []any) []string {
	out := make([]string, 0, len(ns))
	for _, n := range ns {
		if v := pgNodeOf(n, "String"); v != nil {
			out = append(out, v.str("sval"))
		}
	}
	return out
}
