package apivalidation

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	climanifest "github.com/spanbench/spanbench/cmd/spanbench/manifest"
	"github.com/spanbench/spanbench/spanner/customcheck"
)

// manifest reads testdata/<file> and applies a YAML merge patch (RFC 7386:
// objects merge, lists are replaced, null deletes). It returns JSON.
func manifest(t *testing.T, file, patch string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatalf("reading the base manifest: %v", err)
	}
	base, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatalf("testdata/%s is not valid YAML: %v", file, err)
	}
	if strings.TrimSpace(patch) == "" {
		return base
	}
	p, err := yaml.YAMLToJSON([]byte(patch))
	if err != nil {
		t.Fatalf("the test's patch is not valid YAML: %v\n%s", err, patch)
	}
	out, err := jsonpatch.MergePatch(base, p)
	if err != nil {
		t.Fatalf("applying the test's patch to testdata/%s: %v", file, err)
	}
	return out
}

// object turns manifest JSON into an unstructured object in namespace
// default, named name unless the manifest's patch named it.
func object(t *testing.T, js []byte, name, baseName string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		t.Fatalf("manifest JSON does not decode into an object: %v", err)
	}
	if u.GetName() == baseName {
		u.SetName(name)
	}
	u.SetNamespace("default")
	return u
}

// createStrict creates obj as `kubectl apply` would: unknown and duplicate
// fields are errors, not warnings.
func createStrict(t *testing.T, obj client.Object) error {
	t.Helper()
	return k8sClient.Create(bounded(t), obj, client.FieldValidation("Strict"))
}

// deleteIfCreated removes an object a test created, so cases stay
// independent.
func deleteIfCreated(t *testing.T, obj client.Object) {
	t.Helper()
	if err := k8sClient.Delete(bounded(t), obj); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("cleaning up %s: %v", obj.GetName(), err)
	}
}

// cause is one field error of an admission refusal.
type cause struct {
	Field   string
	Message string
}

func (c cause) String() string { return fmt.Sprintf("%s: %s", c.Field, c.Message) }

// causesOf lists the field errors of an Invalid refusal, sorted.
func causesOf(err error) []cause {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return nil
	}
	var out []cause
	for _, c := range status.Status().Details.Causes {
		out = append(out, cause{Field: c.Field, Message: c.Message})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// goValidate decodes the manifest as the CLI does (strictly), validates
// it against the CRD's schema as written (manifest.SchemaErrors, whose
// errors, like the API server's, stop it before the webhook's checks),
// defaults the workload and validates the run. decodeErr is set when the
// manifest does not decode.
func goValidate(js []byte) (errs field.ErrorList, decodeErr error) {
	var run v1alpha1.BenchmarkRun
	strictErrs, err := sigsjson.UnmarshalStrict(js, &run, sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	if err != nil {
		return nil, err
	}
	if len(strictErrs) > 0 {
		return nil, errors.Join(strictErrs...)
	}
	if errs, err := climanifest.SchemaErrors(js, "BenchmarkRun"); err != nil || len(errs) > 0 {
		return errs, err
	}
	run.Spec.Workload = run.Spec.Workload.Resolved()
	return customcheck.Run(&run), nil
}

// statusMessage is the message of an API error's Status, or err's text.
func statusMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Message
	}
	return err.Error()
}

func keyOf(obj client.Object) client.ObjectKey {
	return client.ObjectKey{Namespace: obj.GetNamespace(), Name: obj.GetName()}
}
