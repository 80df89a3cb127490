package ddl

import (
	"fmt"
	"strings"
)

// How Spanner matches the names of tables, columns and indexes — the one
// place that decides it. Two rules, measured on the emulator and stated in
// Spanner's PostgreSQL DDL reference:
//
//   - Uniqueness ignores case in both dialects: no two tables or indexes,
//     and no two columns of a table, may differ only in case (Spanner
//     refuses the second with "Duplicate name in schema"). So a name the
//     spec gives (tables, columns, read, reference, key, mutation), which
//     is no SQL and has no quoting, finds at most one object when matched
//     without regard to case, as the Read API and mutations match it.
//   - A name written in SQL or DDL refers to an object as the dialect reads
//     it: GoogleSQL's are case-insensitive; PostgreSQL folds an unquoted
//     name to lower case and keeps a quoted one exactly, then matches
//     exactly, so `FROM Singers` (singers) does not find a table created
//     as "Singers". libpg_query's parse tree already holds the folded or
//     quoted name; only the INTERLEAVE clause, which it cannot parse, is
//     folded here (pgIdent).

// sameObject reports whether two names would name the same object, which
// Spanner refuses to create twice.
func sameObject(a, b string) bool { return strings.EqualFold(a, b) }

// refersTo reports whether ref, a name as the statement's parser read it,
// names the object stored.
func (s *Schema) refersTo(ref, stored string) bool {
	if s.PostgreSQL {
		return ref == stored
	}
	return strings.EqualFold(ref, stored)
}

// refKey is the key under which a statement's own names (aliases, WITH
// names) are kept, so that refKey(a) == refKey(b) exactly when refersTo
// would match them.
func (s *Schema) refKey(name string) string {
	if s.PostgreSQL {
		return name
	}
	return strings.ToLower(name)
}

// tableRef is the table a statement's name refers to, or nil.
func (s *Schema) tableRef(name string) *Table {
	for _, t := range s.Tables {
		if s.refersTo(name, t.Name) {
			return t
		}
	}
	return nil
}

// columnRef is the column of t a statement's name refers to, or nil.
func (s *Schema) columnRef(t *Table, name string) *Column {
	for _, c := range t.Columns {
		if s.refersTo(name, c.Name) {
			return c
		}
	}
	return nil
}

// unknownTable says that a statement's table name finds no table.
func (s *Schema) unknownTable(name string) error {
	return fmt.Errorf("table %s is not created by the DDL%s", name, s.tableHint(name))
}

// unknownColumn says that a statement's column name is no column of
// tables (named as in).
func (s *Schema) unknownColumn(name, in string, tables ...*Table) error {
	return fmt.Errorf("column %s is not a column of %s%s", name, in, s.columnHint(name, tables...))
}

// tableHint is, in PostgreSQL, how to refer to the table whose name
// differs from name only in case; "" if none does.
func (s *Schema) tableHint(name string) string {
	if t := s.Table(name); t != nil && s.PostgreSQL {
		return caseHint("table", t.Name)
	}
	return ""
}

// columnHint is, in PostgreSQL, how to refer to the column of tables
// whose name differs from name only in case; "" if none does.
func (s *Schema) columnHint(name string, tables ...*Table) string {
	for _, t := range tables {
		if c := t.Column(name); c != nil && s.PostgreSQL {
			return caseHint("column", c.Name)
		}
	}
	return ""
}

// caseHint tells how to write a PostgreSQL name that differs in case.
func caseHint(kind, stored string) string {
	return fmt.Sprintf(" (PostgreSQL folds unquoted names to lower case and matches names with case: the %s is %s)", kind, PostgreSQLName(stored))
}

// pgIdent is an identifier as PostgreSQL stores it: a quoted one as
// written, an unquoted one folded to lower case. PostgreSQL folds only
// ASCII letters, and the INTERLEAVE clause's unquoted names are ASCII.
func pgIdent(id string) string {
	if strings.HasPrefix(id, `"`) {
		return strings.ReplaceAll(id[1:len(id)-1], `""`, `"`)
	}
	return strings.ToLower(id)
}

// PostgreSQLName writes a stored name as a PostgreSQL identifier that
// refers to it: as it is when folding to lower case keeps it, quoted
// otherwise (the emulator takes unquoted names where it reads PostgreSQL
// as GoogleSQL, see dataset's clearTable).
func PostgreSQLName(name string) string {
	for i, r := range name {
		plain := r >= 'a' && r <= 'z' || r == '_' || i > 0 && r >= '0' && r <= '9'
		if !plain {
			return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
		}
	}
	return name
}
