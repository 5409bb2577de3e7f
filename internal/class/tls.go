package class

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	certutil "k8s.io/client-go/util/cert"

	"github.com/cka-lab/lab/internal/state"
)

// Files of the certificate the server makes for itself, kept with the class so a resumed class keeps its
// fingerprint and the learners' pinned memberships keep working.
const (
	certFile = "tls.crt"
	keyFile  = "tls.key"
)

// certRenewal is how long before expiry a made certificate is replaced; learners then join again with the
// new fingerprint the server prints.
const certRenewal = 24 * time.Hour

// serverCertificate loads the certificate the instructor gave, or the one this class made for itself, making
// it on first use: self-signed (client-go's cert util), for this machine's addresses and name.
func serverCertificate(ctx context.Context, dataDir, certPath, keyPath string) (tls.Certificate, error) {
	if certPath != "" || keyPath != "" {
		if certPath == "" || keyPath == "" {
			return tls.Certificate{}, errors.New("a class server certificate needs both its certificate and its key file")
		}
		c, err := tls.LoadX509KeyPair(certPath, keyPath)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("load the class server certificate %s with key %s: %w", certPath, keyPath, err)
		}
		return c, nil
	}
	certPath, keyPath = filepath.Join(dataDir, certFile), filepath.Join(dataDir, keyFile)
	if c, err := tls.LoadX509KeyPair(certPath, keyPath); err == nil && time.Until(c.Leaf.NotAfter) > certRenewal {
		return c, nil
	}
	host, _ := os.Hostname()
	ips := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	dns := []string{"localhost"}
	if host != "" {
		dns = append(dns, host)
	}
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKeyWithOptions(certutil.SelfSignedCertKeyOptions{
		Host: lanIP(ctx).String(), AlternateIPs: ips, AlternateDNS: dns})
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("make the class server's certificate: %w", err)
	}
	if err := state.WriteFile(keyPath, keyPEM); err != nil {
		return tls.Certificate{}, fmt.Errorf("save the class server's key: %w", err)
	}
	if err := state.WriteFile(certPath, certPEM); err != nil {
		return tls.Certificate{}, fmt.Errorf("save the class server's certificate: %w", err)
	}
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("read back the class server's certificate: %w", err)
	}
	return c, nil
}

// Fingerprint is the SHA-256 of a certificate's DER bytes, as browsers and `openssl x509 -fingerprint
// -sha256` show it: upper-case hex pairs joined by colons.
func Fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	pairs := make([]string, len(sum))
	for i, b := range sum {
		pairs[i] = fmt.Sprintf("%02X", b)
	}
	return strings.Join(pairs, ":")
}

// ParseFingerprint accepts a SHA-256 fingerprint however it was copied: with or without colons or spaces, in
// either case, with an optional "sha256:" in front. It returns the canonical form Fingerprint prints.
func ParseFingerprint(s string) (string, error) {
	raw := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "sha256:")
	raw = strings.NewReplacer(":", "", " ", "").Replace(raw)
	b, err := hex.DecodeString(raw)
	if err != nil || len(b) != sha256.Size {
		return "", fmt.Errorf("fingerprint %q is not a SHA-256 fingerprint (64 hex digits, as the instructor's join command shows)", s)
	}
	pairs := make([]string, len(b))
	for i, x := range b {
		pairs[i] = fmt.Sprintf("%02X", x)
	}
	return strings.Join(pairs, ":"), nil
}

// HTTPClient is how lab talks to a class server: proxies from the environment are ignored (the server is on
// the learner's LAN, where a proxy could only get in the way), and with a fingerprint the server's certificate
// must be that one, whoever signed it; without one it must be trusted by this machine.
func HTTPClient(fingerprint string) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	// One short call at a time needs no HTTP/2, whose graceful close holds a stopping server for a second.
	t.ForceAttemptHTTP2 = false
	if fingerprint != "" {
		t.TLSClientConfig = &tls.Config{
			MinVersion: tls.VersionTLS12,
			// The pin below replaces the chain check: the instructor's certificate is self-signed, and the
			// fingerprint the learner copied from the join command names it exactly.
			InsecureSkipVerify: true,
			VerifyConnection: func(cs tls.ConnectionState) error {
				if len(cs.PeerCertificates) == 0 {
					return errors.New("the server sent no certificate")
				}
				if got := Fingerprint(cs.PeerCertificates[0].Raw); got != fingerprint {
					return &pinError{got: got, want: fingerprint}
				}
				return nil
			},
		}
	}
	return &http.Client{Transport: t}
}

// pinError is a server whose certificate is not the one the join command named.
type pinError struct{ got, want string }

func (e *pinError) Error() string {
	return fmt.Sprintf("its certificate has fingerprint %s, not %s; another machine may be posing as the class server: check the address with your instructor", e.got, e.want)
}

// tlsError turns a failed handshake into what the learner can do about it, or returns nil when err is not one.
func tlsError(err error, serverURL string) error {
	var pin *pinError
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var notTLS tls.RecordHeaderError
	switch {
	case errors.As(err, &pin):
		return fmt.Errorf("class server at %s is not the one of your join command: %w", serverURL, pin)
	case errors.As(err, &unknown), errors.As(err, &hostname):
		return fmt.Errorf("class server at %s has a certificate this machine does not trust: join with the --fingerprint of your instructor's join command", serverURL)
	// net/http reports an http answer to an https request with an error of no type of its own.
	case errors.As(err, &notTLS), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return fmt.Errorf("class server at %s does not speak https: if your instructor serves with --plain-http, join with an http:// address", serverURL)
	}
	return nil
}
