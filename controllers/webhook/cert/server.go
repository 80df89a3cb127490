package cert

import (
	"crypto/tls"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// Options say where a manager's webhook server listens and where its
// certificate comes from.
type Options struct {
	// Port the server listens on.
	Port int
	// CertDir, when set, serves tls.crt and tls.key from this directory,
	// kept by something else (cert-manager); nothing is rotated.
	CertDir string
	// Secret, Service and Configuration are what a Rotator keeps: the
	// certificate Secret, the Service the certificate names, and the
	// ValidatingWebhookConfiguration that gets the CA.
	Secret, Service types.NamespacedName
	Configuration   string
	// MutatingConfiguration is the MutatingWebhookConfiguration that gets
	// the CA too; empty: none.
	MutatingConfiguration string
}

// DNSNames are the names the API server may call the Service by.
func (o *Options) DNSNames() []string {
	svc := o.Service.Name + "." + o.Service.Namespace + ".svc"
	return []string{svc, svc + ".cluster.local"}
}

// AddServer adds to mgr a webhook server whose handlers register adds,
// its certificate kept by a Rotator unless o.CertDir names one, and
// readiness checks: the manager is ready once the server answers TLS with
// a certificate the API server trusts (the CA injected).
func AddServer(mgr manager.Manager, o Options, register func(webhook.Server)) error {
	opts := webhook.Options{Port: o.Port, CertDir: o.CertDir}
	if o.CertDir == "" {
		rot := &Rotator{Reader: mgr.GetAPIReader(), Writer: mgr.GetClient(), Secret: o.Secret,
			WebhookConfiguration: o.Configuration, MutatingWebhookConfiguration: o.MutatingConfiguration, DNSNames: o.DNSNames(), Clock: clock.RealClock{}}
		if err := mgr.Add(rot); err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("webhook-certificate", rot.ReadyCheck); err != nil {
			return err
		}
		opts.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.GetCertificate = rot.GetCertificate }}
	}
	srv := webhook.NewServer(opts)
	register(srv)
	if err := mgr.Add(srv); err != nil {
		return err
	}
	return mgr.AddReadyzCheck("webhook-server", srv.StartedChecker())
}
