package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"slices"
	"testing"
	"time"
)

func testCA(t *testing.T) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		Subject: pkix.Name{CommonName: "kubernetes"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{Cert: ca, Key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

func TestClientCert(t *testing.T) {
	ca := testCA(t)
	now := time.Now()
	for _, expired := range []bool{false, true} {
		notBefore, notAfter := now.Add(-time.Hour), now.Add(time.Hour)
		if expired {
			notBefore, notAfter = now.Add(-48*time.Hour), now.Add(-24*time.Hour)
		}
		certPEM, keyPEM, err := ClientCert(ca, "dev-anna", []string{"team-web", "ops"}, notBefore, notAfter)
		if err != nil {
			t.Fatal(err)
		}
		block, _ := pem.Decode(certPEM)
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		if cert.Subject.CommonName != "dev-anna" || !slices.Equal(slices.Sorted(slices.Values(cert.Subject.Organization)), []string{"ops", "team-web"}) {
			t.Errorf("subject %v, want CN=dev-anna O=team-web,ops", cert.Subject)
		}
		roots := x509.NewCertPool()
		roots.AddCert(ca.Cert)
		_, verr := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		if expired != (verr != nil) {
			t.Errorf("expired=%v: verify error %v", expired, verr)
		}
		if p, _ := pem.Decode(keyPEM); p == nil || p.Type != "EC PRIVATE KEY" {
			t.Errorf("key PEM %q", keyPEM)
		}
	}
}
