package pki

import (
	"crypto/x509"
	"encoding/pem"
	"slices"
	"testing"
	"time"
)

func testCA(t *testing.T) *CA {
	t.Helper()
	ca, err := NewCA("kubernetes", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return ca
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
