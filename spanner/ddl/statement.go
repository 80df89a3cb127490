package ddl

import (
	"fmt"
	"strings"

	"github.com/cloudspannerecosystem/memefish"
	"github.com/cloudspannerecosystem/memefish/ast"
)

// Statement is what a query or DML statement uses of the schema.
type Statement struct {
	// DML is true for INSERT, UPDATE and DELETE, false for a query.
	DML bool
	// Params are the @name parameters (PostgreSQL's $n, named pn), each
	// once, in order of first use.
	Params []string
	// ParamColumns gives a parameter's column when the statement compares
	// it with, inserts it into or sets it to one column, so that its
	// generator's type can be checked.
	ParamColumns map[string]*Column
}

// Statement parses sql and checks it against the schema: every table and
// every column it names must exist. Names the statement defines itself
// (aliases, WITH) are allowed; a name that is no column of any table and
// no alias is reported.
func (s *Schema) Statement(sql string) (*Statement, error) {
	if s.PostgreSQL {
		return s.pgStatement(sql)
	}
	stmt, err := memefish.ParseStatement("statement", sql)
	if err != nil {
		return nil, fmt.Errorf("does not parse: %s", firstLine(err.Error()))
	}
	st := &Statement{ParamColumns: map[string]*Column{}}
	switch stmt.(type) {
	case *ast.QueryStatement:
	case *ast.Insert, *ast.Update, *ast.Delete:
		st.DML = true
	default:
		return nil, fmt.Errorf("only queries and INSERT, UPDATE, DELETE statements are supported")
	}
	a := &analysis{schema: s, st: st, aliases: map[string]bool{}}
	ast.Inspect(stmt, a.collectAliases)
	ast.Inspect(stmt, a.visit)
	if a.err != nil {
		return nil, a.err
	}
	return st, nil
}

// analysis walks one statement.
type analysis struct {
	schema  *Schema
	st      *Statement
	tables  []*Table
	aliases map[string]bool
	err     error
}

func (a *analysis) collectAliases(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.AsAlias:
		a.aliases[a.schema.refKey(n.Alias.Name)] = true
	case *ast.CTE:
		a.aliases[a.schema.refKey(n.Name.Name)] = true
	case *ast.TableName:
		if t := a.schema.tableRef(n.Table.Name); t != nil {
			a.tables = append(a.tables, t)
		} else if !a.aliases[a.schema.refKey(n.Table.Name)] && a.err == nil {
			a.err = a.schema.unknownTable(n.Table.Name)
		}
	case *ast.Insert:
		a.dmlTable(n.TableName)
	case *ast.Update:
		a.dmlTable(n.TableName)
	case *ast.Delete:
		a.dmlTable(n.TableName)
	}
	return true
}

func (a *analysis) dmlTable(p *ast.Path) {
	// The table's name is a name, not a column reference.
	a.aliases[a.schema.refKey(pathName(p))] = true
	if t := a.schema.tableRef(pathName(p)); t != nil {
		a.tables = append(a.tables, t)
	} else if a.err == nil {
		a.err = a.schema.unknownTable(pathName(p))
	}
}

func (a *analysis) visit(n ast.Node) bool {
	if a.err != nil {
		return false
	}
	switch n := n.(type) {
	case *ast.Param:
		a.param(n.Name, nil)
	case *ast.TableName, *ast.AsAlias, *ast.CTE:
		return false // names, not column references
	case *ast.CallExpr:
		for _, arg := range n.Args {
			ast.Inspect(arg, a.visit)
		}
		return false
	case *ast.Path:
		a.columnRef(n.Idents[len(n.Idents)-1].Name)
		return false
	case *ast.SelectorExpr:
		ast.Inspect(n.Expr, a.visit)
		return false
	case *ast.Ident:
		a.columnRef(n.Name)
	case *ast.BinaryExpr:
		a.compare(n.Left, n.Right)
		a.compare(n.Right, n.Left)
	case *ast.Insert:
		a.insert(n)
	case *ast.UpdateItemSetValue:
		a.set(n)
	}
	return true
}

// columnRef checks a name used as a column.
func (a *analysis) columnRef(name string) {
	if a.aliases[a.schema.refKey(name)] || a.err != nil {
		return
	}
	if a.column(name) == nil {
		a.err = a.schema.unknownColumn(name, a.tableNames(), a.tables...)
	}
}

// column finds a column of the statement's tables.
func (a *analysis) column(name string) *Column {
	for _, t := range a.tables {
		if c := a.schema.columnRef(t, name); c != nil {
			return c
		}
	}
	return nil
}

func (a *analysis) tableNames() string {
	if len(a.tables) == 0 {
		return "any table the statement reads"
	}
	names := make([]string, len(a.tables))
	for i, t := range a.tables {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

func (a *analysis) param(name string, col *Column) {
	if _, seen := a.st.ParamColumns[name]; !seen {
		a.st.Params = append(a.st.Params, name)
		a.st.ParamColumns[name] = nil
	}
	if col != nil {
		a.st.ParamColumns[name] = col
	}
}

// compare types a parameter compared with a column.
func (a *analysis) compare(x, y ast.Expr) {
	p, ok := y.(*ast.Param)
	if !ok {
		return
	}
	if c := a.exprColumn(x); c != nil {
		a.param(p.Name, c)
	}
}

func (a *analysis) exprColumn(e ast.Expr) *Column {
	switch e := e.(type) {
	case *ast.Ident:
		return a.column(e.Name)
	case *ast.Path:
		return a.column(e.Idents[len(e.Idents)-1].Name)
	}
	return nil
}

func (a *analysis) insert(n *ast.Insert) {
	t := a.schema.tableRef(pathName(n.TableName))
	if t == nil {
		return
	}
	for _, c := range n.Columns {
		if a.schema.columnRef(t, c.Name) == nil {
			a.err = a.schema.unknownColumn(c.Name, t.Name, t)
			return
		}
	}
	v, ok := n.Input.(*ast.ValuesInput)
	if !ok {
		return
	}
	for _, row := range v.Rows {
		for i, e := range row.Exprs {
			if p, ok := e.Expr.(*ast.Param); ok && i < len(n.Columns) {
				a.param(p.Name, a.schema.columnRef(t, n.Columns[i].Name))
			}
		}
	}
}

func (a *analysis) set(n *ast.UpdateItemSetValue) {
	name := n.Path[len(n.Path)-1].Name
	c := a.column(name)
	if c == nil {
		a.err = a.schema.unknownColumn(name, a.tableNames(), a.tables...)
		return
	}
	if p, ok := n.DefaultExpr.Expr.(*ast.Param); ok {
		a.param(p.Name, c)
	}
}
