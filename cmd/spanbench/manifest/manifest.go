// Package manifest reads what `spanbench run -f` is given: a BenchmarkRun
// manifest (the same file `kubectl apply` takes) or a plain workload file.
// Unknown fields are refused with their full path, defaults are applied and
// the workload is validated, so bad input stops before anything starts.
package manifest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/config/crd"
	"github.com/spanbench/spanbench/spanner/customcheck"
)

// Run is what a file asks to run.
type Run struct {
	// Name names the run: the BenchmarkRun's name, or the file's base name.
	Name string
	// Target is the manifest's target; nil for a plain workload file.
	Target *v1alpha1.TargetSpec
	// Workload is the resolved (WorkloadSpec.Resolved), validated
	// workload: resolved here, once per invocation, and handed on.
	Workload v1alpha1.WorkloadSpec
}

// MaxFileBytes bounds a manifest file: the API server takes requests of
// at most 3 MiB, and a file is read whole.
const MaxFileBytes = 3 << 20

// ReadFile reads and checks a manifest or workload file.
func ReadFile(path string) (*Run, error) {
	data, err := readBounded(path)
	if err != nil {
		return nil, err
	}
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	r, err := Parse(data, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// readBounded reads a file of at most MaxFileBytes.
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes, the most the API server takes", path, MaxFileBytes)
	}
	return data, nil
}

// Parse reads a manifest or workload document. defaultName names a plain
// workload's run. Duplicate keys and unknown fields are refused, as
// `kubectl apply` refuses them with its default --validate=strict; a file
// of several documents is refused (kubectl would apply each; a run is
// one), empty documents aside.
func Parse(data []byte, defaultName string) (*Run, error) {
	js, err := oneDocument(data)
	if err != nil {
		return nil, err
	}
	var probe struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
	}
	if err := json.Unmarshal(js, &probe); err != nil {
		return nil, fmt.Errorf("not a YAML or JSON object: %w", err)
	}
	if probe.Kind == "" {
		return parseWorkload(js, defaultName)
	}
	if probe.Kind != "BenchmarkRun" || probe.APIVersion != v1alpha1.GroupVersion.String() {
		return nil, &KindError{APIVersion: probe.APIVersion, Kind: probe.Kind, Want: "BenchmarkRun"}
	}
	return parseBenchmarkRun(js)
}

// KindError refuses a manifest of another kind (or API version) than the
// command reads.
type KindError struct {
	// APIVersion and Kind are the manifest's.
	APIVersion, Kind string
	// Want is the kind the command reads.
	Want string
}

func (e *KindError) Error() string {
	return fmt.Sprintf("kind %s %q is not a %s %s", e.APIVersion, e.Kind, v1alpha1.GroupVersion, e.Want)
}

func parseWorkload(js []byte, name string) (*Run, error) {
	var w v1alpha1.WorkloadSpec
	if err := strict(js, &w); err != nil {
		return nil, err
	}
	// As for a manifest (SchemaErrors): the schema of a run's workload, as
	// written.
	if err := refuse(schemaErrors(js, crd.ValidateWorkload)); err != nil {
		return nil, err
	}
	r := &Run{Name: sanitize(name), Workload: w.Resolved()}
	if errs := customcheck.Workload(nil, &r.Workload, v1alpha1.DialectGoogleSQL); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return r, nil
}

func parseBenchmarkRun(js []byte) (*Run, error) {
	var br v1alpha1.BenchmarkRun
	if err := strict(js, &br); err != nil {
		return nil, err
	}
	if br.Name == "" {
		return nil, field.Required(field.NewPath("metadata", "name"), "a BenchmarkRun needs a name")
	}
	if err := validateSchema(js, br.Kind); err != nil {
		return nil, err
	}
	br.Spec.Workload = br.Spec.Workload.Resolved()
	if errs := customcheck.Run(&br); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return &Run{Name: br.Name, Target: &br.Spec.Target, Workload: br.Spec.Workload}, nil
}

// validateSchema refuses a manifest its kind's CRD schema refuses
// (SchemaErrors).
func validateSchema(js []byte, kind string) error {
	return refuse(SchemaErrors(js, kind))
}

// refuse is the refusal of a validation's errors, nil if there are none.
func refuse(errs field.ErrorList, err error) error {
	if err != nil {
		return err
	}
	return errs.ToAggregate()
}

// SchemaErrors validates a manifest, as written, against its kind's CRD,
// as the API server does before its webhook; Parse and ParseCampaign call
// it after strict decoding. The Go types a manifest decodes into cannot
// tell a field left out from one set empty (a choice without a value, a
// load of {} or with a null ramp); the schema can. The errors name the
// field as the API server's do.
func SchemaErrors(js []byte, kind string) (field.ErrorList, error) {
	return schemaErrors(js, func(ctx context.Context, obj map[string]any) (field.ErrorList, error) {
		return crd.Validate(ctx, kind, v1alpha1.GroupVersion.Version, obj)
	})
}

// schemaErrors decodes js as the API server decodes a request (numbers as
// int64 or float64) and validates it.
func schemaErrors(js []byte, validate func(context.Context, map[string]any) (field.ErrorList, error)) (field.ErrorList, error) {
	var obj map[string]any
	if err := utiljson.Unmarshal(js, &obj); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	// Parse takes no context: the CEL cost budget bounds the rules' work.
	return validate(context.Background(), obj)
}

// oneDocument is the JSON of the only non-empty YAML document of data.
// Empty documents (a leading ---, only comments) are skipped, as kubectl
// skips them.
func oneDocument(data []byte) ([]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("not valid YAML: %w", err)
		}
		js, err := yaml.YAMLToJSONStrict(doc)
		if err != nil {
			return nil, fmt.Errorf("not valid YAML: %w", err)
		}
		if t := bytes.TrimSpace(js); len(t) == 0 || string(t) == "null" {
			continue
		}
		docs = append(docs, js)
	}
	switch len(docs) {
	case 0:
		return nil, errors.New("no document: the file is empty")
	case 1:
		return docs[0], nil
	}
	return nil, fmt.Errorf("%d documents in one file: spanbench run takes one BenchmarkRun or workload (kubectl would create each; split the file)", len(docs))
}

// strict decodes JSON refusing unknown and duplicate fields, and reports
// them with their path (spec.workload.load.rat).
func strict(js []byte, v any) error {
	strictErrs, err := sigsjson.UnmarshalStrict(js, v, sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	if err != nil {
		return fmt.Errorf("decoding: %w", err)
	}
	if len(strictErrs) > 0 {
		msgs := make([]string, len(strictErrs))
		for i, e := range strictErrs {
			msgs[i] = e.Error()
		}
		return fmt.Errorf("%s", strings.Join(msgs, "; "))
	}
	return nil
}

// sanitize makes a file name usable as a run name in tags.
func sanitize(s string) string {
	var b bytes.Buffer
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	if b.Len() == 0 {
		return "run"
	}
	return b.String()
}

// ReadCampaignFile reads and checks a BenchmarkCampaign manifest, as
// `spanbench campaign -f` is given.
func ReadCampaignFile(path string) (*v1alpha1.BenchmarkCampaign, error) {
	data, err := readBounded(path)
	if err != nil {
		return nil, err
	}
	c, err := ParseCampaign(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// ParseCampaign reads a BenchmarkCampaign manifest, refusing unknown
// fields with their path, and validates it as the API server would.
func ParseCampaign(data []byte) (*v1alpha1.BenchmarkCampaign, error) {
	js, err := oneDocument(data)
	if err != nil {
		return nil, err
	}
	var head metav1.TypeMeta
	if err := json.Unmarshal(js, &head); err != nil {
		return nil, fmt.Errorf("not a YAML or JSON object: %w", err)
	}
	// The kind first: a BenchmarkRun's fields are all unknown to a campaign.
	if head.Kind != "BenchmarkCampaign" || head.APIVersion != v1alpha1.GroupVersion.String() {
		return nil, &KindError{APIVersion: head.APIVersion, Kind: head.Kind, Want: "BenchmarkCampaign"}
	}
	var c v1alpha1.BenchmarkCampaign
	if err := strict(js, &c); err != nil {
		return nil, err
	}
	if err := validateSchema(js, c.Kind); err != nil {
		return nil, err
	}
	if errs := customcheck.Campaign(&c); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return &c, nil
}
