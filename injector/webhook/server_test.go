package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	testService   = "lab-webhook"
	testNamespace = "lab-system"
	testHost      = testService + "." + testNamespace + ".svc"
)

func testCerts(t *testing.T) Certs {
	t.Helper()
	c, err := NewServingCerts(testService, testNamespace, time.Hour)
	if err != nil {
		t.Fatalf("NewServingCerts: %v", err)
	}
	return c
}

// caClient trusts only the webhook CA and verifies the name the API server
// would use, like the real caller.
func caClient(t *testing.T, c Certs, serverName string) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(c.CAPEM) {
		t.Fatal("CAPEM holds no certificate")
	}
	return &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: serverName}},
	}
}

// syncBuffer lets the test read the log the handler goroutine writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func startTLSServer(t *testing.T, policy string, c Certs, log io.Writer) *httptest.Server {
	t.Helper()
	p, err := ParsePolicy(policy)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(c.CertPEM, c.KeyPEM)
	if err != nil {
		t.Fatalf("serving key pair: %v", err)
	}
	srv := httptest.NewUnstartedServer(NewHandler(p, log))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func postReview(t *testing.T, client *http.Client, url string, body []byte) (*http.Response, []byte) {
	t.Helper()
	resp, err := postJSON(t, client, url+"/validate", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("POST /validate: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	return resp, out
}

func reviewBody(t *testing.T, req *admissionv1.AdmissionRequest) []byte {
	t.Helper()
	b, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  req,
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestHandlerReviews(t *testing.T) {
	c := testCerts(t)
	var log syncBuffer
	srv := startTLSServer(t, "require-limits", c, &log)
	client := caClient(t, c, testHost)

	denied := admissionRequest(t, "", "Pod", pod(nil, containers(ctr("web", "nginx", corev1.ResourceCPU))))
	denied.UID = "11111111-deny"
	allowed := admissionRequest(t, "", "Pod", pod(nil, containers(ctr("web", "nginx", corev1.ResourceCPU, corev1.ResourceMemory))))
	allowed.UID = "22222222-allow"

	for _, tc := range []struct {
		req     *admissionv1.AdmissionRequest
		allowed bool
		message string
	}{
		{denied, false, `container "web" has no memory limit: every container in namespace team-a must set resources.limits.cpu and resources.limits.memory (policy require-limits)`},
		{allowed, true, ""},
	} {
		resp, body := postReview(t, client, srv.URL, reviewBody(t, tc.req))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		var out admissionv1.AdmissionReview
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatalf("decode response: %v", err)
		}
		if out.APIVersion != "admission.k8s.io/v1" || out.Kind != "AdmissionReview" || out.Response == nil {
			t.Fatalf("response is not a v1 AdmissionReview: %s", body)
		}
		r := out.Response
		if r.UID != tc.req.UID || r.Allowed != tc.allowed {
			t.Errorf("response uid=%s allowed=%v, want uid=%s allowed=%v", r.UID, r.Allowed, tc.req.UID, tc.allowed)
		}
		if tc.allowed {
			if r.Result != nil {
				t.Errorf("allowed response carries a status: %+v", r.Result)
			}
			continue
		}
		if r.Result == nil || r.Result.Code != http.StatusForbidden || r.Result.Message != tc.message {
			t.Errorf("denied status = %+v, want code 403 and message %q", r.Result, tc.message)
		}
	}
	logged := log.String()
	for _, want := range []string{"DENY CREATE Pod team-a/web uid=11111111-deny: container \"web\"", "ALLOW CREATE Pod team-a/web uid=22222222-allow\n"} {
		if !strings.Contains(logged, want) {
			t.Errorf("log lacks %q:\n%s", want, logged)
		}
	}
}

func TestHandlerRejectsMalformedReviews(t *testing.T) {
	c := testCerts(t)
	srv := startTLSServer(t, "deny-privileged", c, io.Discard)
	client := caClient(t, c, testHost)
	for name, body := range map[string]string{
		"not json":       "{not json",
		"wrong version":  `{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"x"}}`,
		"no request":     `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`,
		"wrong kind":     `{"apiVersion":"admission.k8s.io/v1","kind":"Pod","request":{"uid":"x"}}`,
		"empty document": "",
	} {
		if resp, out := postReview(t, client, srv.URL, []byte(body)); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d (%s), want 400", name, resp.StatusCode, out)
		}
	}
}

func TestHandlerHealthz(t *testing.T) {
	c := testCerts(t)
	srv := startTLSServer(t, "deny-privileged", c, io.Discard)
	client := caClient(t, c, testHost)
	resp, err := getURL(t, client, srv.URL+"/healthz")
	if err != nil {
		t.Fatalf("GET /healthz: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz = %d, want 200", resp.StatusCode)
	}
	resp, err = getURL(t, client, srv.URL+"/validate")
	if err != nil {
		t.Fatalf("GET /validate: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /validate = %d, want 405", resp.StatusCode)
	}
}

func TestServingCertVerifiesForServiceNames(t *testing.T) {
	c := testCerts(t)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(c.CAPEM)
	block, _ := pem.Decode(c.CertPEM)
	if block == nil {
		t.Fatal("CertPEM holds no PEM block")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	opts := x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	for _, host := range []string{testService, testService + "." + testNamespace, testHost, testHost + ".cluster.local"} {
		opts.DNSName = host
		if _, err := cert.Verify(opts); err != nil {
			t.Errorf("serving cert does not verify for %s: %v", host, err)
		}
	}
	opts.DNSName = "other.lab-system.svc"
	if _, err := cert.Verify(opts); err == nil {
		t.Error("serving cert verifies for a foreign name")
	}

	// Over the wire: a client trusting only another CA must refuse it.
	srv := startTLSServer(t, "deny-privileged", c, io.Discard)
	if _, err := getURL(t, caClient(t, testCerts(t), testHost), srv.URL+"/healthz"); err == nil {
		t.Error("a client trusting a different CA accepted the server")
	}
}

func TestNewServingCertsValidates(t *testing.T) {
	if _, err := NewServingCerts("", "ns", time.Hour); err == nil {
		t.Error("empty service accepted")
	}
	if _, err := NewServingCerts("svc", "ns", 0); err == nil {
		t.Error("zero validity accepted")
	}
}

func TestServe(t *testing.T) {
	c := testCerts(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, c.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, c.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	// Reserve a free port, then hand it to Serve.
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServeOptions{Addr: addr, CertFile: certFile, KeyFile: keyFile, Policy: "require-limits"})
	}()
	client := caClient(t, c, testHost)
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := getURL(t, client, "https://"+addr+"/healthz")
		if err == nil {
			_ = resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("webhook never became healthy: %v (Serve: %v)", err, <-done)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Older TLS versions must be refused.
	conn, err := (&tls.Dialer{Config: &tls.Config{MaxVersion: tls.VersionTLS11, InsecureSkipVerify: true}}).DialContext(t.Context(), "tcp", addr)
	if err == nil {
		_ = conn.Close()
		t.Error("TLS 1.1 handshake succeeded")
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after cancel = %v, want nil", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
}

func TestServeRejectsBadOptions(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	for name, o := range map[string]ServeOptions{
		"unknown policy":   {Policy: "nope", CertFile: missing, KeyFile: missing},
		"no key pair":      {Policy: "deny-privileged"},
		"missing key pair": {Policy: "deny-privileged", CertFile: missing, KeyFile: missing},
	} {
		if err := Serve(context.Background(), o); err == nil {
			t.Errorf("%s: Serve = %v, want a configuration error", name, err)
		}
	}
}

// postJSON posts body to url as the API server posts an AdmissionReview, bounded by the test.
func postJSON(t *testing.T, c *http.Client, url string, body io.Reader) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return c.Do(req)
}

// getURL gets url, bounded by the test.
func getURL(t *testing.T, c *http.Client, url string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	return c.Do(req)
}
