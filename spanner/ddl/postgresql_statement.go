package ddl

import (
	"fmt"
	"strconv"
)

// pgStatement parses a PostgreSQL query or DML statement and checks it
// against the schema, as Statement does for GoogleSQL. Its $n parameters
// are named pn, the names Spanner's API gives them.
func (s *Schema) pgStatement(sql string) (*Statement, error) {
	stmt, err := parsePG(sql)
	if err != nil {
		return nil, err
	}
	st := &Statement{ParamColumns: map[string]*Column{}}
	switch typ, _ := pgNode(stmt); typ {
	case "SelectStmt":
	case "InsertStmt", "UpdateStmt", "DeleteStmt":
		st.DML = true
	default:
		return nil, fmt.Errorf("only queries and INSERT, UPDATE, DELETE statements are supported")
	}
	a := &pgAnalysis{analysis: analysis{schema: s, st: st, aliases: map[string]bool{}}}
	// Names first: a select list comes before the FROM and WITH that
	// define its tables and aliases.
	walkPG(stmt, "", a.collect)
	for _, name := range a.relations {
		a.relation(name)
	}
	walkPG(stmt, "", a.visit)
	if a.err != nil {
		return nil, a.err
	}
	return st, nil
}

// pgAnalysis walks one PostgreSQL statement; it shares the GoogleSQL
// analysis's bookkeeping (tables, aliases, parameters).
type pgAnalysis struct {
	analysis
	// relations are the names FROM, JOIN, INSERT, UPDATE and DELETE use.
	relations []string
}

// collect finds the statement's tables and the names it defines: WITH
// names, table and subquery aliases, select-list aliases.
func (a *pgAnalysis) collect(typ string, n *pgObject) bool {
	switch typ {
	case "RangeVar":
		a.relations = append(a.relations, n.str("relname"))
	case "CommonTableExpr":
		a.aliases[a.schema.refKey(n.str("ctename"))] = true
	case "Alias":
		a.aliases[a.schema.refKey(n.str("aliasname"))] = true
	case "SelectStmt":
		for _, t := range n.list("targetList") {
			if name := pgNodeOf(t, "ResTarget").str("name"); name != "" {
				a.aliases[a.schema.refKey(name)] = true
			}
		}
	}
	return true
}

func (a *pgAnalysis) visit(typ string, n *pgObject) bool {
	if a.err != nil {
		return false
	}
	switch typ {
	case "ColumnRef":
		if name := lastName(n); name != "" {
			a.columnRef(name)
		}
		return false
	case "ParamRef":
		a.param(pgParam(n), nil)
	case "A_Expr":
		lexpr, rexpr, op := n.get("lexpr"), n.get("rexpr"), n.list("name")
		if lexpr == nil && len(op) == 1 && pgNodeOf(op[0], "String").str("sval") == "@" && pgNodeOf(rexpr, "ColumnRef") != nil {
			// PostgreSQL reads GoogleSQL's @name as the operator @
			// (absolute value) on a column: say what was meant.
			a.err = fmt.Errorf("@%s is a GoogleSQL parameter; PostgreSQL's are $1..$n", lastName(pgNodeOf(rexpr, "ColumnRef")))
			return false
		}
		a.compare(lexpr, rexpr)
		a.compare(rexpr, lexpr)
	case "InsertStmt":
		a.insert(n)
	case "UpdateStmt":
		a.update(n)
	}
	return true
}

// relation is a table the statement reads or writes, or a WITH name.
func (a *pgAnalysis) relation(name string) {
	if t := a.schema.tableRef(name); t != nil {
		for _, seen := range a.tables {
			if seen == t {
				return
			}
		}
		a.tables = append(a.tables, t)
		return
	}
	if !a.aliases[a.schema.refKey(name)] && a.err == nil {
		a.err = a.schema.unknownTable(name)
	}
}

// lastName is a ColumnRef's column (t.c, c), or "" for t.*.
func lastName(n *pgObject) string {
	fields := n.list("fields")
	if len(fields) == 0 {
		return ""
	}
	return pgNodeOf(fields[len(fields)-1], "String").str("sval")
}

// pgParam is a ParamRef's name.
func pgParam(n *pgObject) string { return "p" + strconv.FormatInt(n.integer("number"), 10) }

// paramsOf are the ParamRefs an expression is: $n, $n::type, or a list
// of them (IN, BETWEEN).
func paramsOf(v any) []*pgObject {
	switch typ, e := pgNode(v); typ {
	case "ParamRef":
		return []*pgObject{e}
	case "TypeCast":
		return paramsOf(e.get("arg"))
	case "List":
		var out []*pgObject
		for _, item := range e.list("items") {
			out = append(out, paramsOf(item)...)
		}
		return out
	}
	return nil
}

// compare types the parameters compared with a column.
func (a *pgAnalysis) compare(x, y any) {
	ref := pgNodeOf(x, "ColumnRef")
	if ref == nil {
		return
	}
	c := a.column(lastName(ref))
	if c == nil {
		return
	}
	for _, p := range paramsOf(y) {
		a.param(pgParam(p), c)
	}
}

func (a *pgAnalysis) insert(n *pgObject) {
	t := a.schema.tableRef(n.obj("relation").str("relname"))
	if t == nil {
		return // reported as a RangeVar
	}
	cols := make([]*Column, len(n.list("cols")))
	for i, c := range n.list("cols") {
		name := pgNodeOf(c, "ResTarget").str("name")
		if cols[i] = a.schema.columnRef(t, name); cols[i] == nil {
			a.err = a.schema.unknownColumn(name, t.Name, t)
			return
		}
	}
	for _, row := range pgNodeOf(n.get("selectStmt"), "SelectStmt").list("valuesLists") {
		for i, e := range pgNodeOf(row, "List").list("items") {
			for _, p := range paramsOf(e) {
				if i < len(cols) {
					a.param(pgParam(p), cols[i])
				}
			}
		}
	}
}

func (a *pgAnalysis) update(n *pgObject) {
	t := a.schema.tableRef(n.obj("relation").str("relname"))
	if t == nil {
		return
	}
	for _, item := range n.list("targetList") {
		rt := pgNodeOf(item, "ResTarget")
		c := a.schema.columnRef(t, rt.str("name"))
		if c == nil {
			a.err = a.schema.unknownColumn(rt.str("name"), t.Name, t)
			return
		}
		for _, p := range paramsOf(rt.get("val")) {
			a.param(pgParam(p), c)
		}
	}
}
