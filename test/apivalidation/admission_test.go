package apivalidation

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// decodeError marks a case the CLI refuses when decoding, before Validate:
// unknown fields and durations that are not Go durations.
const decodeError = "(decode error)"

// badRun is a manifest the API server must refuse.
type badRun struct {
	// name is the case, and the object's name.
	name string
	// base is the testdata file patched; default minimal.yaml.
	base string
	// patch is a YAML merge patch on base.
	patch string
	// want are the exact field errors of the refusal (field, message).
	want []cause
	// wantMessage is the exact message of a refusal without field errors
	// (strict decoding).
	wantMessage string
	// goField is the path the CLI must report, when it is not want[0].Field:
	// a refusal of the webhook (the CRD's schema and rules are checked by
	// the CLI as the API server checks them, so their errors agree);
	// decodeError when the CLI refuses it while decoding.
	goField string
}

func TestAdmissionRefusesBadRuns(t *testing.T) {
	for _, tc := range slices.Concat(badRuns, hostileRuns, tpccBadRuns, streamsBadRuns, customRuns, customPGRuns, leftoverRuns, absentRuns, searchBadRuns) {
		t.Run(tc.name, func(t *testing.T) {
			base := tc.base
			if base == "" {
				base = "minimal.yaml"
			}
			obj := object(t, manifest(t, base, tc.patch), tc.name, strings.TrimSuffix(base, ".yaml"))
			js, err := obj.MarshalJSON()
			if err != nil {
				t.Fatalf("encoding the manifest: %v", err)
			}

			err = createStrict(t, obj)
			if err == nil {
				deleteIfCreated(t, obj)
				t.Fatalf("the API server accepted the manifest; want it refused with %v%s", tc.want, tc.wantMessage)
			}
			if tc.wantMessage != "" {
				if got := statusMessage(err); got != tc.wantMessage {
					t.Errorf("refusal message:\n got: %s\nwant: %s", got, tc.wantMessage)
				}
			} else if diff := cmp.Diff(tc.want, causesOf(err)); diff != "" {
				t.Errorf("refusal causes differ (-want +got):\n%s\nfull error: %v\ngot as Go:\n%s", diff, err, goLiteral(causesOf(err)))
			}

			checkGoAgrees(t, js, tc)
		})
	}
}

// checkGoAgrees asserts that the CLI's validation refuses the manifest too,
// at the same field.
func checkGoAgrees(t *testing.T, js []byte, tc badRun) {
	t.Helper()
	wantField := tc.goField
	for _, c := range tc.want {
		// "<nil>" is the object's root: the notice that CEL rules were
		// skipped, or a rule on metadata.
		if wantField == "" && c.Field != "<nil>" {
			wantField = c.Field
		}
	}
	if wantField == "" && len(tc.want) > 0 {
		wantField = tc.want[0].Field // only rules on metadata
	}
	errs, decodeErr := goValidate(js)
	if wantField == decodeError {
		if decodeErr == nil {
			t.Errorf("the CLI decoded a manifest the API server refuses; Validate said: %v", errs)
		}
		return
	}
	if decodeErr != nil {
		t.Fatalf("the CLI cannot decode the manifest: %v", decodeErr)
	}
	if !hasField(errs, wantField) {
		t.Errorf("BenchmarkRun.Validate disagrees with the API server: want an error at %s, got %v", wantField, errs)
	}
}

func hasField(errs field.ErrorList, path string) bool {
	for _, e := range errs {
		if e.Field == path {
			return true
		}
	}
	return false
}

func goLiteral(cs []cause) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "\t\t{%q, %q},\n", c.Field, c.Message)
	}
	return b.String()
}
