package apivalidation

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/spanbench/spanbench/api/v1alpha1"
	climanifest "github.com/spanbench/spanbench/cmd/spanbench/manifest"
)

// absentRuns are manifests whose fault is a field left out, or an object
// left empty, where the Go types cannot tell it from one set to its zero
// value: a choice without a value, a load of {} beside streams. The API
// server's schema refuses each; `spanbench run` once admitted them (the
// oracle's seeds 8 and 1, and 9) and now validates the manifest as written
// against the same schema (manifest.SchemaErrors).
var absentRuns = []badRun{
	{
		name: "choice-without-a-value",
		base: "custom.yaml",
		patch: `
spec:
  workload:
    custom:
      tables:
      - name: Singers
        rows: 100
        columns:
        - name: Genre
          generator:
            type: Choice
            choices:
            - weight: 3
            - value: jazz
              weight: 1
      - name: Albums
        rowsPerParent: 3
        columns:
        - name: Sales
          generator:
            type: Zipfian
            min: 0
            max: 1000000`,
		want: []cause{
			{"<nil>", "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"},
			{"spec.workload.custom.tables[0].columns[0].generator.choices[0].value", "Required value"},
		},
	},
	{
		// minimal.yaml's load loses its rate (a merge patch's null
		// deletes), which leaves {}.
		name:  "empty-load-beside-streams",
		patch: streamsBesideLoad("      rate: null\n"),
		want: []cause{
			{"spec.workload.load", "Invalid value: \"object\": load: set exactly one of rate, steps, ramp, search and concurrency"},
			{"spec.workload.load", "Invalid value: \"object\": load: set load (one stream of every operation) or streams (each with its own load), exactly one of them"},
		},
	},
}

// streamsBesideLoad is minimal.yaml with two streams, its load patched by
// load (YAML under spec.workload.load).
func streamsBesideLoad(load string) string {
	return `
spec:
  workload:
    duration: 10m
    load:
` + load + `    operations:
    - type: Read
      weight: 1
    - type: Update
      weight: 1
    streams:
    - name: online
      operations:
      - name: read
        weight: 1
      load:
        rate: 100
    - name: batch
      operations:
      - name: update
        weight: 1
      load:
        concurrency: 1`
}

// TestSpanbenchRunRefusesAbsentFieldsAsTheAPIServerDoes sends manifests
// that only differ from valid ones by a field left out, an object left
// empty or a null, to the API server and to `spanbench run`'s reader
// (manifest.Parse): both must refuse with the same field errors, word for
// word. A null cannot be written as a merge patch (null deletes), so the
// null ramp (the oracle's seed 9) is set on the decoded object.
func TestSpanbenchRunRefusesAbsentFieldsAsTheAPIServerDoes(t *testing.T) {
	cases := []struct {
		name, base, patch string
		edit              func(spec map[string]any)
	}{
		{name: "null-ramp-beside-streams", base: "minimal.yaml", patch: streamsBesideLoad("      rate: null\n"),
			edit: func(spec map[string]any) {
				spec["workload"].(map[string]any)["load"] = map[string]any{"ramp": nil}
			}},
	}
	for _, tc := range absentRuns {
		base := tc.base
		if base == "" {
			base = "minimal.yaml"
		}
		cases = append(cases, struct {
			name, base, patch string
			edit              func(spec map[string]any)
		}{name: tc.name, base: base, patch: tc.patch})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := object(t, manifest(t, tc.base, tc.patch), tc.name, tc.base[:len(tc.base)-len(".yaml")])
			if tc.edit != nil {
				tc.edit(obj.Object["spec"].(map[string]any))
			}
			js, err := obj.MarshalJSON()
			if err != nil {
				t.Fatalf("encoding the manifest: %v", err)
			}
			serverErr := createStrict(t, obj)
			if serverErr == nil {
				deleteIfCreated(t, obj)
				t.Fatalf("the API server admitted the manifest; the case is not one it refuses\nmanifest: %s", js)
			}
			_, cliErr := climanifest.Parse(js, "f")
			if cliErr == nil {
				t.Fatalf("spanbench run admitted what the API server refused with %v\nmanifest: %s", causesOf(serverErr), js)
			}
			if diff := cmp.Diff(causesOf(serverErr), fieldCauses(t, cliErr)); diff != "" {
				t.Errorf("spanbench run's refusal differs from the API server's (-server +spanbench run):\n%s", diff)
			}
		})
	}
}

// fieldCauses are the field errors of a refusal of manifest.Parse, as
// the API server's causes read (sorted as causesOf sorts them).
func fieldCauses(t *testing.T, err error) []cause {
	t.Helper()
	var agg utilerrors.Aggregate
	if !errors.As(err, &agg) {
		t.Fatalf("spanbench run refused without field errors: %v", err)
	}
	var errs field.ErrorList
	for _, e := range agg.Errors() {
		var fe *field.Error
		if !errors.As(e, &fe) {
			t.Fatalf("spanbench run refused with an error that names no field: %v", e)
		}
		errs = append(errs, fe)
	}
	// The API server turns field errors into causes with NewInvalid.
	return causesOf(apierrors.NewInvalid(v1alpha1.GroupVersion.WithKind("BenchmarkRun").GroupKind(), "f", errs))
}
