// Package manifest reads what `spanbench run -f` is given: a BenchmarkRun
// manifest (the same file `kubectl apply` takes) or a plain workload file.
// Unknown fields are refused with their full path, defaults are applied and
// the workload is validated, so bad input stops before anything starts.
package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
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

// ReadFile reads and checks a manifest or workload file.
func ReadFile(path string) (*Run, error) {
	data, err := os.ReadFile(path)
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

// Parse reads a manifest or workload document. defaultName names a plain
// workload's run.
func Parse(data []byte, defaultName string) (*Run, error) {
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
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
		return nil, fmt.Errorf("kind %s %q is not a %s BenchmarkRun", probe.APIVersion, probe.Kind, v1alpha1.GroupVersion)
	}
	return parseBenchmarkRun(js)
}

func parseWorkload(js []byte, name string) (*Run, error) {
	var w v1alpha1.WorkloadSpec
	if err := strict(js, &w); err != nil {
		return nil, err
	}
	r := &Run{Name: sanitize(name), Workload: w.Resolved()}
	if errs := r.Workload.Validate(nil); len(errs) > 0 {
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
	br.Spec.Workload = br.Spec.Workload.Resolved()
	if errs := br.Validate(); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return &Run{Name: br.Name, Target: &br.Spec.Target, Workload: br.Spec.Workload}, nil
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
	data, err := os.ReadFile(path)
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
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	var c v1alpha1.BenchmarkCampaign
	if err := strict(js, &c); err != nil {
		return nil, err
	}
	if c.Kind != "BenchmarkCampaign" || c.APIVersion != v1alpha1.GroupVersion.String() {
		return nil, fmt.Errorf("kind %s %q is not a %s BenchmarkCampaign", c.APIVersion, c.Kind, v1alpha1.GroupVersion)
	}
	if errs := c.Validate(); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return &c, nil
}
