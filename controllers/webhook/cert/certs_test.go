package cert

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"testing"
	"time"
)

var (
	names = []string{"spanbench-webhook.spanbench-system.svc", "spanbench-webhook.spanbench-system.svc.cluster.local"}
	t0    = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
)

// verifies fails t unless b's serving certificate verifies under b's CAs
// for every name at at.
func verifies(t *testing.T, b *bundle, at time.Time) {
	t.Helper()
	pair, err := tls.X509KeyPair(b.certPEM, b.keyPEM)
	if err != nil {
		t.Fatalf("the serving certificate and key do not load: %v", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(b.caPEM) {
		t.Fatalf("ca.crt holds no certificate")
	}
	for _, n := range names {
		if _, err := pair.Leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: n, CurrentTime: at}); err != nil {
			t.Fatalf("the serving certificate does not verify for %s at %s: %v", n, at, err)
		}
	}
}

func mustRenew(t *testing.T, b *bundle, dnsNames []string, at time.Time) (*bundle, bool) {
	t.Helper()
	out, changed, err := renew(b, dnsNames, at)
	if err != nil {
		t.Fatalf("renew: %v", err)
	}
	return out, changed
}

func TestRenewIssuesACAAndAServingCertificateIntoAnEmptySecret(t *testing.T) {
	b, changed := mustRenew(t, bundleOf(nil), names, t0)
	if !changed {
		t.Fatal("an empty Secret was left empty")
	}
	verifies(t, b, t0)
	// Reloaded from the Secret's data, the same bundle needs nothing.
	if _, changed := mustRenew(t, bundleOf(b.data()), names, t0.Add(24*time.Hour)); changed {
		t.Error("a day-old bundle was renewed; want it kept")
	}
}

func TestRenewReplacesTheServingCertificateNearItsEndUnderTheSameCA(t *testing.T) {
	b, _ := mustRenew(t, bundleOf(nil), names, t0)
	late := t0.Add(servingValidity - servingRenewal + time.Hour)
	r, changed := mustRenew(t, b, names, late)
	if !changed || bytes.Equal(r.certPEM, b.certPEM) {
		t.Fatal("a serving certificate within its renewal margin was kept")
	}
	if !bytes.Equal(r.caPEM, b.caPEM) || !bytes.Equal(r.caKeyPEM, b.caKeyPEM) {
		t.Error("renewing the serving certificate replaced the CA; the caBundle would change")
	}
	verifies(t, r, late)
}

func TestRenewReplacesTheCAKeepingTheOldOneInTheBundle(t *testing.T) {
	b, _ := mustRenew(t, bundleOf(nil), names, t0)
	late := t0.Add(caValidity - caRenewal + time.Hour)
	r, changed := mustRenew(t, b, names, late)
	if !changed || bytes.Equal(r.caKeyPEM, b.caKeyPEM) {
		t.Fatal("a CA within its renewal margin was kept")
	}
	if !bytes.HasSuffix(r.caPEM, b.caPEM) {
		t.Error("the replaced CA is not in the new bundle; certificates it signed would stop verifying")
	}
	verifies(t, r, late)
	// A serving certificate the old CA signed shortly before still
	// verifies under the new bundle, so a replica that has not reloaded
	// the Secret yet keeps serving.
	ca, caKey, err := parseCA(b)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := newServing(ca, caKey, names, late.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	verifies(t, &bundle{caPEM: r.caPEM, certPEM: certPEM, keyPEM: keyPEM}, late)
}

func TestRenewReissuesForNewNamesAndBrokenData(t *testing.T) {
	b, _ := mustRenew(t, bundleOf(nil), names, t0)
	other := []string{"spanbench-webhook.other.svc"}
	if r, changed := mustRenew(t, b, other, t0); !changed || bytes.Equal(r.certPEM, b.certPEM) {
		t.Error("a certificate for another Service's name was kept")
	}
	broken := bundleOf(b.data())
	broken.keyPEM = broken.caKeyPEM // a key that is not the certificate's
	if r, changed := mustRenew(t, broken, names, t0); !changed {
		t.Error("a serving certificate with the wrong key was kept")
	} else {
		verifies(t, r, t0)
	}
	garbage := &bundle{caPEM: []byte("not PEM"), caKeyPEM: []byte("x"), certPEM: []byte("y"), keyPEM: []byte("z")}
	r, _ := mustRenew(t, garbage, names, t0)
	verifies(t, r, t0)
}
