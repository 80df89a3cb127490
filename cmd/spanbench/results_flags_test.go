package main

import (
	"io"
	"strings"
	"testing"
)

// TestManagerResultsBucketFlags: --results-bucket is gs:// or file://
// only; a file:// bucket needs the volume the runner pods mount (a host
// path or a claim, not both), a gs:// bucket none; unset, the runners
// keep their results in ConfigMaps.
func TestManagerResultsBucketFlags(t *testing.T) {
	f, err := parseManagerFlags([]string{"--runner-image", "x"}, io.Discard)
	if err != nil || f.resultsStore.URL != "" || f.resultsStore.Volume != nil {
		t.Fatalf("no --results-bucket: %+v, %v; want no bucket", f.resultsStore, err)
	}
	f, err = parseManagerFlags([]string{"--runner-image", "x", "--results-bucket", "file:///results", "--results-host-path", "/var/lib/spanbench"}, io.Discard)
	if err != nil || f.resultsStore.MountPath != "/results" || f.resultsStore.Volume == nil || f.resultsStore.Volume.HostPath == nil ||
		f.resultsStore.Volume.HostPath.Path != "/var/lib/spanbench" {
		t.Errorf("a file:// bucket on a host path: %+v, %v; want the host path mounted at /results", f.resultsStore, err)
	}
	f, err = parseManagerFlags([]string{"--runner-image", "x", "--results-bucket", "file:///results", "--results-volume-claim", "results"}, io.Discard)
	if err != nil || f.resultsStore.Volume == nil || f.resultsStore.Volume.PersistentVolumeClaim == nil {
		t.Errorf("a file:// bucket on a claim: %+v, %v; want the claim mounted", f.resultsStore, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--results-bucket", "s3://results"}, "not allowed"},
		{[]string{"--results-bucket", "gs://results?access_id=me"}, "query"},
		{[]string{"--results-bucket", "file:///results"}, "needs one of"},
		{[]string{"--results-bucket", "file:///results", "--results-host-path", "/a", "--results-volume-claim", "c"}, "needs one of"},
		{[]string{"--results-bucket", "gs://results", "--results-host-path", "/a"}, "not gs://"},
		{[]string{"--results-volume-claim", "c"}, "need a file://"},
	} {
		_, err := parseManagerFlags(append([]string{"--runner-image", "x"}, c.args...), io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v; want a refusal saying %q", c.args, err, c.want)
		}
	}
}
