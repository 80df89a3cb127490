package cert

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/internal/await"
	"github.com/spanbench/spanbench/internal/testenv"
)

// The names config/webhook installs, which the manager's flags default to.
const (
	namespace   = "spanbench-system"
	secretName  = "spanbench-webhook-cert"
	webhookName = "spanbench-validating-webhook"
	// mutatingName is the MutatingWebhookConfiguration (the campaign
	// writer's stamp), which gets the CA too.
	mutatingName = "spanbench-mutating-webhook"
	// managerUser is the manager's service account, which the rotator
	// runs as here: it has only the RBAC of config/webhook/rbac.yaml.
	managerUser = "system:serviceaccount:spanbench-system:spanbench-manager"
)

var (
	cfg    *rest.Config
	admin  client.Client
	scheme = runtime.NewScheme()
)

func TestMain(m *testing.M) {
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fmt.Fprintf(os.Stderr, "webhookcert: %v\n", err)
		os.Exit(1)
	}
	os.Exit(testenv.Run(m, "webhookcert", nil, func(c *rest.Config) (err error) {
		cfg = c
		admin, err = client.New(c, client.Options{Scheme: scheme})
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), testenv.RequestTimeout)
		defer cancel()
		return admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
	}))
}

// install applies config/webhook afresh: the empty Secret, the webhook
// configuration without a caBundle, the Service and the RBAC.
func install(t *testing.T) {
	t.Helper()
	ctx := bounded(t)
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "config", "webhook", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in config/webhook: %v", err)
	}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			u := &unstructured.Unstructured{}
			if err := dec.Decode(&u.Object); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				t.Fatalf("%s: %v", f, err)
			}
			if len(u.Object) == 0 {
				continue
			}
			if err := admin.Delete(ctx, u.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
				t.Fatalf("deleting %s %s: %v", u.GetKind(), u.GetName(), err)
			}
			if err := admin.Create(ctx, u); err != nil {
				t.Fatalf("creating %s %s from %s: %v", u.GetKind(), u.GetName(), f, err)
			}
		}
	}
}

func bounded(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.RequestTimeout)
	t.Cleanup(cancel)
	return ctx
}

// asManager is a client with the manager service account's rights only.
func asManager(t *testing.T) client.Client {
	t.Helper()
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: managerUser, Groups: []string{"system:serviceaccounts", "system:authenticated"}}
	cl, err := client.New(c, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func newRotator(t *testing.T, clk *clocktesting.FakeClock) *Rotator {
	c := asManager(t)
	return &Rotator{Reader: c, Writer: c, Secret: types.NamespacedName{Namespace: namespace, Name: secretName},
		WebhookConfiguration: webhookName, MutatingWebhookConfiguration: mutatingName, DNSNames: names, Clock: clk}
}

func secretData(t *testing.T) (map[string][]byte, string) {
	t.Helper()
	s := &corev1.Secret{}
	if err := admin.Get(bounded(t), client.ObjectKey{Namespace: namespace, Name: secretName}, s); err != nil {
		t.Fatalf("reading the Secret: %v", err)
	}
	return s.Data, s.ResourceVersion
}

func caBundles(t *testing.T) ([][]byte, string) {
	t.Helper()
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := admin.Get(bounded(t), client.ObjectKey{Name: webhookName}, vwc); err != nil {
		t.Fatalf("reading the webhook configuration: %v", err)
	}
	var out [][]byte
	for _, w := range vwc.Webhooks {
		out = append(out, w.ClientConfig.CABundle)
	}
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := admin.Get(bounded(t), client.ObjectKey{Name: mutatingName}, mwc); err != nil {
		t.Fatalf("reading the mutating webhook configuration: %v", err)
	}
	for _, w := range mwc.Webhooks {
		out = append(out, w.ClientConfig.CABundle)
	}
	return out, vwc.ResourceVersion + "/" + mwc.ResourceVersion
}

// handshake serves TLS with r.GetCertificate on loopback and connects as
// the API server does: trusting only the caBundle, checking the Service's
// name. It returns the certificate the server presented.
func handshake(t *testing.T, r *Rotator, caBundle []byte) *x509.Certificate {
	return handshakeAt(t, r, caBundle, time.Now())
}

// handshakeAt is handshake with the client's clock at now.
func handshakeAt(t *testing.T, r *Rotator, caBundle []byte, now time.Time) *x509.Certificate {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{GetCertificate: r.GetCertificate, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			_ = c.(*tls.Conn).Handshake()
			_ = c.Close()
		}
	}()
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caBundle)
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", ln.Addr().String(),
		&tls.Config{RootCAs: roots, ServerName: names[0], MinVersion: tls.VersionTLS12, Time: func() time.Time { return now }})
	if err != nil {
		t.Fatalf("a client trusting the caBundle cannot connect to %s: %v", names[0], err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0]
}

// TestRotatorKeepsTheCertificateWithItsOwnRBACOnly: as the manager's
// service account, with only config/webhook's RBAC, the rotator fills the
// empty Secret, injects the CA into the configuration, serves a
// certificate that verifies under the caBundle, does nothing when nothing
// is due, renews the serving certificate near its end under the same CA,
// and restores a lost caBundle.
func TestRotatorKeepsTheCertificateWithItsOwnRBACOnly(t *testing.T) {
	install(t)
	clk := clocktesting.NewFakeClock(t0)
	r := newRotator(t, clk)
	if err := r.ReadyCheck(nil); err == nil {
		t.Fatal("ready before any check")
	}
	if err := r.Check(bounded(t)); err != nil {
		t.Fatalf("the first check failed as the manager's service account: %v", err)
	}
	if err := r.ReadyCheck(nil); err != nil {
		t.Errorf("not ready after a successful check: %v", err)
	}
	data, rv := secretData(t)
	for _, k := range []string{KeyCACert, KeyCAKey, KeyServerCert, KeyServerKey} {
		if len(data[k]) == 0 {
			t.Errorf("the Secret has no %s after the first check", k)
		}
	}
	bundles, vwcRV := caBundles(t)
	for i, b := range bundles {
		if !bytes.Equal(b, data[KeyCACert]) {
			t.Errorf("webhook %d's caBundle is not the Secret's ca.crt", i)
		}
	}
	first := handshake(t, r, data[KeyCACert])

	t.Run("nothing due: no write", func(t *testing.T) {
		clk.Step(24 * time.Hour)
		if err := r.Check(bounded(t)); err != nil {
			t.Fatal(err)
		}
		if _, got := secretData(t); got != rv {
			t.Errorf("the Secret was written although nothing was due")
		}
		if _, got := caBundles(t); got != vwcRV {
			t.Errorf("the webhook configuration was written although its caBundle was current")
		}
	})

	t.Run("serving certificate renewed under the same CA", func(t *testing.T) {
		clk.SetTime(t0.Add(servingValidity - servingRenewal + time.Hour))
		if err := r.Check(bounded(t)); err != nil {
			t.Fatal(err)
		}
		renewed, _ := secretData(t)
		if bytes.Equal(renewed[KeyServerCert], data[KeyServerCert]) {
			t.Fatal("the serving certificate was not renewed within its renewal margin")
		}
		if !bytes.Equal(renewed[KeyCACert], data[KeyCACert]) {
			t.Error("renewing the serving certificate changed the CA")
		}
		if got := handshakeAt(t, r, data[KeyCACert], clk.Now()); got.Equal(first) {
			t.Error("the server still presents the old certificate after the renewal")
		}
	})

	t.Run("a lost caBundle is restored", func(t *testing.T) {
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := admin.Get(bounded(t), client.ObjectKey{Name: webhookName}, vwc); err != nil {
			t.Fatal(err)
		}
		vwc.Webhooks[0].ClientConfig.CABundle = nil
		if err := admin.Update(bounded(t), vwc); err != nil {
			t.Fatal(err)
		}
		mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := admin.Get(bounded(t), client.ObjectKey{Name: mutatingName}, mwc); err != nil {
			t.Fatal(err)
		}
		mwc.Webhooks[0].ClientConfig.CABundle = nil
		if err := admin.Update(bounded(t), mwc); err != nil {
			t.Fatal(err)
		}
		if err := r.Check(bounded(t)); err != nil {
			t.Fatal(err)
		}
		b, _ := caBundles(t)
		for i := range b {
			if !bytes.Equal(b[i], data[KeyCACert]) {
				t.Errorf("webhook %d's caBundle was not restored", i)
			}
		}
	})

	t.Run("the service account may not list Secrets", func(t *testing.T) {
		err := asManager(t).List(bounded(t), &corev1.SecretList{}, client.InNamespace(namespace))
		if !apierrors.IsForbidden(err) {
			t.Errorf("listing Secrets as the manager: %v, want Forbidden (the webhook RBAC names its Secret)", err)
		}
	})
}

// TestRotatorReplicasAgree: two replicas checking an empty Secret at once
// end up serving the same certificate; the one that loses the write takes
// what the other wrote.
func TestRotatorReplicasAgree(t *testing.T) {
	install(t)
	clk := clocktesting.NewFakeClock(t0)
	a, b := newRotator(t, clk), newRotator(t, clk)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, r := range []*Rotator{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.Check(context.Background())
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("a replica's check failed: %v", err)
	}
	data, _ := secretData(t)
	ca, cb := handshake(t, a, data[KeyCACert]), handshake(t, b, data[KeyCACert])
	if !ca.Equal(cb) {
		t.Error("the two replicas serve different certificates")
	}
}

// TestRotatorStartBecomesReadyOrSaysWhyNot: Start makes the rotator ready
// on its own; with its Secret missing it stays unready and says which
// Secret.
func TestRotatorStartBecomesReadyOrSaysWhyNot(t *testing.T) {
	install(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	t.Cleanup(func() {
		cancel()
		for range 2 {
			if err := <-done; err != nil {
				t.Errorf("a rotator stopped with %v", err)
			}
		}
	})
	good := newRotator(t, clocktesting.NewFakeClock(t0))
	missing := newRotator(t, clocktesting.NewFakeClock(t0))
	missing.Secret.Name = "absent"
	go func() { done <- good.Start(ctx) }()
	go func() { done <- missing.Start(ctx) }()
	poll := await.Poll{Within: 30 * time.Second, Every: 100 * time.Millisecond}
	await.Eventually(t, poll, "the rotator to become ready", func() (bool, string) {
		err := good.ReadyCheck(nil)
		return err == nil, fmt.Sprint(err)
	})
	await.Eventually(t, poll, "the rotator without its Secret to say which", func() (bool, string) {
		err := missing.ReadyCheck(nil)
		return err != nil && strings.Contains(err.Error(), namespace+"/absent"), fmt.Sprint(err)
	})
}
