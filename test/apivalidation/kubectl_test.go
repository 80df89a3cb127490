package apivalidation

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	climanifest "github.com/spanbench/spanbench/cmd/spanbench/manifest"
)

// TestSpanbenchRunTreatsFilesAsKubectlStrictDoes feeds the same files to
// the envtest kubectl (create --dry-run=server, with its default
// --validate=strict), to the API server as a raw body with
// fieldValidation=Strict, and to `spanbench run`'s decoder. Unknown fields
// are refused by all three. Duplicate keys kubectl resolves itself before
// sending, silently keeping the last value (measured with kubectl v1.32);
// the API server's strict validation refuses a body that carries them, and
// so does spanbench run: a duplicate is ambiguous, and last-wins hides it.
// A file of two documents kubectl creates twice; spanbench run refuses it,
// as a run is one object.
func TestSpanbenchRunTreatsFilesAsKubectlStrictDoes(t *testing.T) {
	kubectl := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Fatalf("the envtest assets hold no kubectl (%v); run with KUBEBUILDER_ASSETS set", err)
	}
	kubeconfig := writeKubeconfig(t)
	good := string(mustRead(t, "testdata/minimal.yaml"))
	const dupJSON = `{"apiVersion":"bench.spanbench.io/v1alpha1","kind":"BenchmarkRun","metadata":{"name":"j"},"spec":{"target":{"project":"spanbench-test","instance":{"name":"bench"},"database":"ycsb"},"workload":{"type":"YCSB","operations":[{"type":"Read","weight":1}],"load":{"rate":100,"rate":200},"duration":"1m"}}}`
	for _, tc := range []struct {
		name, file string
		// The verdicts: kubectl create, the API server given the raw
		// body (JSON files only), spanbench run.
		kubectlRefuses, serverRefuses, cliRefuses bool
		cliWant                                   string
	}{
		{name: "good", file: good},
		{name: "duplicate key", file: strings.Replace(good, "      rate: 100", "      rate: 100\n      rate: 200", 1),
			cliRefuses: true, cliWant: `"rate" already set`},
		{name: "duplicate top-level key", file: good + "metadata:\n  name: other\n",
			cliRefuses: true, cliWant: `"metadata" already set`},
		{name: "duplicate key, JSON", file: dupJSON, serverRefuses: true, cliRefuses: true, cliWant: `"rate" already set`},
		{name: "unknown field", file: strings.Replace(good, "      rate: 100", "      rate: 100\n      burst: 2", 1),
			kubectlRefuses: true, cliRefuses: true, cliWant: `unknown field "spec.workload.load.burst"`},
		{name: "two documents", file: good + "---\n" + strings.Replace(good, "name: minimal", "name: second", 1),
			cliRefuses: true, cliWant: "2 documents in one file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runKubectl(t, kubectl, kubeconfig, tc.file, "create", "--dry-run=server", "-f", "-")
			if refused := err != nil; refused != tc.kubectlRefuses {
				t.Errorf("kubectl create refused=%v, want %v; it said: %s", refused, tc.kubectlRefuses, out)
			}
			if strings.HasPrefix(tc.file, "{") {
				out, err := runKubectl(t, kubectl, kubeconfig, tc.file, "create", "--raw",
					"/apis/bench.spanbench.io/v1alpha1/namespaces/default/benchmarkruns?dryRun=All&fieldValidation=Strict", "-f", "-")
				if refused := err != nil; refused != tc.serverRefuses {
					t.Errorf("the API server given the raw body refused=%v, want %v; it said: %s", refused, tc.serverRefuses, out)
				}
			}
			_, perr := climanifest.Parse([]byte(tc.file), "f")
			if refused := perr != nil; refused != tc.cliRefuses || (perr != nil && !strings.Contains(perr.Error(), tc.cliWant)) {
				t.Errorf("spanbench run's decoder = %v; want refused=%v with %q", perr, tc.cliRefuses, tc.cliWant)
			}
		})
	}
}

func runKubectl(t *testing.T, kubectl, kubeconfig, file string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", kubeconfig, "-n", "default"}, args...)...)
	cmd.Stdin = strings.NewReader(file)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// writeKubeconfig writes a kubeconfig for the envtest API server.
func writeKubeconfig(t *testing.T) string {
	t.Helper()
	c := clientcmdapi.NewConfig()
	c.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	c.AuthInfos["envtest"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	c.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "envtest"}
	c.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*c, path); err != nil {
		t.Fatalf("writing a kubeconfig: %v", err)
	}
	return path
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
