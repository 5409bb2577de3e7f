package examweb

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestTokenIsSpentOnFirstVisit: the link's token earns one browser its cookie and then works no more; nothing
// is served without the cookie.
func TestTokenIsSpentOnFirstVisit(t *testing.T) {
	s, _, _ := startPage(t, newFakeExam(time.Hour))
	stranger := visitor(t)
	for _, u := range []string{base(s) + "/", base(s) + "/api/state", base(s) + "/web/exam.js", base(s) + "/?token=wrong", base(s) + "/api/state?token=" + s.token} {
		if code, _ := get(t, stranger, u); code != http.StatusForbidden {
			t.Errorf("GET %s without the cookie = %d, want 403", u, code)
		}
	}
	learner := visitor(t)
	signIn(t, s, learner)
	if code, body := get(t, learner, base(s)+"/"); code != http.StatusOK || !strings.Contains(body, "exam.js") {
		t.Errorf("the page after the link = %d %.80q", code, body)
	}
	if code, _ := get(t, learner, base(s)+"/api/state"); code != http.StatusOK {
		t.Errorf("the state after the link = %d", code)
	}
	late := visitor(t)
	if code, body := get(t, late, s.URL()); code != http.StatusForbidden || !strings.Contains(body, "lab exam open") {
		t.Errorf("the link's second use = %d %q, want 403 saying how to get a new one", code, body)
	}
	if code, _ := get(t, late, base(s)+"/api/state"); code != http.StatusForbidden {
		t.Errorf("the state for the link's second user = %d, want 403", code)
	}
}

// TestOnlyLoopbackAndOwnHost: even with the cookie, a request from another machine, or one naming another
// host (a DNS rebinding page's), is refused.
func TestOnlyLoopbackAndOwnHost(t *testing.T) {
	s, err := New(context.Background(), Options{Exam: newFakeExam(time.Hour), NotesFile: t.TempDir() + "/notes.json"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.ln.Close() })
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Errorf("URL %s is not on loopback", s.URL())
	}
	h := s.Handler()
	cookie := &http.Cookie{Name: s.cookie, Value: s.session}
	for _, tc := range []struct {
		name, remote, host string
		want               int
	}{
		{"loopback", "127.0.0.1:50000", s.host, http.StatusOK},
		{"loopback v6", "[::1]:50000", s.host, http.StatusOK},
		{"the LAN", "192.168.1.20:50000", s.host, http.StatusForbidden},
		{"another host name", "127.0.0.1:50000", "evil.example:" + strings.Split(s.host, ":")[1], http.StatusForbidden},
		{"no port", "127.0.0.1", s.host, http.StatusForbidden},
	} {
		req := httptest.NewRequestWithContext(context.Background(), http.MethodGet, "/api/state", nil)
		req.RemoteAddr, req.Host = tc.remote, tc.host
		req.AddCookie(cookie)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, rec.Code, tc.want)
		}
	}
	req := httptest.NewRequestWithContext(context.Background(), http.MethodGet, "/?token="+s.token, nil)
	req.RemoteAddr, req.Host = "10.0.0.7:40000", s.host
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden || s.spent {
		t.Errorf("the link from the LAN = %d (spent %v), want 403 and the token kept", rec.Code, s.spent)
	}
}

// TestNotesFlagsAndMoves: notes and done marks are kept in the notes file (a new page finds them), and
// flag and move reach the exam.
func TestNotesFlagsAndMoves(t *testing.T) {
	fake := newFakeExam(time.Hour)
	s, notesFile, _ := startPage(t, fake)
	c := visitor(t)
	signIn(t, s, c)
	if code, body := send(t, c, http.MethodPut, base(s)+"/api/questions/2/note", `{"text":"check the selector","done":true}`); code != http.StatusNoContent {
		t.Fatalf("save a note = %d %s", code, body)
	}
	for _, bad := range []struct{ path, body string }{
		{"/api/questions/9/note", `{"text":"x"}`},
		{"/api/questions/0/note", `{"text":"x"}`},
		{"/api/questions/1/note", `{"txt":"x"}`},
		{"/api/questions/1/note", `{"text":"` + strings.Repeat("x", maxNote) + `"}`},
	} {
		if code, _ := send(t, c, http.MethodPut, base(s)+bad.path, bad.body); code != http.StatusNotFound && code != http.StatusBadRequest {
			t.Errorf("PUT %s %.20s = %d, want 404 or 400", bad.path, bad.body, code)
		}
	}
	if code, _ := send(t, c, http.MethodPost, base(s)+"/api/questions/3/flag", ""); code != http.StatusNoContent {
		t.Errorf("flag = %d", code)
	}
	if code, _ := send(t, c, http.MethodPost, base(s)+"/api/questions/3/go", ""); code != http.StatusNoContent {
		t.Errorf("go = %d", code)
	}
	st := readState(t, s, c)
	if !st.Questions[2].Flagged || st.Current != 2 {
		t.Errorf("after flag and go on question 3: flagged %v, current %d", st.Questions[2].Flagged, st.Current)
	}
	if n := st.Notes[2]; n.Text != "check the selector" || !n.Done || len(st.Notes) != 1 {
		t.Errorf("notes = %+v", st.Notes)
	}
	again, err := openNotes(notesFile)
	if err != nil {
		t.Fatal(err)
	}
	if got := again.all()[2]; got.Text != "check the selector" || !got.Done {
		t.Errorf("the notes file holds %+v", again.all())
	}
	if code, _ := send(t, c, http.MethodPut, base(s)+"/api/questions/2/note", `{"text":"","done":false}`); code != http.StatusNoContent {
		t.Errorf("clear a note = %d", code)
	}
	if st := readState(t, s, c); len(st.Notes) != 0 {
		t.Errorf("a cleared note is kept: %+v", st.Notes)
	}
}

func readState(t *testing.T, s *Server, c *http.Client) state {
	t.Helper()
	code, body := get(t, c, base(s)+"/api/state")
	if code != http.StatusOK {
		t.Fatalf("state = %d %s", code, body)
	}
	var st state
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// dialTerminal opens the page's terminal as the page does: with the cookie and the page's origin.
func dialTerminal(t *testing.T, s *Server, c *http.Client) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws://"+s.host+"/api/terminal", &websocket.DialOptions{HTTPClient: c, HTTPHeader: http.Header{"Origin": {base(s)}}})
	if err != nil {
		t.Fatalf("open the terminal: %v", err)
	}
	t.Cleanup(func() { _ = conn.CloseNow() })
	return conn
}

// readUntil reads the terminal's output until it holds want; the close error when the terminal closes first.
func readUntil(t *testing.T, conn *websocket.Conn, want string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out strings.Builder
	for !strings.Contains(out.String(), want) {
		_, b, err := conn.Read(ctx)
		if err != nil {
			return out.String(), err
		}
		out.Write(b)
	}
	return out.String(), nil
}

// TestTerminalRunsTheShellOnAPTY: keystrokes reach a shell on a PTY and its output comes back; a resize is the
// PTY's size; another origin's page cannot open one.
func TestTerminalRunsTheShellOnAPTY(t *testing.T) {
	s, _, _ := startPage(t, newFakeExam(time.Hour))
	c := visitor(t)
	signIn(t, s, c)
	conn := dialTerminal(t, s, c)
	ctx := context.Background()
	if err := conn.Write(ctx, websocket.MessageText, []byte(`{"cols":132,"rows":41}`)); err != nil {
		t.Fatal(err)
	}
	// The shell works it out, so an echo of the keystrokes alone would not pass.
	if err := conn.Write(ctx, websocket.MessageBinary, []byte("echo hello-$((40+2)); stty size; tty\n")); err != nil {
		t.Fatal(err)
	}
	out, err := readUntil(t, conn, "/dev/pts/")
	if err != nil {
		t.Fatalf("%v; the terminal showed %q", err, out)
	}
	if !strings.Contains(out, "hello-42") || !strings.Contains(out, "41 132") {
		t.Errorf("the terminal showed %q, want hello-42 and the size 41 132", out)
	}
	if err := conn.Write(ctx, websocket.MessageBinary, []byte("exit\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := readUntil(t, conn, "never"); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Errorf("after exit the terminal closed with %v, want a normal closure", err)
	}

	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, resp, err := websocket.Dial(dctx, "ws://"+s.host+"/api/terminal", &websocket.DialOptions{HTTPClient: c, HTTPHeader: http.Header{"Origin": {"http://evil.example"}}}); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("a terminal for another origin: %v, want 403", err)
	}
}

// TestTimeUpClosesTheTerminalAndGrades: at the deadline the server closes the terminal (its shell gone) and
// grades, and the state carries the report; no terminal opens after.
func TestTimeUpClosesTheTerminalAndGrades(t *testing.T) {
	fake := newFakeExam(2 * time.Second)
	s, _, graded := startPage(t, fake)
	c := visitor(t)
	signIn(t, s, c)
	conn := dialTerminal(t, s, c)
	if err := conn.Write(context.Background(), websocket.MessageBinary, []byte("echo ready\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := readUntil(t, conn, "ready"); err != nil {
		t.Fatal(err)
	}
	_, err := readUntil(t, conn, "never")
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != StatusEnded || ce.Reason != "time is up" {
		t.Errorf("at the deadline the terminal closed with %v, want %d time is up", err, StatusEnded)
	}
	select {
	case err := <-graded:
		if err != nil {
			t.Fatalf("grading: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("not graded at the deadline")
	}
	st := readState(t, s, c)
	if st.Report == nil || st.Running || st.Report.Percent != 56.3 {
		t.Errorf("state after grading: running %v, report %+v", st.Running, st.Report)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, resp, err := websocket.Dial(ctx, "ws://"+s.host+"/api/terminal", &websocket.DialOptions{HTTPClient: c, HTTPHeader: http.Header{"Origin": {base(s)}}}); err == nil || resp == nil || resp.StatusCode != http.StatusConflict {
		t.Errorf("a terminal after grading: %v, want 409", err)
	}
}
