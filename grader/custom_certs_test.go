package grader

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"

	"github.com/cka-lab/lab/internal/kube"
)

func TestJudgeCertificateByValidityAndIssuer(t *testing.T) {
	ca, caKey := testCA(t)
	other, otherKey := testCA(t)
	env := Env{Clients: &kube.Clients{Config: &rest.Config{TLSClientConfig: rest.TLSClientConfig{CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})}}}}
	soon := testLeaf(t, ca, caKey, 3*24*time.Hour)
	renewed := testLeaf(t, ca, caKey, 365*24*time.Hour)
	foreign := testLeaf(t, other, otherKey, 365*24*time.Hour)
	cases := []struct {
		name string
		c    *x509.Certificate
		args map[string]string
		ok   bool
		says string
	}{
		{"expiring, as the symptom wants", soon, map[string]string{"maxDays": "3"}, true, "(3 days from now)"},
		{"expiring, not renewed", soon, map[string]string{"minDays": "300"}, false, "less than 300 days"},
		{"renewed", renewed, map[string]string{"minDays": "300"}, true, "(365 days from now)"},
		{"renewed, no symptom", renewed, map[string]string{"maxDays": "3"}, false, "more than 3 days"},
		{"issued by another CA", foreign, map[string]string{"minDays": "300"}, false, "the cluster CA does not vouch"},
	}
	for _, c := range cases {
		r := env.judgeCertificate("the API server serves a certificate", c.c, c.args)
		if r.OK != c.ok || !strings.Contains(r.Evidence, c.says) {
			t.Errorf("%s: got ok=%v %q, want ok=%v and %q", c.name, r.OK, r.Evidence, c.ok, c.says)
		}
	}
}

// testCA is a cluster CA as kubeadm makes one: self-signed, valid for ten years.
func testCA(t *testing.T) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	c, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: "kubernetes"}, key)
	if err != nil {
		t.Fatal(err)
	}
	return c, key
}

func testLeaf(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, valid time.Duration) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(valid),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
