package class

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// testPlan is a one-hour class with three scenarios.
func testPlan() Plan {
	return Plan{Title: "Tuesday CKA", Scenarios: []string{"broken-dns", "crashloop", "pending-pod"}, TimeLimit: time.Hour, Seed: 7}
}

// testCert is one certificate for every test server that needs no certificate of its own: making one takes
// two RSA keys, which adds up over a package of servers on a loaded machine.
var testCert = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "lab-class-cert-")
	if err != nil {
		return "", err
	}
	_, err = serverCertificate(context.Background(), dir, "", "")
	return dir, err
})

// TestMain removes the shared test certificate.
func TestMain(m *testing.M) {
	code := m.Run()
	if dir, err := testCert(); err == nil {
		_ = os.RemoveAll(dir)
	}
	os.Exit(code)
}

// startServer runs a real Server on a free loopback port until the returned stop (also run at cleanup). It
// serves https with the shared test certificate unless o asks for plain HTTP or ownCert is set.
func startServer(t *testing.T, dir string, o ServerOptions, ownCert ...bool) (*Server, func()) {
	t.Helper()
	o.Addr, o.DataDir = "127.0.0.1:0", dir
	if !o.PlainHTTP && len(ownCert) == 0 {
		certDir, err := testCert()
		if err != nil {
			t.Fatal(err)
		}
		o.CertFile, o.KeyFile = filepath.Join(certDir, certFile), filepath.Join(certDir, keyFile)
	}
	s, err := NewServer(t.Context(), o)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	stop := sync.OnceFunc(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("server did not stop within 10s")
		}
	})
	t.Cleanup(stop)
	return s, stop
}

// request sends a raw request to the server at path, for the cases the Client is too well-behaved to produce.
func request(t *testing.T, s *Server, method, path, key string, body []byte) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	url := s.URL() + path
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := HTTPClient(s.Fingerprint()).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s %s: %v", method, url, err)
	}
	return resp.StatusCode, raw
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func mustJoin(t *testing.T, s *Server, name string) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := Join(ctx, Membership{URL: s.URL(), Fingerprint: s.Fingerprint(), Name: name}, s.Token())
	if err != nil {
		t.Fatalf("join %s: %v", name, err)
	}
	return c
}

func mustPost(t *testing.T, c *Client, r Result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Post(ctx, r); err != nil {
		t.Fatalf("post %+v: %v", r, err)
	}
}

// check is a check result of five checks of two points each, with the evidence a grader gives: all passing
// when passed (a score below 10 is then what hints cost), else score/2 of them.
func check(scenario string, passed bool, score int) Result {
	n := score / 2
	if passed {
		n = 5
	}
	r := Result{Scenario: scenario, Event: EventCheck, Passed: passed, Score: score, MaxScore: 10,
		ChecksPassed: n, ChecksTotal: 5, TimeUsed: time.Duration(score) * time.Minute}
	for i := range 5 {
		c := CheckEvidence{Name: fmt.Sprintf("check %d", i+1), Points: 2, Passed: i < n, Evidence: "as the grader saw it"}
		if !c.Passed {
			c.Evidence = "pod web-1 is not Ready"
		}
		r.Checks = append(r.Checks, c)
	}
	return r
}

// signedBody is the body a learner's lab posts for r, signed with key (nonce and class made up when empty).
func signedBody(t *testing.T, s *Server, key, nonce string, r Result) []byte {
	t.Helper()
	if nonce == "" {
		nonce = newNonce()
	}
	signed, err := sign(report{ClassID: s.Plan().ClassID, Nonce: nonce, Result: r}, key)
	if err != nil {
		t.Fatal(err)
	}
	return mustJSON(t, signed)
}

// storedResults reads what the server has on disk.
func storedResults(t *testing.T, s *Server) []Result {
	t.Helper()
	all, err := s.store.results()
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// movedTo is a saved membership for a server that restarted on another port.
func movedTo(m Membership, s *Server) Membership {
	m.URL = s.URL()
	return m
}
