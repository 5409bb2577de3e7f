package class

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestServerPinsItsOwnCertificate(t *testing.T) {
	dir := t.TempDir()
	s, stop := startServer(t, dir, ServerOptions{Plan: testPlan(), Token: "tok"}, true)
	if s.Fingerprint() == "" || !strings.HasPrefix(s.URL(), "https://") {
		t.Fatalf("a class served by default: URL %s, fingerprint %q; want https with a fingerprint", s.URL(), s.Fingerprint())
	}
	if !strings.Contains(s.JoinCommand(), " --fingerprint "+s.Fingerprint()+" ") {
		t.Errorf("join command %q does not carry the fingerprint", s.JoinCommand())
	}
	if info, err := os.Stat(filepath.Join(dir, keyFile)); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the server's key: %v %v, want a 0600 file in the data directory", info, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	_, _, err := Join(ctx, Membership{URL: s.URL(), Name: "alice"}, "tok")
	wantOneLine(t, err, "has a certificate this machine does not trust: join with the --fingerprint of your instructor's join command")
	other := strings.Repeat("AB:", 31) + "AB"
	_, _, err = Join(ctx, Membership{URL: s.URL(), Fingerprint: other, Name: "alice"}, "tok")
	wantOneLine(t, err, "is not the one of your join command: its certificate has fingerprint "+s.Fingerprint()+", not "+other+"; another machine may be posing as the class server")
	_, _, err = Join(ctx, Membership{URL: strings.Replace(s.URL(), "https", "http", 1), Fingerprint: s.Fingerprint(), Name: "alice"}, "tok")
	wantOneLine(t, err, "is plain http, where a fingerprint pins nothing")
	// The fingerprint as a learner may type it: lower case, without colons.
	typed := "sha256:" + strings.ToLower(strings.ReplaceAll(s.Fingerprint(), ":", ""))
	c, _, err := Join(ctx, Membership{URL: strings.TrimPrefix(s.URL(), "https://"), Fingerprint: typed, Name: "alice"}, "tok")
	if err != nil {
		t.Fatalf("join with the fingerprint: %v", err)
	}
	if m := c.Membership(); m.Fingerprint != s.Fingerprint() || m.URL != s.URL() {
		t.Errorf("membership = %+v, want the canonical fingerprint and URL", m)
	}
	fp := s.Fingerprint()
	stop()

	s, _ = startServer(t, dir, ServerOptions{Resume: true}, true)
	if s.Fingerprint() != fp {
		t.Errorf("a resumed class changed its certificate: %s, was %s", s.Fingerprint(), fp)
	}
	mustPost(t, NewClient(movedTo(c.Membership(), s)), check("crashloop", true, 10))
}

func TestServerTakesAGivenCertificate(t *testing.T) {
	certDir, err := testCert()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := startServer(t, t.TempDir(), ServerOptions{Plan: testPlan()})
	if s.Fingerprint() != Fingerprint(s.tls.Certificates[0].Certificate[0]) {
		t.Errorf("fingerprint %s is not the given certificate's", s.Fingerprint())
	}
	if _, err := NewServer(t.Context(), ServerOptions{Addr: "127.0.0.1:0", DataDir: t.TempDir(), Plan: testPlan(), CertFile: filepath.Join(certDir, certFile)}); err == nil ||
		!strings.Contains(err.Error(), "needs both its certificate and its key") {
		t.Errorf("a certificate without its key: %v", err)
	}
}

func TestPlainHTTPOnlyWhenAsked(t *testing.T) {
	s, _ := startServer(t, t.TempDir(), ServerOptions{Plan: testPlan(), PlainHTTP: true, Token: "tok"})
	if s.Fingerprint() != "" || !strings.HasPrefix(s.URL(), "http://") || strings.Contains(s.JoinCommand(), "--fingerprint") {
		t.Fatalf("plain HTTP: URL %s, join command %q", s.URL(), s.JoinCommand())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, err := Join(ctx, Membership{URL: strings.TrimPrefix(s.URL(), "http://"), Name: "alice"}, "tok")
	wantOneLine(t, err, "does not speak https: if your instructor serves with --plain-http, join with an http:// address")
	mustJoin(t, s, "alice")
}

func TestParseFingerprint(t *testing.T) {
	canonical := strings.Repeat("0A:", 31) + "0A"
	for _, in := range []string{canonical, strings.ToLower(canonical), "SHA256:" + strings.Repeat("0a", 32), strings.Repeat("0A ", 32)} {
		if got, err := ParseFingerprint(in); err != nil || got != canonical {
			t.Errorf("ParseFingerprint(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "0A:0B", strings.Repeat("zz", 32)} {
		if _, err := ParseFingerprint(in); err == nil || !strings.Contains(err.Error(), "is not a SHA-256 fingerprint") {
			t.Errorf("ParseFingerprint(%q): %v", in, err)
		}
	}
}
