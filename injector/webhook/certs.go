package webhook

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"time"
)

// Certs is the TLS material for one webhook: the API server trusts CAPEM
// (the caBundle) and the webhook serves CertPEM/KeyPEM. The CA key is
// discarded after signing so nothing else can ever be issued under it.
type Certs struct {
	CAPEM, CertPEM, KeyPEM []byte
}

// clockSkew back-dates certificates so a node clock slightly behind the
// host does not reject them as not yet valid.
const clockSkew = time.Hour

// NewServingCerts creates a fresh self-signed CA and a serving certificate
// for the Service <service> in <namespace>, valid for every DNS name the API
// server may use to reach it.
func NewServingCerts(service, namespace string, validFor time.Duration) (Certs, error) {
	if service == "" || namespace == "" {
		return Certs{}, errors.New("webhook certs: service and namespace are required")
	}
	if validFor <= 0 {
		return Certs{}, fmt.Errorf("webhook certs: validity must be positive, got %s", validFor)
	}
	now := time.Now()
	notBefore, notAfter := now.Add(-clockSkew), now.Add(validFor)

	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Certs{}, fmt.Errorf("webhook certs: generate CA key: %w", err)
	}
	caTmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "lab webhook CA " + service + "." + namespace},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	// A nil SerialNumber makes crypto/x509 pick a random RFC 5280 serial.
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return Certs{}, fmt.Errorf("webhook certs: self-sign CA: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return Certs{}, fmt.Errorf("webhook certs: parse CA: %w", err)
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Certs{}, fmt.Errorf("webhook certs: generate serving key: %w", err)
	}
	svc := service + "." + namespace + ".svc"
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: svc},
		DNSNames:    []string{service, service + "." + namespace, svc, svc + ".cluster.local"},
		NotBefore:   notBefore,
		NotAfter:    notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return Certs{}, fmt.Errorf("webhook certs: sign serving cert: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Certs{}, fmt.Errorf("webhook certs: marshal serving key: %w", err)
	}
	return Certs{
		CAPEM:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}
