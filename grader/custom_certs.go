package grader

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/cka-lab/lab/internal/node"
)

func init() {
	Register("servedCertificate", servedCertificate)
	Register("certificateFile", certificateFile)
}

// servedCertificate: the certificate the API server presents on its endpoint now, as every client sees it, is
// signed by the cluster CA and valid for at least args.minDays days (or, for a symptom, at most args.maxDays).
// What the server serves is what counts: a renewed file the server has not loaded yet changes nothing.
func servedCertificate(ctx context.Context, e Env, args map[string]string) Result {
	u, err := url.Parse(e.Clients.Config.Host)
	if err != nil {
		return e.fail("the API server's address %q: %v", e.Clients.Config.Host, err)
	}
	dialer := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second}, Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // the chain is verified below, against the cluster CA, to say what is wrong with it
	conn, err := dialer.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return e.fail("connect to the API server at %s: %v", u.Host, err)
	}
	defer func() { _ = conn.Close() }()
	certs := conn.(*tls.Conn).ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return e.fail("the API server at %s presented no certificate", u.Host)
	}
	return e.judgeCertificate("the API server serves a certificate", certs[0], args)
}

// certificateFile: the certificate file args.path on args.node is signed by the cluster CA and valid for at
// least args.minDays days (or at most args.maxDays): what the component reads at its next start.
func certificateFile(ctx context.Context, e Env, args map[string]string) Result {
	n, err := e.nodeNamed(args["node"])
	if err != nil {
		return e.fail("%v", err)
	}
	out, err := node.Run(ctx, n, "cat", args["path"])
	if err != nil {
		return e.fail("read %s on %s: %v", args["path"], n, err)
	}
	c := firstCert([]byte(out))
	if c == nil {
		return e.fail("%s on %s holds no certificate", args["path"], n)
	}
	return e.judgeCertificate(fmt.Sprintf("%s on %s is a certificate", args["path"], n), c, args)
}

func (e Env) judgeCertificate(what string, c *x509.Certificate, args map[string]string) Result {
	left := time.Until(c.NotAfter)
	days := int(math.Round(left.Hours() / 24))
	desc := fmt.Sprintf("%s for %q valid until %s (%d days from now)", what, c.Subject.CommonName, c.NotAfter.UTC().Format("2006-01-02 15:04 UTC"), days)
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(e.Clients.Config.CAData) {
		return e.fail("lab's kubeconfig holds no cluster CA to verify %s against", what)
	}
	if _, err := c.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}, CurrentTime: time.Now()}); err != nil {
		return e.fail("%s that the cluster CA does not vouch for: %v", desc, err)
	}
	if v, ok := args["minDays"]; ok {
		min, err := strconv.Atoi(v)
		if err != nil {
			return e.fail("minDays %q is not a number", v)
		}
		if left < time.Duration(min)*24*time.Hour {
			return e.fail("%s, less than %d days", desc, min)
		}
		return pass("%s", desc)
	}
	max, err := strconv.Atoi(args["maxDays"])
	if err != nil {
		return e.fail("set minDays or maxDays, got %v", args)
	}
	if left > time.Duration(max)*24*time.Hour {
		return e.fail("%s, more than %d days", desc, max)
	}
	return pass("%s", desc)
}
