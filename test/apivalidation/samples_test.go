package apivalidation

import (
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	climanifest "github.com/spanbench/spanbench/cmd/spanbench/manifest"
)

// TestRunSamplesAreAdmittedByBoth: every BenchmarkRun sample, a capacity
// search's (search-*) among them, is admitted by the API server and by
// `spanbench run`'s decoder.
func TestRunSamplesAreAdmittedByBoth(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "config", "samples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples found: %v", err)
	}
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "campaign-") {
			continue // TestCampaignSamplesAreAcceptedAndExpand
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			data := mustRead(t, f)
			js, err := yaml.YAMLToJSON(data)
			if err != nil {
				t.Fatalf("not YAML: %v", err)
			}
			obj := object(t, js, "", "")
			err = createStrict(t, obj)
			t.Cleanup(func() { deleteIfCreated(t, obj) })
			if err != nil {
				t.Fatalf("the API server refused the sample: %v", err)
			}
			if _, err := climanifest.Parse(data, "sample"); err != nil {
				t.Fatalf("spanbench run refuses the sample: %v", err)
			}
		})
	}
}
