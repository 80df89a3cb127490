//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCampaignWebhookRefusesInvalidCells: on the installed operator, the
// API server reaches the manager's webhook through its Service with the
// certificate the manager issued and injected, and `kubectl create` and
// `kubectl apply` of a campaign whose matrix makes an invalid run are
// refused naming the axis value, while the sample itself is admitted.
// The campaigns are suspended: nothing runs.
func TestCampaignWebhookRefusesInvalidCells(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "hook")
	raw, err := os.ReadFile(filepath.Join(suite.root, samplesDir, "campaign-read-vs-sql.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	good := strings.Replace(string(raw), "\nspec:\n", "\nspec:\n  suspend: true\n", 1)
	bad := strings.Replace(good, "[name=keys].api", "[name=kyes].api", 1)
	if good == string(raw) || bad == good {
		t.Fatal("the sample no longer has the shape this test edits (spec:, [name=keys].api)")
	}
	wantRefusal := func(t *testing.T, verb, out string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("kubectl %s of a campaign with an invalid cell succeeded: %s", verb, out)
		}
		// kubectl prints an Invalid status as "The BenchmarkCampaign ... is
		// invalid: <field>: <message>", without the webhook's name.
		for _, s := range []string{`The BenchmarkCampaign "read-vs-sql" is invalid: spec.matrix.axes[2].values[0]: Invalid value: "read"`, `matrix axis "keys-api" value "read"`, `no list element workload.operations.[name=kyes]`} {
			if !strings.Contains(out, s) {
				t.Errorf("kubectl %s's refusal does not say %q:\n%s", verb, s, out)
			}
		}
	}

	out, err := kubectlStdin(t, []byte(bad), "create", "-n", ns, "-f", "-")
	wantRefusal(t, "create", out, err)

	if out, err := kubectlStdin(t, []byte(good), "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("the sample campaign was refused: %v\n%s", err, out)
	}
	out, err = kubectlStdin(t, []byte(bad), "apply", "-n", ns, "-f", "-")
	wantRefusal(t, "apply (update)", out, err)
	if got := kubectl(t, "-n", ns, "get", "benchmarkcampaign", "read-vs-sql", "-o", "jsonpath={.spec.matrix.axes[2].path}"); got != "workload.operations.[name=keys].api" {
		t.Errorf("the stored campaign's axis path is %q after a refused update, want it unchanged", got)
	}
}
