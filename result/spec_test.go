package result

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAResultFileKeepsItsSpecAndStillMerges: a shard result written to a
// file (which re-indents the recorded spec) and read back is the same spec
// as its sibling still in memory, so the two merge; the spec comes back
// byte for byte apart from layout, and the warm-up it names still applies.
func TestAResultFileKeepsItsSpecAndStillMerges(t *testing.T) {
	spec := testSpec(fixedWarmUp(10 * time.Second))
	docs := shardDocs(t, spec, 2, 3, randomSamples(2, 600, 2, 3))
	path := filepath.Join(t.TempDir(), "shard-1.json")
	if err := WriteFile(path, docs[1]); err != nil {
		t.Fatal(err)
	}
	read, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(read.Spec.Raw()) == string(spec.Raw()) || !strings.Contains(string(read.Spec.Raw()), "\n") {
		t.Fatalf("the file did not re-indent the spec (%q); this test needs it to", read.Spec.Raw())
	}
	if !read.Spec.Equal(spec) || read.Spec.Settings().WarmUp != spec.Settings().WarmUp {
		t.Fatalf("the spec read back %s (settings %+v) differs from the one written %s", read.Spec.Raw(), read.Spec.Settings(), spec.Raw())
	}
	merged, err := Merge(docs[0], read)
	if err != nil {
		t.Fatalf("a shard read from a file does not merge with its sibling: %v", err)
	}
	if merged.WarmUp.Mode != WarmUpFixed || merged.WarmUp.Intervals != 1 {
		t.Errorf("the merge's warm-up is %+v; the spec asks for a Fixed 10 s (1 interval)", merged.WarmUp)
	}
}
