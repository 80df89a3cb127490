// Package customcheck holds the checks of a workload that the API package
// cannot make because they need what it does not link: a capacity
// search's (result/capacity, search.go) and, mostly, a Custom workload's,
// which need a SQL parser: its DDL and statements parsed (spanner/ddl: memefish for
// GoogleSQL, libpg_query for PostgreSQL) and checked against each other
// and against its dataset. The API package checks everything else and
// links no parser; the webhook, the CLI, the campaign plan, the protocol
// and the workload call Run, Campaign, Spec or Workload here, which add
// these checks to the API's, so that they refuse the same input with the
// same messages (test/apivalidation's CLI/server parity grid).
package customcheck

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/ddl"
)

// Workload is WorkloadSpec.Validate with the checks of a Custom workload
// that need a SQL parser (Custom), in the database's dialect d ("" is
// GoogleSQL): what `spanbench run`, the runner and the result checks call.
// It knows no target, so a search's worst case counts no wait for its
// steps' CPU (Spec, Run and Campaign do, SearchJudgesCPU): a runner never
// refuses what admission took.
func Workload(path *field.Path, w *v1alpha1.WorkloadSpec, d v1alpha1.Dialect) field.ErrorList {
	return append(append(w.Validate(path), Custom(path, w, d)...), Search(path, w, false)...)
}

// Spec is BenchmarkRunSpec.Validate with Custom's checks of its workload:
// what a campaign's plan checks its template and cells with.
func Spec(path *field.Path, s *v1alpha1.BenchmarkRunSpec) field.ErrorList {
	return append(append(s.Validate(path), Custom(path.Child("workload"), &s.Workload, s.Target.Dialect)...),
		Search(path.Child("workload"), &s.Workload, SearchJudgesCPU(&s.Workload, s.Target))...)
}

// Run is BenchmarkRun.Validate with Custom's checks of its workload: what
// the BenchmarkRun webhook and `spanbench run` refuse.
func Run(r *v1alpha1.BenchmarkRun) field.ErrorList {
	w := field.NewPath("spec", "workload")
	return append(append(r.Validate(), Custom(w, &r.Spec.Workload, r.Spec.Target.Dialect)...),
		Search(w, &r.Spec.Workload, SearchJudgesCPU(&r.Spec.Workload, r.Spec.Target))...)
}

// Campaign is BenchmarkCampaign.Validate with Custom's checks of its
// template's workload.
func Campaign(c *v1alpha1.BenchmarkCampaign) field.ErrorList {
	t := &c.Spec.Template.Spec
	w := field.NewPath("spec", "template", "spec", "workload")
	return append(append(c.Validate(), Custom(w, &t.Workload, t.Target.Dialect)...), Search(w, &t.Workload, SearchJudgesCPU(&t.Workload, t.Target))...)
}

// Custom checks a Custom workload's schema, dataset and operations against
// each other: the DDL parses, every statement parses and names only tables
// and columns the DDL creates, every parameter is bound, and every
// generator fits its column. The API server cannot parse SQL, so these
// checks run at admission (the webhooks) and in `spanbench run` from this
// one function, in the database's dialect d (memefish reads GoogleSQL,
// libpg_query PostgreSQL). It checks nothing unless the workload is Custom
// and its fields short of the SQL are valid (ValidateCustomShape, which
// the API's Validate runs).
func Custom(path *field.Path, w *v1alpha1.WorkloadSpec, d v1alpha1.Dialect) field.ErrorList {
	if w.Type != v1alpha1.WorkloadCustom || w.Custom == nil || len(w.ValidateCustomShape(path)) > 0 {
		return nil
	}
	var errs field.ErrorList
	schema, err := Schema(w.Custom, d)
	if err != nil {
		return append(errs, ddlError(path.Child("custom", "ddl"), w.Custom.DDL, err))
	}
	errs = append(errs, tables(path.Child("custom", "tables"), w.Custom, schema)...)
	if len(errs) == 0 {
		errs = append(errs, batch(path.Child("dataset", "batchRows"), w.Custom, w.Dataset.BatchRows, schema)...)
	}
	if r := w.Dataset.Rows; r != nil && *r != w.Custom.Units() {
		errs = append(errs, field.Forbidden(path.Child("dataset", "rows"), "a Custom workload's rows are given per table, in custom.tables"))
	}
	for i := range w.Operations {
		o := &w.Operations[i]
		errs = append(errs, operation(path.Child("operations").Index(i).Child("custom"), o.Custom, o.Type, schema)...)
	}
	return errs
}

// maxShownStatement bounds how much of a statement an error quotes.
const maxShownStatement = 200

func ddlError(path *field.Path, stmts []string, err error) *field.Error {
	var se *ddl.StatementError
	if errors.As(err, &se) {
		return field.Invalid(path.Index(se.Index), shown(stmts[se.Index]), se.Error())
	}
	return field.Invalid(path, "", err.Error())
}

// shown is a statement as an error quotes it.
func shown(s string) string {
	if len(s) <= maxShownStatement {
		return s
	}
	return s[:maxShownStatement] + "..."
}

// validateTables checks each table's dataset against the schema: the table
// and its columns exist, rows or rowsPerParent fits its interleaving, a
// parent comes before its children, and each generator fits its column.
func tables(path *field.Path, c *v1alpha1.CustomWorkloadSpec, s *ddl.Schema) field.ErrorList {
	var errs field.ErrorList
	// listed holds the DDL's names of the tables given, which a table's
	// Parent is too.
	listed := map[string]bool{}
	for i := range c.Tables {
		t := &c.Tables[i]
		p := path.Index(i)
		dt := s.Table(t.Name)
		if dt == nil {
			errs = append(errs, field.NotFound(p.Child("name"), t.Name))
			continue
		}
		if listed[dt.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), t.Name))
		}
		listed[dt.Name] = true
		errs = append(errs, rows(p, t, dt, listed)...)
		for j := range t.Columns {
			errs = append(errs, column(p.Child("columns").Index(j), &t.Columns[j], dt, s)...)
		}
	}
	for _, dt := range s.Tables {
		if !listed[dt.Name] && len(errs) == 0 {
			errs = append(errs, field.Required(path, fmt.Sprintf("table %s of the DDL has no dataset: list it with rows or rowsPerParent", dt.Name)))
		}
	}
	return errs
}

func rows(path *field.Path, t *v1alpha1.CustomTableSpec, dt *ddl.Table, listed map[string]bool) field.ErrorList {
	switch {
	case (t.Rows == nil) == (t.RowsPerParent == nil):
		return field.ErrorList{field.Invalid(path, "", "set exactly one of rows and rowsPerParent")}
	case dt.Parent == "" && t.RowsPerParent != nil:
		return field.ErrorList{field.Forbidden(path.Child("rowsPerParent"), fmt.Sprintf("table %s is not interleaved; give its rows", dt.Name))}
	case dt.Parent != "" && t.Rows != nil:
		return field.ErrorList{field.Forbidden(path.Child("rows"), fmt.Sprintf("table %s is interleaved in %s; give its rowsPerParent", dt.Name, dt.Parent))}
	case dt.Parent != "" && !listed[dt.Parent]:
		return field.ErrorList{field.Invalid(path.Child("name"), t.Name, fmt.Sprintf("its parent %s must be listed before it", dt.Parent))}
	}
	errs := v1alpha1.InRange(path.Child("rows"), t.Rows, 0, 10_000_000_000)
	return append(errs, v1alpha1.InRange(path.Child("rowsPerParent"), t.RowsPerParent, 0, 100_000)...)
}

func column(path *field.Path, c *v1alpha1.CustomColumnSpec, dt *ddl.Table, s *ddl.Schema) field.ErrorList {
	col := dt.Column(c.Name)
	if col == nil {
		return field.ErrorList{field.NotFound(path.Child("name"), c.Name)}
	}
	if dt.IsKey(col.Name) && c.Generator.Type == v1alpha1.GenReference {
		// A reference draws keys; a key drawn from keys could refer back.
		return field.ErrorList{field.Invalid(path.Child("generator", "type"), c.Generator.Type, fmt.Sprintf("column %s is part of the primary key of %s; a key column cannot be a Reference (interleave the table instead)", col.Name, dt.Name))}
	}
	return generator(path.Child("generator"), &c.Generator, col, s)
}

// validate checks a generator's own fields, as the CEL rules do, then that
// it fits col (when known): its values have the column's type, and NULLs
// go only into a nullable column.
func generator(path *field.Path, g *v1alpha1.GeneratorSpec, col *ddl.Column, s *ddl.Schema) field.ErrorList {
	if errs := g.ValidateFields(path); len(errs) > 0 {
		return errs
	}
	if g.Type == v1alpha1.GenReference {
		if errs := key(path.Child("reference"), g.Reference, s); len(errs) > 0 {
			return errs
		}
	}
	if col == nil {
		return nil
	}
	if msg := fits(g, col, s); msg != "" {
		return field.ErrorList{field.Invalid(path.Child("type"), g.Type, msg)}
	}
	if g.NullPercent != nil && *g.NullPercent > 0 && col.NotNull {
		return field.ErrorList{field.Invalid(path.Child("nullPercent"), *g.NullPercent, fmt.Sprintf("column %s is NOT NULL", col.Name))}
	}
	return nil
}

// validateKey checks that ref names a primary key column of a table.
func key(path *field.Path, ref *v1alpha1.ColumnRef, s *ddl.Schema) field.ErrorList {
	t := s.Table(ref.Table)
	switch {
	case t == nil:
		return field.ErrorList{field.NotFound(path.Child("table"), ref.Table)}
	case t.Column(ref.Column) == nil:
		return field.ErrorList{field.NotFound(path.Child("column"), ref.Column)}
	case !t.IsKey(ref.Column):
		return field.ErrorList{field.Invalid(path.Child("column"), ref.Column, fmt.Sprintf("must be a primary key column of %s (%s): only keys are chosen", t.Name, strings.Join(t.Key, ", ")))}
	}
	return nil
}

// generatedTypes are the column types each generator produces.
var generatedTypes = map[v1alpha1.GeneratorType][]string{
	v1alpha1.GenSequence:  {"INT64", "FLOAT64", "NUMERIC", "STRING"},
	v1alpha1.GenUniform:   {"INT64", "FLOAT64", "NUMERIC"},
	v1alpha1.GenZipfian:   {"INT64", "FLOAT64", "NUMERIC"},
	v1alpha1.GenString:    {"STRING", "JSON"},
	v1alpha1.GenBytes:     {"BYTES"},
	v1alpha1.GenUUID:      {"STRING"},
	v1alpha1.GenTimestamp: {"TIMESTAMP"},
}

// fits says why g's values cannot go into col, or "".
func fits(g *v1alpha1.GeneratorSpec, col *ddl.Column, s *ddl.Schema) string {
	if col.Array {
		return fmt.Sprintf("column %s is an ARRAY<%s>; array columns take no generator (they are loaded empty)", col.Name, col.Type)
	}
	switch g.Type {
	case v1alpha1.GenChoice:
		for _, c := range g.Choices {
			if !parses(c.Value, col.Type) {
				return fmt.Sprintf("choice %q is not a value of type %s, the type of column %s", c.Value, col.Type, col.Name)
			}
		}
		return ""
	case v1alpha1.GenReference:
		ref := s.Table(g.Reference.Table).Column(g.Reference.Column)
		if ref.Type != col.Type {
			return fmt.Sprintf("%s.%s is of type %s, column %s of type %s", g.Reference.Table, ref.Name, ref.Type, col.Name, col.Type)
		}
		return ""
	case v1alpha1.GenTimestamp:
		if g.Timestamp.Mode == v1alpha1.TimestampCommit && !col.CommitTimestamp {
			if s.PostgreSQL {
				return fmt.Sprintf("a commit timestamp needs column %s to be of type spanner.commit_timestamp", col.Name)
			}
			return fmt.Sprintf("a commit timestamp needs OPTIONS (allow_commit_timestamp = true) on column %s", col.Name)
		}
	}
	if !slices.Contains(generatedTypes[g.Type], col.Type) {
		return fmt.Sprintf("a %s generator produces %s values; column %s is of type %s", g.Type, strings.Join(generatedTypes[g.Type], " or "), col.Name, col.Type)
	}
	return ""
}

// parses reports whether text is a value of the Spanner type.
func parses(text, typ string) bool {
	var err error
	switch typ {
	case "INT64":
		_, err = strconv.ParseInt(text, 10, 64)
	case "FLOAT64", "FLOAT32", "NUMERIC":
		_, err = strconv.ParseFloat(text, 64)
	case "BOOL":
		_, err = strconv.ParseBool(text)
	case "TIMESTAMP":
		_, err = time.Parse(time.RFC3339Nano, text)
	case "DATE":
		_, err = time.Parse(time.DateOnly, text)
	}
	return err == nil
}

// Schema parses the DDL in dialect d ("" is GoogleSQL).
func Schema(c *v1alpha1.CustomWorkloadSpec, d v1alpha1.Dialect) (*ddl.Schema, error) {
	if d.OrDefault() == v1alpha1.DialectPostgreSQL {
		return ddl.ParsePostgreSQL(c.DDL)
	}
	return ddl.Parse(c.DDL)
}

// validateBatch keeps one load batch (batchRows units) within a Cloud
// Spanner commit's 80,000 mutations: a unit writes one row of each table
// that is not interleaved and rowsPerParent rows of each child per parent
// row, each row costing its columns plus one per index on its table.
func batch(path *field.Path, c *v1alpha1.CustomWorkloadSpec, batchRows *int32, s *ddl.Schema) field.ErrorList {
	perUnit := mutationsPerUnit(c, s)
	rows := int64(*cmp.Or(batchRows, ptr.To(v1alpha1.DefaultBatchRows)))
	if perUnit == 0 || rows*perUnit <= v1alpha1.MaxMutationsPerCommit {
		return nil
	}
	return field.ErrorList{field.Invalid(path, rows, fmt.Sprintf("one batch is one commit: %d units of this Custom dataset are %d mutations, more than the %d Cloud Spanner takes; use at most %d",
		rows, rows*perUnit, v1alpha1.MaxMutationsPerCommit, max(v1alpha1.MaxMutationsPerCommit/perUnit, 1)))}
}

// mutationsPerUnit is what one unit of the dataset costs a commit.
func mutationsPerUnit(c *v1alpha1.CustomWorkloadSpec, s *ddl.Schema) int64 {
	rowsPerUnit := map[string]int64{}
	var total int64
	for _, t := range c.Tables {
		dt := s.Table(t.Name)
		if dt == nil {
			continue
		}
		n := int64(1)
		if dt.Parent != "" && t.RowsPerParent != nil {
			// Capped: a deep chain of large rowsPerParent must not wrap.
			n = min(rowsPerUnit[dt.Parent]*int64(*t.RowsPerParent), 1<<40)
		}
		rowsPerUnit[dt.Name] = n
		cost := int64(len(dt.Columns))
		for _, ix := range s.Indexes {
			if ix.Table == dt.Name {
				cost++
			}
		}
		total += n * cost
	}
	return total
}
