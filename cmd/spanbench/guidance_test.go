package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorsSayWhatToDo holds every error a newcomer can meet following
// the README's commands with the samples, as the CLI prints it: each must
// name its cause and the next step. The endpoints that do not answer are
// on loopback: a port nothing listens on, and an HTTP/2 server that
// answers 404 (what a sample's address answered on the network).
func TestErrorsSayWhatToDo(t *testing.T) {
	notEmulator, closed := http404Server(t), closedPort(t)
	dir := t.TempDir()
	runAt := func(host string) string { return sampleAt(t, dir, "ycsb-read-vs-sql.yaml", host) }
	campaignAt := func(host string) string { return sampleAt(t, dir, "campaign-read-vs-sql.yaml", host) }
	demoSample := filepath.Join("..", "..", "config", "samples", "ycsb-read-vs-sql.yaml")
	demoCampaign := filepath.Join("..", "..", "config", "samples", "campaign-read-vs-sql.yaml")
	noFile := filepath.Join(dir, "nope.yaml")
	down := kubeconfigAt(t, dir, closed)
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		// want are what the message must say: the cause, where it came
		// from, and what to run instead.
		want []string
	}{
		{"run: the manifest's emulator answers HTTP 404", nil,
			[]string{"run", "-f", runAt(notEmulator)},
			[]string{"emulator at " + notEmulator + " does not answer as an emulator does", "That address is target.emulatorHost of",
				"The samples name the emulator of `make demo`'s cluster", "--fresh-emulator", "`make demo`"}},
		{"run: nothing listens at the manifest's emulator", nil,
			[]string{"run", "-f", runAt(closed)},
			[]string{"emulator at " + closed + " does not answer within", "That address is target.emulatorHost of",
				"--fresh-emulator", "`make demo`"}},
		{"run: --endpoint answers HTTP 404", nil,
			[]string{"run", "-f", demoSample, "--endpoint", notEmulator},
			[]string{"does not answer as an emulator does", "That address is --endpoint's", "hack/emulator.sh",
				"drop --endpoint and run `spanbench run -f " + demoSample + " --fresh-emulator`"}},
		{"run: $SPANNER_EMULATOR_HOST answers HTTP 404", map[string]string{"SPANNER_EMULATOR_HOST": notEmulator},
			[]string{"run", "-f", demoSample},
			[]string{"does not answer as an emulator does", "That address is $SPANNER_EMULATOR_HOST", "Unset it", "--fresh-emulator"}},
		{"campaign: the template's emulator answers HTTP 404", nil,
			[]string{"campaign", "-f", campaignAt(notEmulator), "--progress", "never"},
			[]string{"does not answer as an emulator does", "That address is target.emulatorHost of",
				"`spanbench campaign -f " + campaignAt(notEmulator) + " --fresh-emulator`", "`make demo`"}},
		{"run --fresh-emulator: no emulator installed", nil,
			[]string{"run", "-f", demoSample, "--fresh-emulator", "--emulator-path", filepath.Join(dir, "gateway_main")},
			[]string{"emulator not found", "apt-get install google-cloud-cli-spanner-emulator"}},
		{"run --spanner: no credentials", map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": filepath.Join(dir, "key.json")},
			[]string{"run", "-f", demoSample, "--spanner"},
			[]string{"cannot open clients for Cloud Spanner", "gcloud auth application-default login", "GOOGLE_APPLICATION_CREDENTIALS",
				"--fresh-emulator"}},
		{"run -f a campaign", nil,
			[]string{"run", "-f", demoCampaign},
			[]string{`"BenchmarkCampaign" is not a bench.spanbench.io/v1alpha1 BenchmarkRun`, "`spanbench campaign -f " + demoCampaign + "` runs it"}},
		{"campaign -f a run", nil,
			[]string{"campaign", "-f", demoSample},
			[]string{`"BenchmarkRun" is not a bench.spanbench.io/v1alpha1 BenchmarkCampaign`, "`spanbench run -f " + demoSample + "` runs it"}},
		{"run -f a file that is not there", nil,
			[]string{"run", "-f", noFile},
			[]string{"no such file", "there is no manifest at " + noFile, "config/samples/*.yaml"}},
		{"campaign -f a file that is not there", nil,
			[]string{"campaign", "-f", noFile},
			[]string{"no such file", "there is no manifest at", "config/samples/*.yaml"}},
		{"report of a file that is not there", nil,
			[]string{"report", noFile},
			[]string{"no such file", "there is no result document at", "spanbench run --out FILE"}},
		{"compare of a file that is not there", nil,
			[]string{"compare", noFile, noFile},
			[]string{"no such file", "there is no result document at", "spanbench run --out FILE"}},
		{"report --run without a kubeconfig", map[string]string{"KUBECONFIG": "", "HOME": dir},
			[]string{"report", "--run", "ycsb-read-vs-sql"},
			[]string{"no configuration has been provided", "reading BenchmarkRun default/ycsb-read-vs-sql needs a kubeconfig",
				"--kubeconfig bin/cluster/kubeconfig"}},
		{"report --run with the cluster down", nil,
			[]string{"report", "--run", "ycsb-read-vs-sql", "--kubeconfig", down},
			[]string{"connection refused", "API server (" + closed + ") does not answer: is the cluster up?", "`make demo`"}},
		{"report --campaign with the cluster down", nil,
			[]string{"report", "--campaign", "read-vs-sql", "--kubeconfig", down},
			[]string{"connection refused", "does not answer: is the cluster up?", "`make demo`"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"SPANNER_EMULATOR_HOST", "KUBERNETES_SERVICE_HOST"} {
				t.Setenv(k, "")
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			code, _, stderr := runCLI(t, tc.args...)
			if code != 1 {
				t.Errorf("spanbench %s exited %d, want 1", strings.Join(tc.args, " "), code)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("spanbench %s: the message lacks %q:\n%s", strings.Join(tc.args, " "), w, stderr)
				}
			}
		})
	}
}

// http404Server is a loopback HTTP/2 (cleartext) server that answers
// every request 404, as a proxy or web server at an emulator's address
// would: gRPC's client turns that into Unimplemented.
func http404Server(t *testing.T) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// sampleAt is config/samples/name with its emulatorHost set to host,
// written into dir under a name of host's.
func sampleAt(t *testing.T, dir, name, host string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "samples", name))
	if err != nil {
		t.Fatal(err)
	}
	out := strings.ReplaceAll(string(raw), "emulatorHost: "+demoEmulatorHost, "emulatorHost: "+host)
	if out == string(raw) {
		t.Fatalf("%s names no emulatorHost %s", name, demoEmulatorHost)
	}
	path := filepath.Join(dir, strings.ReplaceAll(host, ":", "-")+"-"+name)
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// kubeconfigAt is a kubeconfig whose cluster is at host (https).
func kubeconfigAt(t *testing.T, dir, host string) string {
	t.Helper()
	path := filepath.Join(dir, "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
clusters: [{name: down, cluster: {server: "https://` + host + `", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: down, user: u}}]
current-context: c
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
