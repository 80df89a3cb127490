// Package crd validates a manifest against the CustomResourceDefinitions of
// bases/ (controller-gen's output, embedded as they are), the way the API
// server validates a create: nulls pruned, defaults applied, the OpenAPI
// schema, list invariants and the x-kubernetes-validations (CEL) rules,
// with apiextensions-apiserver's own code. `spanbench run -f` and
// `spanbench campaign -f` call it, so that a file the API server refuses
// for its schema is refused by the CLI too, at the same field; the Go
// types alone cannot tell a field left out from one set empty.
package crd

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sync"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

//go:embed bases/*.yaml
var bases embed.FS

// schema is one kind's compiled validation.
type schema struct {
	structural *structuralschema.Structural
	openAPI    apiservervalidation.SchemaValidator
	// rules is nil when the schema has no x-kubernetes-validations.
	rules *cel.Validator
}

// schemas compiles the embedded CRDs once: compiling every CEL rule takes
// a noticeable time, and the result, derived from constant bytes, is never
// written after.
var schemas = sync.OnceValues(compileAll)

// Validate validates obj, a manifest decoded from JSON (numbers as int64
// or float64, as k8s.io/apimachinery/pkg/util/json decodes them), as the
// API server validates the creation of a kind of the embedded CRDs at
// version. It defaults obj in place, as the API server does before it
// validates. Unknown fields are the caller's to refuse (strict decoding).
func Validate(ctx context.Context, kind, version string, obj map[string]any) (field.ErrorList, error) {
	all, err := schemas()
	if err != nil {
		return nil, err
	}
	s, ok := all[kind+"/"+version]
	if !ok {
		return nil, fmt.Errorf("no CustomResourceDefinition of kind %s at version %s", kind, version)
	}
	return s.validate(ctx, obj), nil
}

// ValidateWorkload validates a workload file (what a BenchmarkRun holds
// at spec.workload, on its own) against that part of the BenchmarkRun
// CRD at version v1alpha1, as Validate validates a manifest; the errors'
// paths start at the workload (load.rate). The rules on the run's spec
// that combine the workload with other fields are not run: a workload
// file has none of those fields.
func ValidateWorkload(ctx context.Context, obj map[string]any) (field.ErrorList, error) {
	s, err := workloadSchema()
	if err != nil {
		return nil, err
	}
	return s.validate(ctx, obj), nil
}

var workloadSchema = sync.OnceValues(func() (*schema, error) {
	props, err := internalSchemas()
	if err != nil {
		return nil, err
	}
	p, ok := props["BenchmarkRun/v1alpha1"]
	if !ok {
		return nil, fmt.Errorf("no CustomResourceDefinition of kind BenchmarkRun at version v1alpha1")
	}
	spec, ok := p.Properties["spec"]
	if !ok {
		return nil, fmt.Errorf("the BenchmarkRun CRD has no spec")
	}
	workload, ok := spec.Properties["workload"]
	if !ok {
		return nil, fmt.Errorf("the BenchmarkRun CRD has no spec.workload")
	}
	return compile(&workload, false)
})

// validate is the API server's validation of a create, after decoding:
// nulls pruned and defaults applied (in place), then the OpenAPI schema,
// embedded objects' metadata, list invariants and, on an object of the
// schema's shape, the CEL rules.
func (s *schema) validate(ctx context.Context, obj map[string]any) field.ErrorList {
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, s.structural)
	structuraldefaulting.Default(obj, s.structural)

	errs := apiservervalidation.ValidateCustomResource(nil, obj, s.openAPI)
	errs = append(errs, schemaobjectmeta.Validate(nil, obj, s.structural, false)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, s.structural, obj)...)
	if s.rules == nil {
		return errs
	}
	// As the API server: the rules run only on an object of the schema's
	// shape, and say that they did not when it is not.
	if blocked := blockingError(errs); blocked != nil {
		return append(errs, blocked)
	}
	celErrs, _ := s.rules.Validate(ctx, nil, s.structural, obj, nil, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...)
}

// blockingError is the API server's notice that the CEL rules were
// skipped, when errs hold an error that leaves the object unfit for them
// (k8s.io/apiextensions-apiserver/pkg/registry/customresource's
// hasBlockingErr, which is not exported).
func blockingError(errs field.ErrorList) *field.Error {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")
		}
	}
	return nil
}

// compileAll compiles every embedded CRD's schemas, by "Kind/version".
func compileAll() (map[string]*schema, error) {
	props, err := internalSchemas()
	if err != nil {
		return nil, err
	}
	out := map[string]*schema{}
	for name, p := range props {
		s, err := compile(p, true)
		if err != nil {
			return nil, fmt.Errorf("embedded CRD of %s: %w", name, err)
		}
		out[name] = s
	}
	return out, nil
}

// internalSchemas reads every embedded CRD's schemas, by "Kind/version",
// converted to the internal version the validation code takes, as the API
// server's CRD handler converts them.
func internalSchemas() (map[string]*apiextensionsinternal.JSONSchemaProps, error) {
	files, err := fs.Glob(bases, "bases/*.yaml")
	if err != nil {
		return nil, err
	}
	out := map[string]*apiextensionsinternal.JSONSchemaProps{}
	for _, f := range files {
		data, err := bases.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(data, &crd); err != nil {
			return nil, fmt.Errorf("embedded %s: %w", f, err)
		}
		for _, v := range crd.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				return nil, fmt.Errorf("embedded %s, version %s: no schema", f, v.Name)
			}
			var internal apiextensionsinternal.CustomResourceValidation
			if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v.Schema, &internal, nil); err != nil {
				return nil, fmt.Errorf("embedded %s, version %s: %w", f, v.Name, err)
			}
			out[crd.Spec.Names.Kind+"/"+v.Name] = internal.OpenAPIV3Schema
		}
	}
	return out, nil
}

// compile builds a schema's validation as the API server's CRD handler
// builds it; root says whether it is a resource's root.
func compile(props *apiextensionsinternal.JSONSchemaProps, root bool) (*schema, error) {
	structural, err := structuralschema.NewStructural(props)
	if err != nil {
		return nil, err
	}
	if err := structuraldefaulting.PruneDefaults(structural); err != nil {
		return nil, err
	}
	openAPI, _, err := apiservervalidation.NewSchemaValidator(props)
	if err != nil {
		return nil, err
	}
	return &schema{
		structural: structural,
		openAPI:    openAPI,
		rules:      cel.NewValidator(structural, root, celconfig.PerCallLimit),
	}, nil
}
