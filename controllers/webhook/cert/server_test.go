package cert

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/spanbench/spanbench/internal/await"
)

// freePort is a loopback port nothing listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestAddServerMakesTheManagerReadyToAnswerTheAPIServer: a manager running
// as its service account, given the install's empty Secret and
// configuration, becomes ready, and then answers an AdmissionReview over
// TLS that a client trusting only the injected caBundle accepts for the
// Service's name — what the API server does.
func TestAddServerMakesTheManagerReadyToAnswerTheAPIServer(t *testing.T) {
	install(t)
	asSA := rest.CopyConfig(cfg)
	asSA.Impersonate = rest.ImpersonationConfig{UserName: managerUser, Groups: []string{"system:serviceaccounts", "system:authenticated"}}
	probePort, webhookPort := freePort(t), freePort(t)
	mgr, err := manager.New(asSA, manager.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "127.0.0.1:" + strconv.Itoa(probePort)})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Port: webhookPort, Secret: types.NamespacedName{Namespace: namespace, Name: secretName},
		Service: types.NamespacedName{Namespace: namespace, Name: "spanbench-webhook"}, Configuration: webhookName}
	deny := &webhook.Admission{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		return admission.Denied("the test handler says no")
	})}
	if err := AddServer(mgr, opts, func(srv webhook.Server) { srv.Register("/deny", deny) }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the manager stopped with %v", err)
		}
	})

	poll := await.Poll{Within: 30 * time.Second, Every: 100 * time.Millisecond}
	await.Eventually(t, poll, "the manager to be ready", func() (bool, string) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz?verbose", probePort))
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp.StatusCode == http.StatusOK, b.String()
	})

	bundles, _ := caBundles(t)
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(bundles[0]) {
		t.Fatal("the manager is ready but the configuration has no caBundle")
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: opts.DNSNames()[0], MinVersion: tls.VersionTLS12}}}
	review := admissionv1.AdmissionReview{Request: &admissionv1.AdmissionRequest{UID: "1", Operation: admissionv1.Create}}
	review.SetGroupVersionKind(admissionv1.SchemeGroupVersion.WithKind("AdmissionReview"))
	body, err := json.Marshal(review)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Post(fmt.Sprintf("https://127.0.0.1:%d/deny", webhookPort), "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("calling the webhook as the API server would: %v", err)
	}
	defer resp.Body.Close()
	var got admissionv1.AdmissionReview
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatalf("the webhook's answer is no AdmissionReview: %v", err)
	}
	if got.Response == nil || got.Response.Allowed || got.Response.Result.Message != "the test handler says no" {
		t.Errorf("the webhook answered %+v, want the test handler's denial", got.Response)
	}
}
