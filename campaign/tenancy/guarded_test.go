package tenancy

import (
	"fmt"
	"testing"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// Changes finds every guarded field a run sets differently from the
// template that gives a power, with the powers of which one allows it;
// clearing the account, the credentials or the image gives none.
func TestChangesAreTheGuardedFieldsThatGivePowers(t *testing.T) {
	tmpl := v1alpha1.BenchmarkRunSpec{}
	tmpl.Runners.ServiceAccountName = "sa"
	tmpl.Runners.Image = "img:1"
	tmpl.Runners.NodeSelector = map[string]v1alpha1.LabelValue{"pool": "bench"}
	tmpl.Target.Credentials = &v1alpha1.CredentialsSpec{SecretName: "key"}
	for _, tc := range []struct {
		name string
		edit func(*v1alpha1.BenchmarkRunSpec)
		want string
	}{
		{"nothing guarded", func(s *v1alpha1.BenchmarkRunSpec) { s.Runners.Region = "tokyo"; s.Target.Database = "db2" }, "[]"},
		{"another account", func(s *v1alpha1.BenchmarkRunSpec) { s.Runners.ServiceAccountName = "other" },
			"[runners.serviceAccountName=other: [{create pods } {impersonate serviceaccounts other}]]"},
		{"the account cleared: the run's own", func(s *v1alpha1.BenchmarkRunSpec) { s.Runners.ServiceAccountName = "" }, "[]"},
		{"another Secret", func(s *v1alpha1.BenchmarkRunSpec) {
			s.Target.Credentials = &v1alpha1.CredentialsSpec{SecretName: "other"}
		},
			"[target.credentials.secretName=other: [{get secrets other}]]"},
		{"another key of the same Secret", func(s *v1alpha1.BenchmarkRunSpec) {
			s.Target.Credentials = &v1alpha1.CredentialsSpec{SecretName: "key", Key: "k2"}
		}, "[target.credentials.secretName=key: [{get secrets key}]]"},
		{"credentials cleared", func(s *v1alpha1.BenchmarkRunSpec) { s.Target.Credentials = nil }, "[]"},
		{"another image", func(s *v1alpha1.BenchmarkRunSpec) { s.Runners.Image = "evil:1" }, "[runners.image=evil:1: [{create pods }]]"},
		{"node selector removed", func(s *v1alpha1.BenchmarkRunSpec) { s.Runners.NodeSelector = nil },
			"[runners.nodeSelector=null: [{create pods }]]"},
		{"a toleration added", func(s *v1alpha1.BenchmarkRunSpec) {
			s.Runners.Tolerations = []v1alpha1.Toleration{{Operator: "Exists"}}
		},
			`[runners.tolerations=[{"operator":"Exists"}]: [{create pods }]]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := *tmpl.DeepCopy()
			tc.edit(&run)
			var got []string
			for _, c := range Changes(&tmpl, &run) {
				got = append(got, fmt.Sprintf("%s=%s: %v", c.Field, c.Value, c.AnyOf))
			}
			if g := fmt.Sprint(got); g != tc.want {
				t.Errorf("Changes = %s, want %s", g, tc.want)
			}
		})
	}
}
