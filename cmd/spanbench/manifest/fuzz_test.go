package manifest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/customcheck"
)

// FuzzParse feeds `spanbench run`'s decoder and validator arbitrary files.
// Whatever the file, Parse returns (no panic; a hostile quantity or
// duration used to hang it), and what it accepts is a run the engine can
// take: a resolved workload that validates again, lasting more than 0 and
// at most MaxRunDuration, with an interval within its bounds.
// `go test` runs the seeds; `go test -fuzz FuzzParse` explores.
func FuzzParse(f *testing.F) {
	f.Add([]byte(goodWorkload))
	f.Add([]byte(minimalRun))
	f.Add([]byte(minimalRun + "  runners:\n    resources:\n      requests: {cpu: \"1e-999999999\", memory: 2147483648}\n"))
	f.Add([]byte(minimalRun + "---\n" + minimalRun))
	f.Add([]byte("duration: 2562047h\nload: {steps: [{rate: 1, duration: 2562047h}, {rate: 1, duration: 2562047h}]}\n"))
	for _, p := range []string{"../../../test/apivalidation/testdata/full.yaml", "../../../config/samples/ycsb-warmup.yaml"} {
		if data, err := os.ReadFile(filepath.FromSlash(p)); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		type result struct {
			r   *Run
			err error
		}
		done := make(chan result, 1)
		go func() {
			r, err := Parse(data, "f")
			done <- result{r, err}
		}()
		var got result
		select {
		case got = <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("Parse did not return within 5 s on %q", data)
		}
		r, err := got.r, got.err
		if err != nil {
			return
		}
		w := r.Workload
		if errs := customcheck.Workload(nil, &w, v1alpha1.DialectGoogleSQL); len(errs) > 0 {
			t.Fatalf("an accepted workload does not validate again: %v", errs)
		}
		if d := w.TotalDuration(); d <= 0 || d > v1alpha1.MaxRunDuration {
			t.Fatalf("an accepted workload lasts %v", d)
		}
		if iv := w.Interval.Duration; iv < time.Second || iv > time.Hour {
			t.Fatalf("an accepted workload has an interval of %v", iv)
		}
	})
}
