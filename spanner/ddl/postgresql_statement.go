package ddl

import (
	"fmt"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
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
	switch stmt.Node.(type) {
	case *pg.Node_SelectStmt:
	case *pg.Node_InsertStmt, *pg.Node_UpdateStmt, *pg.Node_DeleteStmt:
		st.DML = true
	default:
		return nil, fmt.Errorf("only queries and INSERT, UPDATE, DELETE statements are supported")
	}
	a := &pgAnalysis{analysis: analysis{schema: s, st: st, aliases: map[string]bool{}}}
	// Names first: a select list comes before the FROM and WITH that
	// define its tables and aliases.
	walkPG(stmt, a.collect)
	for _, name := range a.relations {
		a.relation(name)
	}
	walkPG(stmt, a.visit)
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

// walkPG calls visit on every message of the tree, depth first; visit
// returns false to skip a message's children.
func walkPG(m proto.Message, visit func(proto.Message) bool) {
	walkMessage(m.ProtoReflect(), visit)
}

func walkMessage(m protoreflect.Message, visit func(proto.Message) bool) {
	if !visit(m.Interface()) {
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := range l.Len() {
				walkMessage(l.Get(i).Message(), visit)
			}
		case fd.Message() != nil && !fd.IsMap():
			walkMessage(v.Message(), visit)
		}
		return true
	})
}

// collect finds the statement's tables and the names it defines: WITH
// names, table and subquery aliases, select-list aliases.
func (a *pgAnalysis) collect(m proto.Message) bool {
	switch n := m.(type) {
	case *pg.RangeVar:
		a.relations = append(a.relations, n.Relname)
	case *pg.CommonTableExpr:
		a.aliases[strings.ToLower(n.Ctename)] = true
	case *pg.Alias:
		a.aliases[strings.ToLower(n.Aliasname)] = true
	case *pg.SelectStmt:
		for _, t := range n.TargetList {
			if name := t.GetResTarget().GetName(); name != "" {
				a.aliases[strings.ToLower(name)] = true
			}
		}
	}
	return true
}

func (a *pgAnalysis) visit(m proto.Message) bool {
	if a.err != nil {
		return false
	}
	switch n := m.(type) {
	case *pg.ColumnRef:
		if name := lastName(n); name != "" {
			a.columnRef(name)
		}
		return false
	case *pg.ParamRef:
		a.param(pgParam(n), nil)
	case *pg.A_Expr:
		if n.Lexpr == nil && len(n.Name) == 1 && n.Name[0].GetString_().GetSval() == "@" && n.Rexpr.GetColumnRef() != nil {
			// PostgreSQL reads GoogleSQL's @name as the operator @
			// (absolute value) on a column: say what was meant.
			a.err = fmt.Errorf("@%s is a GoogleSQL parameter; PostgreSQL's are $1..$n", lastName(n.Rexpr.GetColumnRef()))
			return false
		}
		a.compare(n.Lexpr, n.Rexpr)
		a.compare(n.Rexpr, n.Lexpr)
	case *pg.InsertStmt:
		a.insert(n)
	case *pg.UpdateStmt:
		a.update(n)
	}
	return true
}

// relation is a table the statement reads or writes, or a WITH name.
func (a *pgAnalysis) relation(name string) {
	if t := a.schema.Table(name); t != nil {
		for _, seen := range a.tables {
			if seen == t {
				return
			}
		}
		a.tables = append(a.tables, t)
		return
	}
	if !a.aliases[strings.ToLower(name)] && a.err == nil {
		a.err = fmt.Errorf("table %s is not created by the DDL", name)
	}
}

// lastName is a column reference's column (t.c, c), or "" for t.*.
func lastName(n *pg.ColumnRef) string {
	if len(n.Fields) == 0 {
		return ""
	}
	if v := n.Fields[len(n.Fields)-1].GetString_(); v != nil {
		return v.Sval
	}
	return ""
}

func pgParam(n *pg.ParamRef) string { return "p" + strconv.Itoa(int(n.Number)) }

// paramsOf are the parameters an expression is: $n, $n::type, or a list
// of them (IN, BETWEEN).
func paramsOf(n *pg.Node) []*pg.ParamRef {
	switch e := n.GetNode().(type) {
	case *pg.Node_ParamRef:
		return []*pg.ParamRef{e.ParamRef}
	case *pg.Node_TypeCast:
		return paramsOf(e.TypeCast.Arg)
	case *pg.Node_List:
		var out []*pg.ParamRef
		for _, item := range e.List.Items {
			out = append(out, paramsOf(item)...)
		}
		return out
	}
	return nil
}

// compare types the parameters compared with a column.
func (a *pgAnalysis) compare(x, y *pg.Node) {
	ref := x.GetColumnRef()
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

func (a *pgAnalysis) insert(n *pg.InsertStmt) {
	t := a.schema.Table(n.Relation.Relname)
	if t == nil {
		return // reported as a RangeVar
	}
	cols := make([]*Column, len(n.Cols))
	for i, c := range n.Cols {
		name := c.GetResTarget().GetName()
		if cols[i] = t.Column(name); cols[i] == nil {
			a.err = fmt.Errorf("column %s is not a column of %s", name, t.Name)
			return
		}
	}
	for _, row := range n.GetSelectStmt().GetSelectStmt().GetValuesLists() {
		for i, e := range row.GetList().GetItems() {
			for _, p := range paramsOf(e) {
				if i < len(cols) {
					a.param(pgParam(p), cols[i])
				}
			}
		}
	}
}

func (a *pgAnalysis) update(n *pg.UpdateStmt) {
	t := a.schema.Table(n.Relation.Relname)
	if t == nil {
		return
	}
	for _, item := range n.TargetList {
		rt := item.GetResTarget()
		c := t.Column(rt.GetName())
		if c == nil {
			a.err = fmt.Errorf("column %s is not a column of %s", rt.GetName(), t.Name)
			return
		}
		for _, p := range paramsOf(rt.Val) {
			a.param(pgParam(p), c)
		}
	}
}
