package class

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
)

func TestInstructorSignsInWithoutAKeyInAnyURL(t *testing.T) {
	s, _ := startServer(t, t.TempDir(), ServerOptions{Plan: testPlan()})
	if strings.Contains(s.LoginURL(), s.InstructorKey()) || strings.Contains(s.URL(), s.InstructorKey()) || strings.Contains(s.JoinCommand(), s.InstructorKey()) {
		t.Fatalf("a printed address carries the key: %s %s %s", s.URL(), s.LoginURL(), s.JoinCommand())
	}
	if b, err := os.ReadFile(s.InstructorKeyFile()); err != nil || strings.TrimSpace(string(b)) != s.InstructorKey() {
		t.Errorf("instructor key file: %q, %v", b, err)
	}
	if info, err := os.Stat(s.InstructorKeyFile()); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("instructor key file mode: %v, %v", info, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := HTTPClient(s.Fingerprint())
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	login := func(key string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.LoginURL(), strings.NewReader(url.Values{"key": {key}}.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp
	}

	wrong := login("guess")
	if wrong.StatusCode != http.StatusSeeOther || wrong.Header.Get("Location") != "/login?failed" || len(wrong.Cookies()) != 0 {
		t.Errorf("a wrong key: %d to %q with cookies %v", wrong.StatusCode, wrong.Header.Get("Location"), wrong.Cookies())
	}
	ok := login(s.InstructorKey())
	if ok.StatusCode != http.StatusSeeOther || ok.Header.Get("Location") != "/" || len(ok.Cookies()) != 1 {
		t.Fatalf("the right key: %d to %q with cookies %v", ok.StatusCode, ok.Header.Get("Location"), ok.Cookies())
	}
	c := ok.Cookies()[0]
	if !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || strings.Contains(c.Value, s.InstructorKey()) {
		t.Errorf("session cookie %+v: want HttpOnly, Secure, SameSite=Strict, Path=/, without the key", c)
	}

	pause := func(cookie *http.Cookie, origin string) int {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/api/pause", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		req.AddCookie(cookie)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	if got := pause(c, s.URL()); got != http.StatusOK {
		t.Errorf("pause with the session from the scoreboard: %d", got)
	}
	if got := pause(c, "https://evil.example"); got != http.StatusForbidden {
		t.Errorf("pause with the session from another site: %d, want 403", got)
	}
	expired := &http.Cookie{Name: sessionCookie, Value: s.session(time.Now().Add(-time.Minute))}
	forged := &http.Cookie{Name: sessionCookie, Value: "99999999999." + strings.Repeat("0", 64)}
	for name, bad := range map[string]*http.Cookie{"expired": expired, "forged": forged} {
		if got := pause(bad, ""); got != http.StatusUnauthorized {
			t.Errorf("pause with a %s session: %d, want 401", name, got)
		}
	}
	status, body := request(t, s, "POST", "/api/resume", "", []byte("{}"))
	if status != http.StatusUnauthorized || !strings.Contains(string(body), "sign in at /login, or send it as Authorization: Bearer <key>") {
		t.Errorf("a request without the key: %d %s", status, body)
	}
	if status, _ := request(t, s, "POST", "/api/resume", s.InstructorKey(), []byte("{}")); status != http.StatusOK {
		t.Errorf("an API client with the bearer key: %d", status)
	}
}
