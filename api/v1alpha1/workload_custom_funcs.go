package v1alpha1

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/spanbench/spanbench/spanner/ddl"
)

// customOps are the operations of a Custom workload.
var customOps = []OperationType{OpQuery, OpDML, OpReadRows, OpMutation, OpTransaction}

// IsCustom reports whether the operation belongs to a Custom workload.
func (t OperationType) IsCustom() bool { return slices.Contains(customOps, t) }

// maxShownStatement bounds how much of a statement an error quotes.
const maxShownStatement = 200

// validateCustom checks a Custom workload's schema, dataset and operations
// against each other: the DDL parses, every statement parses and names only
// tables and columns the DDL creates, every parameter is bound, and every
// generator fits its column. The API server cannot parse SQL, so these
// checks run at admission (the BenchmarkRun webhook) and in `spanbench run`
// from this one function, in the database's dialect d (memefish reads
// GoogleSQL, libpg_query PostgreSQL). Without a Custom workload it only
// checks that no custom field is set.
func (w *WorkloadSpec) validateCustom(path *field.Path, d Dialect) field.ErrorList {
	var errs field.ErrorList
	isCustom := w.Type == WorkloadCustom
	switch {
	case isCustom && w.Custom == nil:
		errs = append(errs, field.Required(path.Child("custom"), "required for type Custom"))
	case !isCustom && w.Custom != nil:
		errs = append(errs, field.Forbidden(path.Child("custom"), "applies only to type Custom"))
	}
	for i := range w.Operations {
		errs = append(errs, w.Operations[i].validateCustomShape(path.Child("operations").Index(i))...)
	}
	if !isCustom || w.Custom == nil || len(errs) > 0 {
		return errs
	}
	errs = append(errs, w.Custom.validateSizes(path.Child("custom"))...)
	if len(errs) > 0 {
		return errs
	}
	schema, err := w.Custom.Schema(d)
	if err != nil {
		return append(errs, ddlError(path.Child("custom", "ddl"), w.Custom.DDL, err))
	}
	errs = append(errs, w.Custom.validateTables(path.Child("custom", "tables"), schema)...)
	if len(errs) == 0 {
		errs = append(errs, w.Custom.validateBatch(path.Child("dataset", "batchRows"), w.Dataset.BatchRows, schema)...)
	}
	if r := w.Dataset.Rows; r != nil && *r != w.Custom.Units() {
		errs = append(errs, field.Forbidden(path.Child("dataset", "rows"), "a Custom workload's rows are given per table, in custom.tables"))
	}
	for i := range w.Operations {
		o := &w.Operations[i]
		errs = append(errs, o.Custom.validate(path.Child("operations").Index(i).Child("custom"), o.Type, schema)...)
	}
	return errs
}

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

// validateCustomShape checks, as the CEL rules do, that a Custom operation
// is named and has the body its type needs, and that no other has one.
func (o *OperationSpec) validateCustomShape(path *field.Path) field.ErrorList {
	if !o.Type.IsCustom() {
		if o.Custom != nil {
			return field.ErrorList{field.Forbidden(path.Child("custom"), "applies only to Query, DML, ReadRows, Mutation and Transaction")}
		}
		return nil
	}
	var errs field.ErrorList
	if o.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), "required for the operations of a Custom workload"))
	}
	c := o.Custom
	if c == nil {
		return append(errs, field.Required(path.Child("custom"), "required for Query, DML, ReadRows, Mutation and Transaction"))
	}
	set := 0
	for _, isSet := range []bool{c.SQL != "", c.Read != nil, c.Mutation != nil, c.Steps != nil} {
		if isSet {
			set++
		}
	}
	if set != 1 {
		return append(errs, field.Invalid(path.Child("custom"), "", "set exactly one of sql (Query, DML), read (ReadRows), mutation (Mutation) and steps (Transaction)"))
	}
	ok := map[OperationType]bool{OpQuery: c.SQL != "", OpDML: c.SQL != "", OpReadRows: c.Read != nil, OpMutation: c.Mutation != nil, OpTransaction: c.Steps != nil}[o.Type]
	if !ok {
		errs = append(errs, field.Invalid(path.Child("custom"), "", "Query and DML need sql, ReadRows read, Mutation mutation, Transaction steps"))
	}
	return errs
}

// validateSizes checks the size limits the schema's markers set.
func (c *CustomWorkloadSpec) validateSizes(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(c.DDL) == 0 {
		errs = append(errs, field.Required(path.Child("ddl"), "at least one statement"))
	}
	if len(c.DDL) > MaxDDLStatements {
		errs = append(errs, field.TooMany(path.Child("ddl"), len(c.DDL), MaxDDLStatements))
	}
	for i, s := range c.DDL {
		errs = append(errs, maxLen(path.Child("ddl").Index(i), s, MaxDDLStatementLength)...)
	}
	if len(c.Tables) == 0 {
		errs = append(errs, field.Required(path.Child("tables"), "at least one table"))
	}
	if len(c.Tables) > MaxCustomTables {
		errs = append(errs, field.TooMany(path.Child("tables"), len(c.Tables), MaxCustomTables))
	}
	return errs
}

// validateTables checks each table's dataset against the schema: the table
// and its columns exist, rows or rowsPerParent fits its interleaving, a
// parent comes before its children, and each generator fits its column.
func (c *CustomWorkloadSpec) validateTables(path *field.Path, s *ddl.Schema) field.ErrorList {
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
		errs = append(errs, t.validateRows(p, dt, listed)...)
		for j := range t.Columns {
			errs = append(errs, t.Columns[j].validate(p.Child("columns").Index(j), dt, s)...)
		}
	}
	for _, dt := range s.Tables {
		if !listed[dt.Name] && len(errs) == 0 {
			errs = append(errs, field.Required(path, fmt.Sprintf("table %s of the DDL has no dataset: list it with rows or rowsPerParent", dt.Name)))
		}
	}
	return errs
}

func (t *CustomTableSpec) validateRows(path *field.Path, dt *ddl.Table, listed map[string]bool) field.ErrorList {
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
	errs := inRange(path.Child("rows"), t.Rows, 0, 10_000_000_000)
	return append(errs, inRange(path.Child("rowsPerParent"), t.RowsPerParent, 0, 100_000)...)
}

func (c *CustomColumnSpec) validate(path *field.Path, dt *ddl.Table, s *ddl.Schema) field.ErrorList {
	col := dt.Column(c.Name)
	if col == nil {
		return field.ErrorList{field.NotFound(path.Child("name"), c.Name)}
	}
	if dt.IsKey(col.Name) && c.Generator.Type == GenReference {
		// A reference draws keys; a key drawn from keys could refer back.
		return field.ErrorList{field.Invalid(path.Child("generator", "type"), c.Generator.Type, fmt.Sprintf("column %s is part of the primary key of %s; a key column cannot be a Reference (interleave the table instead)", col.Name, dt.Name))}
	}
	return c.Generator.validate(path.Child("generator"), col, s)
}

// validate checks a generator's own fields, as the CEL rules do, then that
// it fits col (when known): its values have the column's type, and NULLs
// go only into a nullable column.
func (g *GeneratorSpec) validate(path *field.Path, col *ddl.Column, s *ddl.Schema) field.ErrorList {
	if errs := g.validateFields(path); len(errs) > 0 {
		return errs
	}
	if g.Type == GenReference {
		if errs := g.Reference.validateKey(path.Child("reference"), s); len(errs) > 0 {
			return errs
		}
	}
	if col == nil {
		return nil
	}
	if msg := g.fits(col, s); msg != "" {
		return field.ErrorList{field.Invalid(path.Child("type"), g.Type, msg)}
	}
	if g.NullPercent != nil && *g.NullPercent > 0 && col.NotNull {
		return field.ErrorList{field.Invalid(path.Child("nullPercent"), *g.NullPercent, fmt.Sprintf("column %s is NOT NULL", col.Name))}
	}
	return nil
}

// validateShape checks, as the CEL rules on GeneratorSpec do, that the
// fields set are those the generator's type uses.
func (g *GeneratorSpec) validateShape(path *field.Path) field.ErrorList {
	if !slices.Contains(generatorTypes, g.Type) {
		return field.ErrorList{field.NotSupported(path.Child("type"), g.Type, generatorTypes)}
	}
	ints := g.Type == GenSequence || g.Type == GenUniform || g.Type == GenZipfian
	lengths := g.Type == GenString || g.Type == GenBytes
	// In the order of the CEL rules; the first that fails is reported.
	for _, c := range []struct {
		bad  bool
		path *field.Path
		msg  string
	}{
		{(g.Min != nil || g.Max != nil) && !ints, path, "min and max apply only to Sequence, Uniform and Zipfian"},
		{g.badRange(), path, "Uniform and Zipfian need min <= max"},
		{(g.MinLength != nil || g.MaxLength != nil) && !lengths, path, "minLength and maxLength apply only to String and Bytes"},
		{g.badLengths(), path, "String and Bytes need maxLength, and minLength <= maxLength"},
		{(g.Timestamp != nil) != (g.Type == GenTimestamp), path.Child("timestamp"), "set for Timestamp generators, and only for them"},
		{(g.Choices != nil) != (g.Type == GenChoice), path.Child("choices"), "set for Choice generators, and only for them"},
		{(g.Reference != nil) != (g.Type == GenReference), path.Child("reference"), "set for Reference generators, and only for them"},
	} {
		if c.bad {
			return field.ErrorList{field.Invalid(c.path, "", c.msg)}
		}
	}
	return nil
}

// badRange reports a Uniform or Zipfian generator without min <= max.
func (g *GeneratorSpec) badRange() bool {
	ranged := g.Type == GenUniform || g.Type == GenZipfian
	return ranged && (g.Min == nil || g.Max == nil || *g.Min > *g.Max)
}

// badLengths reports a String or Bytes generator without maxLength, or
// with minLength > maxLength.
func (g *GeneratorSpec) badLengths() bool {
	lengths := g.Type == GenString || g.Type == GenBytes
	return lengths && (g.MaxLength == nil || *defaulted(g.MinLength, 0) > *g.MaxLength)
}

// generatorTypes are the generators, for the error naming them.
var generatorTypes = []GeneratorType{GenSequence, GenUniform, GenZipfian, GenString, GenBytes, GenUUID, GenTimestamp, GenChoice, GenReference}

func (g *GeneratorSpec) validateFields(path *field.Path) field.ErrorList {
	errs := g.validateShape(path)
	errs = append(errs, inRange(path.Child("minLength"), g.MinLength, 0, 1<<20)...)
	errs = append(errs, inRange(path.Child("maxLength"), g.MaxLength, 0, 1<<20)...)
	errs = append(errs, inRange(path.Child("nullPercent"), g.NullPercent, 0, 100)...)
	if len(g.Choices) > MaxChoices {
		errs = append(errs, field.TooMany(path.Child("choices"), len(g.Choices), MaxChoices))
	}
	for i, c := range g.Choices {
		errs = append(errs, inRange(path.Child("choices").Index(i).Child("weight"), &c.Weight, 1, 1_000_000)...)
	}
	if ts := g.Timestamp; ts != nil && len(errs) == 0 {
		errs = append(errs, ts.validate(path.Child("timestamp"))...)
	}
	return errs
}

func (ts *TimestampGeneratorSpec) validate(path *field.Path) field.ErrorList {
	isRange := ts.Mode == TimestampRange
	if errs := oneOf(path.Child("mode"), ts.Mode, TimestampNow, TimestampCommit, TimestampRange); len(errs) > 0 {
		return errs
	}
	if isRange != (ts.From != "" && ts.To != "") {
		return field.ErrorList{field.Invalid(path, "", "from and to are required for mode Range, and apply only to it")}
	}
	if !isRange {
		return nil
	}
	from, err1 := time.Parse(time.RFC3339Nano, ts.From)
	to, err2 := time.Parse(time.RFC3339Nano, ts.To)
	switch {
	case err1 != nil:
		return field.ErrorList{field.Invalid(path.Child("from"), ts.From, "must be an RFC 3339 time")}
	case err2 != nil:
		return field.ErrorList{field.Invalid(path.Child("to"), ts.To, "must be an RFC 3339 time")}
	case from.After(to):
		return field.ErrorList{field.Invalid(path, "", "from must not be after to")}
	}
	return nil
}

// validateKey checks that ref names a primary key column of a table.
func (ref *ColumnRef) validateKey(path *field.Path, s *ddl.Schema) field.ErrorList {
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
var generatedTypes = map[GeneratorType][]string{
	GenSequence:  {"INT64", "FLOAT64", "NUMERIC", "STRING"},
	GenUniform:   {"INT64", "FLOAT64", "NUMERIC"},
	GenZipfian:   {"INT64", "FLOAT64", "NUMERIC"},
	GenString:    {"STRING", "JSON"},
	GenBytes:     {"BYTES"},
	GenUUID:      {"STRING"},
	GenTimestamp: {"TIMESTAMP"},
}

// fits says why g's values cannot go into col, or "".
func (g *GeneratorSpec) fits(col *ddl.Column, s *ddl.Schema) string {
	if col.Array {
		return fmt.Sprintf("column %s is an ARRAY<%s>; array columns take no generator (they are loaded empty)", col.Name, col.Type)
	}
	switch g.Type {
	case GenChoice:
		for _, c := range g.Choices {
			if !parses(c.Value, col.Type) {
				return fmt.Sprintf("choice %q is not a value of type %s, the type of column %s", c.Value, col.Type, col.Name)
			}
		}
		return ""
	case GenReference:
		ref := s.Table(g.Reference.Table).Column(g.Reference.Column)
		if ref.Type != col.Type {
			return fmt.Sprintf("%s.%s is of type %s, column %s of type %s", g.Reference.Table, ref.Name, ref.Type, col.Name, col.Type)
		}
		return ""
	case GenTimestamp:
		if g.Timestamp.Mode == TimestampCommit && !col.CommitTimestamp {
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
func (c *CustomWorkloadSpec) Schema(d Dialect) (*ddl.Schema, error) {
	if d.OrDefault() == DialectPostgreSQL {
		return ddl.ParsePostgreSQL(c.DDL)
	}
	return ddl.Parse(c.DDL)
}

// Units is the size of a Custom workload's dataset as the dataset marker
// records it: the most rows of any table that is not interleaved. The
// loader loads unit k as row k of each such table with everything
// interleaved under it; Resolved sets dataset.rows to it.
func (c *CustomWorkloadSpec) Units() int64 {
	var units int64
	for _, t := range c.Tables {
		if t.Rows != nil {
			units = max(units, *t.Rows)
		}
	}
	return units
}

// validateBatch keeps one load batch (batchRows units) within a Cloud
// Spanner commit's 80,000 mutations: a unit writes one row of each table
// that is not interleaved and rowsPerParent rows of each child per parent
// row, each row costing its columns plus one per index on its table.
func (c *CustomWorkloadSpec) validateBatch(path *field.Path, batchRows *int32, s *ddl.Schema) field.ErrorList {
	perUnit := c.mutationsPerUnit(s)
	rows := int64(*defaulted(batchRows, DefaultBatchRows))
	if perUnit == 0 || rows*perUnit <= MaxMutationsPerCommit {
		return nil
	}
	return field.ErrorList{field.Invalid(path, rows, fmt.Sprintf("one batch is one commit: %d units of this Custom dataset are %d mutations, more than the %d Cloud Spanner takes; use at most %d",
		rows, rows*perUnit, MaxMutationsPerCommit, max(MaxMutationsPerCommit/perUnit, 1)))}
}

// mutationsPerUnit is what one unit of the dataset costs a commit.
func (c *CustomWorkloadSpec) mutationsPerUnit(s *ddl.Schema) int64 {
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
