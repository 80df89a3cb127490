package v1alpha1_test

import (
	"strings"
	"testing"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

func TestRequestTagKeepsShortNamesAsTheyAre(t *testing.T) {
	for _, tc := range []struct{ run, op, want string }{
		{"nightly", "read", "spanbench/nightly/read"},
		{"r", strings.Repeat("o", 38), "spanbench/r/" + strings.Repeat("o", 38)}, // exactly 50
		{strings.Repeat("n", 35), "read", "spanbench/" + strings.Repeat("n", 35) + "/read"},
	} {
		if got := v1alpha1.RequestTag(tc.run, tc.op); got != tc.want {
			t.Errorf("RequestTag(%q, %q) = %q; want it unchanged, %q", tc.run, tc.op, got, tc.want)
		}
	}
}

// TestRequestTagsStayUniqueAfterSpannersCut is the campaign case: children
// whose names share their first 50 characters must not share a tag, since
// Spanner would merge their statistics.
func TestRequestTagsStayUniqueAfterSpannersCut(t *testing.T) {
	campaign := "read-vs-sql-tokyo-nightly-20261124t020000z-3f9a2c1b"
	longOp := strings.Repeat("x", 40) // the API's longest operation name
	for _, tc := range []struct {
		name       string
		runA, runB string
		opA, opB   string
		wantPrefix string // a readable start both tags keep
	}{
		{"runs differ after character 50", campaign + "-r1", campaign + "-r2", "read", "read", "spanbench/read-vs-sql"},
		{"runs differ only in the last character", campaign + "-cell-a-r1", campaign + "-cell-a-r2", "update", "update", "spanbench/read-vs-sql"},
		{"long operation name", campaign + "-r1", campaign + "-r2", longOp, longOp, "spanbench/"},
		{"two long operations of one run", campaign, campaign, longOp + "", longOp[:39] + "y", "spanbench/"},
		{"one run, operation names differ", campaign, campaign, "read", "scan", "spanbench/read-vs-sql"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := v1alpha1.RequestTag(tc.runA, tc.opA), v1alpha1.RequestTag(tc.runB, tc.opB)
			for _, tag := range []string{a, b} {
				if len(tag) > v1alpha1.MaxTagLength {
					t.Errorf("tag %q is %d characters; Spanner keeps only %d", tag, len(tag), v1alpha1.MaxTagLength)
				}
				if !strings.HasPrefix(tag, tc.wantPrefix) {
					t.Errorf("tag %q lost its readable prefix %q", tag, tc.wantPrefix)
				}
			}
			if a == b {
				t.Errorf("(%q, %q) and (%q, %q) both get tag %q: Spanner's statistics would merge them", tc.runA, tc.opA, tc.runB, tc.opB, a)
			}
			if again := v1alpha1.RequestTag(tc.runA, tc.opA); again != a {
				t.Errorf("tag is not stable: %q then %q", a, again)
			}
		})
	}
}

func TestRequestTagKeepsTheOperationWholeWhenItFits(t *testing.T) {
	run := strings.Repeat("campaign-", 8)
	tag := v1alpha1.RequestTag(run, "update")
	if !strings.HasSuffix(tag, "/update") || !strings.HasPrefix(tag, "spanbench/campaign-") {
		t.Errorf("RequestTag(%q, update) = %q; want spanbench/<run prefix>~<hash>/update", run, tag)
	}
}
