package cert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// Keys of the certificate Secret.
const (
	KeyCACert     = "ca.crt"
	KeyCAKey      = "ca.key"
	KeyServerCert = "tls.crt"
	KeyServerKey  = "tls.key"
)

// Lifetimes: the CA outlives many serving certificates, so that a serving
// certificate is renewed under the same CA and the API server's caBundle
// does not change. Each is renewed when less than its renewal margin is
// left, long before it expires.
const (
	caValidity      = 10 * 365 * 24 * time.Hour
	caRenewal       = 365 * 24 * time.Hour
	servingValidity = 365 * 24 * time.Hour
	servingRenewal  = 30 * 24 * time.Hour
	// backdate covers clock skew between the manager and the API server.
	backdate = time.Hour
)

// bundle is the content of the certificate Secret.
type bundle struct {
	// caPEM is the current CA first, then a replaced CA while it is still
	// valid, so that serving certificates it signed keep verifying.
	caPEM, caKeyPEM, certPEM, keyPEM []byte
}

func (b *bundle) data() map[string][]byte {
	return map[string][]byte{KeyCACert: b.caPEM, KeyCAKey: b.caKeyPEM, KeyServerCert: b.certPEM, KeyServerKey: b.keyPEM}
}

func bundleOf(data map[string][]byte) *bundle {
	return &bundle{caPEM: data[KeyCACert], caKeyPEM: data[KeyCAKey], certPEM: data[KeyServerCert], keyPEM: data[KeyServerKey]}
}

// renew returns the bundle to store for dnsNames at now: b itself when it
// holds a CA and a serving certificate good past their renewal margins,
// else one with a new serving certificate (and a new CA when the CA is
// missing, broken or near its end). changed says whether it differs.
func renew(b *bundle, dnsNames []string, now time.Time) (out *bundle, changed bool, err error) {
	ca, caKey, caErr := parseCA(b)
	if caErr != nil || now.Add(caRenewal).After(ca.NotAfter) {
		caPEM, caKeyPEM, err := newCA(now)
		if err != nil {
			return nil, false, err
		}
		if caErr == nil && now.Before(ca.NotAfter) {
			caPEM = append(caPEM, pemBlock("CERTIFICATE", ca.Raw)...)
		}
		b = &bundle{caPEM: caPEM, caKeyPEM: caKeyPEM}
		if ca, caKey, err = parseCA(b); err != nil {
			return nil, false, err
		}
	} else if servingValid(b, dnsNames, now) {
		return b, false, nil
	}
	certPEM, keyPEM, err := newServing(ca, caKey, dnsNames, now)
	if err != nil {
		return nil, false, err
	}
	return &bundle{caPEM: b.caPEM, caKeyPEM: b.caKeyPEM, certPEM: certPEM, keyPEM: keyPEM}, true, nil
}

// servingValid says whether b's serving certificate matches its key,
// verifies under b's CAs for every DNS name and is still so after the
// renewal margin.
func servingValid(b *bundle, dnsNames []string, now time.Time) bool {
	pair, err := tls.X509KeyPair(b.certPEM, b.keyPEM)
	if err != nil {
		return false
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(b.caPEM) {
		return false
	}
	for _, at := range []time.Time{now, now.Add(servingRenewal)} {
		for _, name := range dnsNames {
			opts := x509.VerifyOptions{Roots: roots, DNSName: name, CurrentTime: at, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
			if _, err := pair.Leaf.Verify(opts); err != nil {
				return false
			}
		}
	}
	return true
}

// parseCA reads the current CA (the first certificate of caPEM) and its key.
func parseCA(b *bundle) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	certBlock, _ := pem.Decode(b.caPEM)
	keyBlock, _ := pem.Decode(b.caKeyPEM)
	if certBlock == nil || keyBlock == nil {
		return nil, nil, errors.New("no CA certificate or key")
	}
	ca, err := x509.ParseCertificate(certBlock.Bytes)
	if err != nil {
		return nil, nil, err
	}
	key, err := x509.ParseECPrivateKey(keyBlock.Bytes)
	if err != nil {
		return nil, nil, err
	}
	if !ca.IsCA || !key.PublicKey.Equal(ca.PublicKey) {
		return nil, nil, errors.New("the CA certificate is no CA, or not the key's")
	}
	return ca, key, nil
}

func newCA(now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl, err := template(now, caValidity)
	if err != nil {
		return nil, nil, err
	}
	tmpl.Subject = pkix.Name{CommonName: fmt.Sprintf("spanbench-webhook-ca@%d", now.Unix())}
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	return encode(der, key)
}

func newServing(ca *x509.Certificate, caKey *ecdsa.PrivateKey, dnsNames []string, now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl, err := template(now, servingValidity)
	if err != nil {
		return nil, nil, err
	}
	tmpl.Subject = pkix.Name{CommonName: dnsNames[0]}
	tmpl.DNSNames = dnsNames
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	return encode(der, key)
}

func template(now time.Time, validity time.Duration) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, err
	}
	return &x509.Certificate{SerialNumber: serial, NotBefore: now.Add(-backdate), NotAfter: now.Add(validity)}, nil
}

func encode(der []byte, key *ecdsa.PrivateKey) (certPEM, keyPEM []byte, err error) {
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pemBlock("CERTIFICATE", der), pemBlock("EC PRIVATE KEY", keyDER), nil
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}
