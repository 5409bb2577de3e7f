package class

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The instructor signs in on the login page with the instructor key and gets a session cookie, so the key never
// rides in a URL (browser history, a screenshot of the projector). API clients send the key as a bearer token.
const (
	sessionCookie = "lab_instructor"
	sessionTTL    = 12 * time.Hour
)

// session is the cookie value for a session ending at expires: the expiry and its HMAC under the instructor
// key. It needs no server-side state, survives a server restart, and cannot be made without the key.
func (s *Server) session(expires time.Time) string {
	exp := strconv.FormatInt(expires.Unix(), 10)
	return exp + "." + s.sessionMAC(exp)
}

func (s *Server) sessionMAC(exp string) string {
	m := hmac.New(sha256.New, []byte(s.instructorKey))
	m.Write([]byte("lab class instructor session\x00" + s.classID + "\x00" + exp))
	return hex.EncodeToString(m.Sum(nil))
}

// validSession reports whether a cookie value is a session this server issued that has not expired.
func (s *Server) validSession(value string, now time.Time) bool {
	exp, mac, ok := strings.Cut(value, ".")
	if !ok {
		return false
	}
	unix, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || now.After(time.Unix(unix, 0)) {
		return false
	}
	return hmac.Equal([]byte(mac), []byte(s.sessionMAC(exp)))
}

// instructor guards a handler: the request carries the instructor key as a bearer token, or the session
// cookie of a signed-in browser. A cookie is only taken from this server's own pages (the cookie is
// SameSite=Strict already; the Origin check also covers browsers that ignore that).
func (s *Server) instructor(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch {
		case subtle.ConstantTimeCompare([]byte(bearer(r)), []byte(s.instructorKey)) == 1:
		case s.signedIn(r):
			if !sameOrigin(r) {
				writeError(w, http.StatusForbidden, "instructor requests come from the scoreboard's own page")
				return
			}
		default:
			writeError(w, http.StatusUnauthorized, "instructor key required: sign in at /login, or send it as Authorization: Bearer <key>")
			return
		}
		next(w, r)
	}
}

func (s *Server) signedIn(r *http.Request) bool {
	c, err := r.Cookie(sessionCookie)
	return err == nil && s.validSession(c.Value, time.Now())
}

// sameOrigin accepts requests without an Origin (same-origin GETs, API clients) and those whose Origin is the
// host they were sent to.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host == r.Host
}

// handleLogin signs the instructor in from the login form and sends the browser to the scoreboard; a wrong
// key goes back to the form, which says so.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	if s.guesses.limited(w, clientAddr(r), "sign-in attempts") {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if err := r.ParseForm(); err != nil {
		writeError(w, http.StatusBadRequest, "unreadable sign-in form: %v", err)
		return
	}
	if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(r.PostForm.Get("key"))), []byte(s.instructorKey)) != 1 {
		http.Redirect(w, r, "/login?failed", http.StatusSeeOther)
		return
	}
	expires := time.Now().Add(sessionTTL)
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: s.session(expires), Path: "/", Expires: expires,
		HttpOnly: true, Secure: s.tls != nil, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// handleLogout ends the browser's session.
func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: s.tls != nil, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// handleSession tells the scoreboard page whether to show the instructor's controls.
func (s *Server) handleSession(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]bool{"instructor": s.signedIn(r)})
}
