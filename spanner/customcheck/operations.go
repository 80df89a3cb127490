package customcheck

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/ddl"
)

// pgParamName is how a binding names PostgreSQL's $n: pn, as Spanner's
// API does.
var pgParamName = regexp.MustCompile(`^p[1-9][0-9]*$`)

// stepNamePattern is the schema's pattern of a Transaction step name.
var stepNamePattern = regexp.MustCompile(v1alpha1.StepNameSyntax)

// validate checks a Custom operation's body against the schema. The shape
// (which body for which type) was checked before.
func operation(path *field.Path, c *v1alpha1.CustomOperationSpec, t v1alpha1.OperationType, s *ddl.Schema) field.ErrorList {
	switch t {
	case v1alpha1.OpQuery, v1alpha1.OpDML:
		return validateStatement(path, c.SQL, c.Params, t == v1alpha1.OpDML, s, nil)
	case v1alpha1.OpReadRows:
		return read(path.Child("read"), c.Read, s)
	case v1alpha1.OpMutation:
		return mutation(path.Child("mutation"), c.Mutation, s)
	case v1alpha1.OpTransaction:
		return validateSteps(path.Child("steps"), c.Steps, s)
	}
	return nil
}

// validateStatement parses sql, checks that it is a query or DML as
// wanted (dml nil: either), and that params bind every parameter and no
// other. earlier are the names of the transaction steps before this one.
func validateStatement(path *field.Path, sql string, params []v1alpha1.ParamBinding, dml bool, s *ddl.Schema, earlier []string) field.ErrorList {
	p := path.Child("sql")
	if len(sql) > v1alpha1.MaxStatementLength {
		return field.ErrorList{field.TooLong(p, shown(sql), v1alpha1.MaxStatementLength)}
	}
	st, err := s.Statement(sql)
	if err != nil {
		return field.ErrorList{field.Invalid(p, shown(sql), err.Error())}
	}
	if earlier == nil && st.DML != dml {
		want := map[bool]string{true: "DML needs an INSERT, UPDATE or DELETE statement; use a Query operation for a query", false: "a Query operation needs a query; use a DML operation for INSERT, UPDATE or DELETE"}
		return field.ErrorList{field.Invalid(p, shown(sql), want[dml])}
	}
	var errs field.ErrorList
	if len(params) > v1alpha1.MaxParams {
		errs = append(errs, field.TooMany(path.Child("params"), len(params), v1alpha1.MaxParams))
	}
	bound := map[string]bool{}
	for i := range params {
		b := &params[i]
		bp := path.Child("params").Index(i)
		if bound[b.Name] {
			errs = append(errs, field.Duplicate(bp.Child("name"), b.Name))
		}
		bound[b.Name] = true
		if s.PostgreSQL && !pgParamName.MatchString(b.Name) {
			errs = append(errs, field.Invalid(bp.Child("name"), b.Name, fmt.Sprintf("in PostgreSQL a statement's parameters are $1..$n, bound as p1..pn: %s", shown(sql))))
			continue
		}
		if !slices.Contains(st.Params, b.Name) {
			errs = append(errs, field.Invalid(bp.Child("name"), b.Name, fmt.Sprintf("the statement has no parameter %s: %s", s.ParamText(b.Name), shown(sql))))
			continue
		}
		errs = append(errs, binding(bp, b, st.ParamColumns[b.Name], s, earlier)...)
	}
	for _, name := range st.Params {
		if !bound[name] {
			errs = append(errs, field.Required(path.Child("params"), fmt.Sprintf("parameter %s of the statement is not bound to a generator, a key or an earlier step: %s", s.ParamText(name), shown(sql))))
		}
	}
	return errs
}

// validate checks one binding: exactly one source, which fits the
// parameter's column when the statement gives it one.
func binding(path *field.Path, b *v1alpha1.ParamBinding, col *ddl.Column, s *ddl.Schema, earlier []string) field.ErrorList {
	set := 0
	for _, isSet := range []bool{b.Generator != nil, b.Key != nil, b.From != ""} {
		if isSet {
			set++
		}
	}
	switch {
	case set != 1:
		return field.ErrorList{field.Invalid(path, "", "set exactly one of generator, key and from")}
	case b.Generator != nil:
		return generator(path.Child("generator"), b.Generator, col, s)
	case b.Key != nil:
		if errs := key(path.Child("key"), b.Key, s); len(errs) > 0 {
			return errs
		}
		if k := s.Table(b.Key.Table).Column(b.Key.Column); col != nil && k.Type != col.Type {
			return field.ErrorList{field.Invalid(path.Child("key"), b.Key.Table+"."+b.Key.Column, fmt.Sprintf("is of type %s; the parameter is compared with or written to %s, of type %s", k.Type, col.Name, col.Type))}
		}
		return nil
	}
	step, _, _ := strings.Cut(b.From, ".")
	if earlier == nil {
		return field.ErrorList{field.Forbidden(path.Child("from"), "only a Transaction's steps can use values of earlier steps")}
	}
	if !slices.Contains(earlier, step) {
		return field.ErrorList{field.Invalid(path.Child("from"), b.From, fmt.Sprintf("%s is not an earlier step of the transaction", step))}
	}
	return nil
}

// validateSteps checks a Transaction's steps: names of the schema's
// syntax (StepNameSyntax, at most 128 characters: the API server's
// pattern, which `spanbench run` must refuse alike) and unique, each
// statement valid, from naming only earlier steps.
func validateSteps(path *field.Path, steps []v1alpha1.TransactionStep, s *ddl.Schema) field.ErrorList {
	var errs field.ErrorList
	if len(steps) > v1alpha1.MaxTransactionSteps {
		errs = append(errs, field.TooMany(path, len(steps), v1alpha1.MaxTransactionSteps))
	}
	earlier := []string{}
	for i := range steps {
		st := &steps[i]
		p := path.Index(i)
		switch {
		case st.Name == "":
			errs = append(errs, field.Required(p.Child("name"), "a step needs a name"))
		case len(st.Name) > v1alpha1.MaxStepNameLength:
			errs = append(errs, field.TooLong(p.Child("name"), st.Name, v1alpha1.MaxStepNameLength))
		case !stepNamePattern.MatchString(st.Name):
			errs = append(errs, field.Invalid(p.Child("name"), st.Name, "should match '"+v1alpha1.StepNameSyntax+"'"))
		}
		if slices.Contains(earlier, st.Name) {
			errs = append(errs, field.Duplicate(p.Child("name"), st.Name))
		}
		errs = append(errs, validateStatement(p, st.SQL, st.Params, false, s, earlier)...)
		earlier = append(earlier, st.Name)
	}
	return errs
}

func read(path *field.Path, r *v1alpha1.CustomReadSpec, s *ddl.Schema) field.ErrorList {
	t := s.Table(r.Table)
	if t == nil {
		return field.ErrorList{field.NotFound(path.Child("table"), r.Table)}
	}
	var errs field.ErrorList
	if r.Index != "" && s.Index(t.Name, r.Index) == nil {
		errs = append(errs, field.Invalid(path.Child("index"), r.Index, fmt.Sprintf("is not an index of %s in the DDL", t.Name)))
	}
	if len(r.Columns) == 0 {
		errs = append(errs, field.Required(path.Child("columns"), "at least one column"))
	}
	for i, c := range r.Columns {
		if t.Column(c) == nil {
			errs = append(errs, field.Invalid(path.Child("columns").Index(i), c, fmt.Sprintf("is not a column of %s", t.Name)))
		}
	}
	if r.Shape == "" {
		// Required in the schema: the API server refuses a read without
		// one, and so does `spanbench run`.
		return append(errs, field.Required(path.Child("shape"), "Key, KeyList or Range"))
	}
	return append(errs, v1alpha1.OneOf(path.Child("shape"), r.Shape, v1alpha1.ReadKey, v1alpha1.ReadKeyList, v1alpha1.ReadRange)...)
}

func mutation(path *field.Path, m *v1alpha1.CustomMutationSpec, s *ddl.Schema) field.ErrorList {
	if s.Table(m.Table) == nil {
		return field.ErrorList{field.NotFound(path.Child("table"), m.Table)}
	}
	if m.Kind == "" {
		// Required in the schema, and "" is not of its enum: the API
		// server refuses a mutation without a kind, and so does
		// `spanbench run`.
		return field.ErrorList{field.Required(path.Child("kind"), "Insert, Update, Upsert or Delete")}
	}
	return v1alpha1.OneOf(path.Child("kind"), m.Kind, v1alpha1.MutationInsert, v1alpha1.MutationUpdate, v1alpha1.MutationUpsert, v1alpha1.MutationDelete)
}
