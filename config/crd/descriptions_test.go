package crd

import (
	"io/fs"
	"reflect"
	"regexp"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// minDescriptionWords is the fewest words a field's description may have:
// "p50 is the median." (four) restates the name; "p50 is the median
// latency." says what it measures.
const minDescriptionWords = 5

// TestEveryFieldIsDescribed holds the project's rule "every field
// documented" for what `kubectl explain` shows: every property of both
// CRDs has a description of at least minDescriptionWords words, and one
// that has a schema default names it. Only the root metadata is exempt:
// controller-gen never describes it. The fix for a failure is the field's
// doc comment in api/v1alpha1, then `make manifests`.
func TestEveryFieldIsDescribed(t *testing.T) {
	for file, crd := range embeddedCRDs(t) {
		for _, v := range crd.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				t.Errorf("%s %s: no schema", file, v.Name)
				continue
			}
			var fields int
			walkProperties(v.Schema.OpenAPIV3Schema, crd.Spec.Names.Kind, func(path string, p *apiextensionsv1.JSONSchemaProps) {
				fields++
				if path == crd.Spec.Names.Kind+".metadata" {
					return
				}
				desc := strings.TrimSpace(p.Description)
				switch {
				case desc == "":
					t.Errorf("%s: no description", path)
				case len(strings.Fields(desc)) < minDescriptionWords:
					t.Errorf("%s: description %q says too little (fewer than %d words): say what it does, its unit and its default", path, desc, minDescriptionWords)
				}
				if p.Default != nil && !strings.Contains(strings.ToLower(desc), "default") {
					t.Errorf("%s: has the default %s, which its description does not name", path, p.Default.Raw)
				}
			})
			if fields < 100 {
				t.Errorf("%s %s: only %d properties walked; is the walk broken?", file, v.Name, fields)
			}
		}
	}
}

// embeddedCRDs are the CRDs of bases/ by file name.
func embeddedCRDs(t *testing.T) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	files, err := fs.Glob(bases, "bases/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs embedded from bases/: %v", err)
	}
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, file := range files {
		data, err := bases.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out[file] = crd
	}
	return out
}

// walkProperties calls fn for every property under s, depth first, with
// its path (list items as [], map values as {}).
func walkProperties(s *apiextensionsv1.JSONSchemaProps, path string, fn func(string, *apiextensionsv1.JSONSchemaProps)) {
	for name, p := range s.Properties {
		fn(path+"."+name, &p)
		walkProperties(&p, path+"."+name, fn)
	}
	if s.Items != nil && s.Items.Schema != nil {
		walkProperties(s.Items.Schema, path+"[]", fn)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		walkProperties(s.AdditionalProperties.Schema, path+"{}", fn)
	}
}

// durationExample is a duration as the API writes it, such as 4.211ms,
// 30s or 1m0s: what a duration field's description must show, because
// the schema says only "string".
var durationExample = regexp.MustCompile(`\b([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+\b`)

// TestEveryDurationFieldShowsItsForm: every metav1.Duration field of both
// kinds (found from the Go types, since the CRD schema calls it a plain
// string) shows in its description a duration as the API writes it, such
// as 4.211ms, so that `kubectl explain` tells the reader the unit. It
// looks each one up at the path the Go types give, and fails if it found
// too few: a broken walk must not pass.
func TestEveryDurationFieldShowsItsForm(t *testing.T) {
	for kind, obj := range map[string]any{"BenchmarkRun": v1alpha1.BenchmarkRun{}, "BenchmarkCampaign": v1alpha1.BenchmarkCampaign{}} {
		props := crdProperties(t, kind)
		var found int
		durationPaths(reflect.TypeOf(obj), kind, func(path string) {
			p, ok := props[path]
			if !ok {
				t.Errorf("%s: a duration in the Go types, absent from the CRD", path)
				return
			}
			found++
			if !durationExample.MatchString(p.Description) {
				t.Errorf("%s: description %q shows no duration such as 4.211ms; `kubectl explain` readers cannot tell its unit", path, p.Description)
			}
		})
		if found < 10 {
			t.Errorf("%s: only %d duration fields found; is the walk broken?", kind, found)
		}
	}
}

// crdProperties is every property of kind's schema by path, as
// walkProperties names them.
func crdProperties(t *testing.T, kind string) map[string]apiextensionsv1.JSONSchemaProps {
	t.Helper()
	props := map[string]apiextensionsv1.JSONSchemaProps{}
	for _, crd := range embeddedCRDs(t) {
		if crd.Spec.Names.Kind != kind {
			continue
		}
		for _, v := range crd.Spec.Versions {
			walkProperties(v.Schema.OpenAPIV3Schema, kind, func(path string, p *apiextensionsv1.JSONSchemaProps) { props[path] = *p })
		}
	}
	if len(props) == 0 {
		t.Fatalf("no CRD of kind %s in bases/", kind)
	}
	return props
}

// durationPaths calls fn with the path (as walkProperties names it) of
// every metav1.Duration field under typ, skipping object metadata.
func durationPaths(typ reflect.Type, path string, fn func(string)) {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch {
	case typ == reflect.TypeOf(metav1.Duration{}):
		fn(path)
		return
	case typ.Kind() == reflect.Slice:
		durationPaths(typ.Elem(), path+"[]", fn)
		return
	case typ.Kind() == reflect.Map:
		durationPaths(typ.Elem(), path+"{}", fn)
		return
	case typ.Kind() != reflect.Struct || typ == reflect.TypeOf(metav1.ObjectMeta{}):
		return
	}
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported():
		case name == "":
			durationPaths(f.Type, path, fn)
		default:
			durationPaths(f.Type, path+"."+name, fn)
		}
	}
}
