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
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, s.structural)
	structuraldefaulting.Default(obj, s.structural)

	errs := apiservervalidation.ValidateCustomResource(nil, obj, s.openAPI)
	errs = append(errs, schemaobjectmeta.Validate(nil, obj, s.structural, false)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, s.structural, obj)...)
	if s.rules == nil {
		return errs, nil
	}
	// As the API server: the rules run only on an object of the schema's
	// shape, and say that they did not when it is not.
	if blocked := blockingError(errs); blocked != nil {
		return append(errs, blocked), nil
	}
	celErrs, _ := s.rules.Validate(ctx, nil, s.structural, obj, nil, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...), nil
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
	files, err := fs.Glob(bases, "bases/*.yaml")
	if err != nil {
		return nil, err
	}
	out := map[string]*schema{}
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
			s, err := compile(v.Schema)
			if err != nil {
				return nil, fmt.Errorf("embedded %s, version %s: %w", f, v.Name, err)
			}
			out[crd.Spec.Names.Kind+"/"+v.Name] = s
		}
	}
	return out, nil
}

// compile builds one version's validation as the API server's CRD handler
// builds it.
func compile(v *apiextensionsv1.CustomResourceValidation) (*schema, error) {
	if v == nil || v.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("no schema")
	}
	var internal apiextensionsinternal.CustomResourceValidation
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v, &internal, nil); err != nil {
		return nil, err
	}
	structural, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, err
	}
	if err := structuraldefaulting.PruneDefaults(structural); err != nil {
		return nil, err
	}
	openAPI, _, err := apiservervalidation.NewSchemaValidator(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, err
	}
	return &schema{
		structural: structural,
		openAPI:    openAPI,
		rules:      cel.NewValidator(structural, true, celconfig.PerCallLimit),
	}, nil
}
