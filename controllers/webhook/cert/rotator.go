// Package cert keeps the TLS certificate of the manager's admission
// webhook without cert-manager: a self-signed CA and a serving certificate
// live in one Secret the install creates empty, the CA goes into the
// caBundle of the ValidatingWebhookConfiguration (and of the
// MutatingWebhookConfiguration), and the webhook server reads the serving
// certificate from memory. It touches exactly those objects, by name (get
// and update), so its RBAC names them.
package cert

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// DefaultCheckInterval is how often the rotator looks at the Secret and
// the webhook configuration: two GETs, so that a renewal by another
// replica is picked up and a caBundle lost to a reinstall of the
// configuration is restored within a minute.
const DefaultCheckInterval = time.Minute

// retryInterval is the wait after a failed check.
const retryInterval = 2 * time.Second

// Rotator is a manager runnable that keeps the webhook's certificate.
// Every replica runs it (it needs no leader): each serves the webhook.
// Replicas agree through the Secret: one that loses a write conflict
// takes what the other wrote.
type Rotator struct {
	// Reader reads the Secret and the configuration uncached (the
	// manager's API reader), so that no list or watch is needed.
	Reader client.Reader
	// Writer updates them.
	Writer client.Writer
	// Secret holds the certificates; it must exist (the install creates
	// it empty).
	Secret types.NamespacedName
	// WebhookConfiguration is the ValidatingWebhookConfiguration whose
	// webhooks get the CA as their caBundle.
	WebhookConfiguration string
	// MutatingWebhookConfiguration, when set, is the
	// MutatingWebhookConfiguration whose webhooks get the CA too.
	MutatingWebhookConfiguration string
	// DNSNames are the serving certificate's names: the webhook Service's
	// <name>.<namespace>.svc first.
	DNSNames []string
	// Clock tells the time certificates are checked and issued at.
	Clock clock.WithTicker
	// CheckInterval is DefaultCheckInterval when zero.
	CheckInterval time.Duration

	cert atomic.Pointer[tls.Certificate]
	// ready is set by the first check that succeeds: the serving
	// certificate loaded and the CA injected. A later failure does not
	// clear it: the loaded certificate still serves.
	ready atomic.Bool
	mu    sync.Mutex
	// lastErr is the last check's failure, for ReadyCheck.
	lastErr error
}

// NeedLeaderElection is false: every replica serves the webhook.
func (r *Rotator) NeedLeaderElection() bool { return false }

// Start checks at once, then every CheckInterval (every retryInterval
// after a failure), until ctx ends. A failure is logged and shown by
// ReadyCheck; it does not stop the manager.
func (r *Rotator) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("webhookcert")
	r.setLastErr(errors.New("the first certificate check has not finished"))
	interval := r.CheckInterval
	if interval <= 0 {
		interval = DefaultCheckInterval
	}
	for {
		wait := interval
		if err := r.Check(ctx); err != nil {
			logger.Error(err, "keeping the webhook certificate", "secret", r.Secret, "webhookConfiguration", r.WebhookConfiguration)
			wait = retryInterval
		}
		t := r.Clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C():
		}
	}
}

// Check renews the certificates in the Secret if they are missing or near
// their end, loads the serving certificate and injects the CA into the
// webhook configuration.
func (r *Rotator) Check(ctx context.Context) error {
	// A conflict means another replica wrote first: build on what it
	// wrote.
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error { return r.check(ctx) })
	r.setLastErr(err)
	if err == nil {
		r.ready.Store(true)
	}
	return err
}

func (r *Rotator) check(ctx context.Context) error {
	b, err := r.syncSecret(ctx)
	if err != nil {
		return err
	}
	if err := r.load(b); err != nil {
		return err
	}
	return r.inject(ctx, b.caPEM)
}

// syncSecret reads the Secret and writes renewed certificates back when
// they need it.
func (r *Rotator) syncSecret(ctx context.Context) (*bundle, error) {
	s := &corev1.Secret{}
	if err := r.Reader.Get(ctx, r.Secret, s); err != nil {
		return nil, fmt.Errorf("reading the webhook certificate Secret %s (the install creates it): %w", r.Secret, err)
	}
	b, changed, err := renew(bundleOf(s.Data), r.DNSNames, r.Clock.Now())
	if err != nil || !changed {
		return b, err
	}
	s.Data = b.data()
	if err := r.Writer.Update(ctx, s); err != nil {
		return nil, fmt.Errorf("writing renewed certificates to Secret %s: %w", r.Secret, err)
	}
	return b, nil
}

func (r *Rotator) load(b *bundle) error {
	pair, err := tls.X509KeyPair(b.certPEM, b.keyPEM)
	if err != nil {
		return fmt.Errorf("loading the serving certificate of Secret %s: %w", r.Secret, err)
	}
	r.cert.Store(&pair)
	return nil
}

// inject sets caPEM as the caBundle of every webhook of the
// configurations.
func (r *Rotator) inject(ctx context.Context, caPEM []byte) error {
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	err := r.injectInto(ctx, "ValidatingWebhookConfiguration", r.WebhookConfiguration, vwc, caPEM, func() (out []*admissionregistrationv1.WebhookClientConfig) {
		for i := range vwc.Webhooks {
			out = append(out, &vwc.Webhooks[i].ClientConfig)
		}
		return out
	})
	if err != nil || r.MutatingWebhookConfiguration == "" {
		return err
	}
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	return r.injectInto(ctx, "MutatingWebhookConfiguration", r.MutatingWebhookConfiguration, mwc, caPEM, func() (out []*admissionregistrationv1.WebhookClientConfig) {
		for i := range mwc.Webhooks {
			out = append(out, &mwc.Webhooks[i].ClientConfig)
		}
		return out
	})
}

// injectInto reads the configuration kind name into obj and sets caPEM
// as the caBundle of each of its webhooks' client configs, writing it
// back only if one changed.
func (r *Rotator) injectInto(ctx context.Context, kind, name string, obj client.Object, caPEM []byte,
	configs func() []*admissionregistrationv1.WebhookClientConfig) error {
	if err := r.Reader.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
		return fmt.Errorf("reading %s %s: %w", kind, name, err)
	}
	changed := false
	for _, cc := range configs() {
		if !bytes.Equal(cc.CABundle, caPEM) {
			cc.CABundle, changed = caPEM, true
		}
	}
	if !changed {
		return nil
	}
	if err := r.Writer.Update(ctx, obj); err != nil {
		return fmt.Errorf("injecting the CA into %s %s: %w", kind, name, err)
	}
	return nil
}

// GetCertificate serves the current serving certificate (the webhook
// server's tls.Config.GetCertificate); it fails the handshake until the
// first one is loaded.
func (r *Rotator) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := r.cert.Load(); c != nil {
		return c, nil
	}
	return nil, errors.New("the webhook serving certificate is not loaded yet")
}

// ReadyCheck is a readiness check (healthz.Checker): ready once the
// serving certificate is loaded and the CA injected, so that the webhook
// Service sends the API server only to replicas that can answer.
func (r *Rotator) ReadyCheck(*http.Request) error {
	if r.ready.Load() {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lastErr == nil {
		return errors.New("the webhook certificate has not been checked yet")
	}
	return r.lastErr
}

func (r *Rotator) setLastErr(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastErr = err
}
