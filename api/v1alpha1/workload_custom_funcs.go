package v1alpha1

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// customOps are the operations of a Custom workload.
var customOps = []OperationType{OpQuery, OpDML, OpReadRows, OpMutation, OpTransaction}

// IsCustom reports whether the operation belongs to a Custom workload.
func (t OperationType) IsCustom() bool { return slices.Contains(customOps, t) }

// ValidateCustomShape checks a Custom workload's fields short of its SQL:
// custom is set exactly for type Custom, each operation has the body its
// type needs, and the DDL and tables are within their bounds. Without a
// Custom workload it only checks that no custom field is set. What needs
// a SQL parser (the DDL, the statements, the dataset and operations
// against the schema) is spanner/customcheck's, which runs only when this
// found nothing: the API package links no SQL parser.
func (w *WorkloadSpec) ValidateCustomShape(path *field.Path) field.ErrorList {
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
	return errs
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

// ValidateFields checks a generator's own fields, as the CEL rules do;
// spanner/customcheck then checks that it fits its column.
func (g *GeneratorSpec) ValidateFields(path *field.Path) field.ErrorList {
	errs := g.validateShape(path)
	errs = append(errs, InRange(path.Child("minLength"), g.MinLength, 0, 1<<20)...)
	errs = append(errs, InRange(path.Child("maxLength"), g.MaxLength, 0, 1<<20)...)
	errs = append(errs, InRange(path.Child("nullPercent"), g.NullPercent, 0, 100)...)
	if len(g.Choices) > MaxChoices {
		errs = append(errs, field.TooMany(path.Child("choices"), len(g.Choices), MaxChoices))
	}
	for i, c := range g.Choices {
		errs = append(errs, InRange(path.Child("choices").Index(i).Child("weight"), &c.Weight, 1, 1_000_000)...)
	}
	if ts := g.Timestamp; ts != nil && len(errs) == 0 {
		errs = append(errs, ts.validate(path.Child("timestamp"))...)
	}
	return errs
}

func (ts *TimestampGeneratorSpec) validate(path *field.Path) field.ErrorList {
	isRange := ts.Mode == TimestampRange
	if errs := OneOf(path.Child("mode"), ts.Mode, TimestampNow, TimestampCommit, TimestampRange); len(errs) > 0 {
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
