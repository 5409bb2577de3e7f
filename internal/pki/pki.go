// Package pki issues client certificates under a kind cluster's own CA, which kubeadm keeps on every
// control-plane node: the identities a scenario hands a learner and the exam's hosts.
package pki

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"

	"k8s.io/client-go/util/keyutil"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/cka-lab/lab/internal/node"
)

// Where kubeadm keeps the cluster CA on a control-plane node.
const (
	CACertPath = "/etc/kubernetes/pki/ca.crt"
	CAKeyPath  = "/etc/kubernetes/pki/ca.key"
)

// CA is a certificate authority that can sign: its certificate (parsed and as PEM) and its key.
type CA struct {
	Cert *x509.Certificate
	PEM  []byte
	Key  crypto.Signer
}

// NewCA makes a self-signed CA called commonName, valid for the hour before now and validity after: the CA of
// another cluster (kubeadm's call themselves "kubernetes" too), or a test's.
func NewCA(commonName string, validity time.Duration) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: commonName},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("self-sign a CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// ClusterCA reads the cluster CA from control-plane node n.
func ClusterCA(ctx context.Context, n nodes.Node) (*CA, error) {
	certPEM, err := node.Run(ctx, n, "cat", CACertPath)
	if err != nil {
		return nil, fmt.Errorf("read the cluster CA: %w", err)
	}
	keyPEM, err := node.Run(ctx, n, "cat", CAKeyPath)
	if err != nil {
		return nil, fmt.Errorf("read the cluster CA key: %w", err)
	}
	block, _ := pem.Decode([]byte(certPEM))
	if block == nil {
		return nil, fmt.Errorf("%s on %s holds no PEM certificate", CACertPath, n)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", CACertPath, err)
	}
	key, err := keyutil.ParsePrivateKeyPEM([]byte(keyPEM))
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", CAKeyPath, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s is a %T, not a signing key", CAKeyPath, key)
	}
	return &CA{Cert: cert, PEM: []byte(certPEM), Key: signer}, nil
}

// ClientCert issues a client certificate for user in groups (the API server reads the CN as the user and each
// organisation as a group), valid from notBefore to notAfter, with a new key.
func ClientCert(ca *CA, user string, groups []string, notBefore, notAfter time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: user, Organization: groups},
		NotBefore:    notBefore, NotAfter: notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("issue a certificate for %s: %w", user, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}
