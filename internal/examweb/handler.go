package examweb

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Handler is the page and its API behind the guard: loopback, this server's own address, and the cookie the
// one-time link earns.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, webFiles, "web/index.html")
	})
	mux.Handle("GET /web/", http.FileServerFS(webFiles))
	mux.HandleFunc("GET /api/state", s.handleState)
	mux.HandleFunc("POST /api/questions/{n}/go", s.question(func(r *http.Request, i int) error { return s.o.Exam.Go(r.Context(), i) }))
	mux.HandleFunc("POST /api/questions/{n}/flag", s.question(func(r *http.Request, i int) error { return s.o.Exam.Flag(r.Context(), i) }))
	mux.HandleFunc("PUT /api/questions/{n}/note", s.handleNote)
	mux.HandleFunc("POST /api/grade", s.handleGrade)
	mux.HandleFunc("GET /api/terminal", s.handleTerminal)
	mux.HandleFunc("GET /review", s.handleReview)
	return s.guard(mux)
}

// guard refuses (403) a request from another machine, one addressed to another host name (a DNS rebinding
// page's), and one without the session cookie; the first visit with the link's token gets the cookie and is
// sent on to the address without the token, which is then spent.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopback(r.RemoteAddr) || r.Host != s.host {
			http.Error(w, "the exam page answers this machine only, at "+s.host, http.StatusForbidden)
			return
		}
		if c, err := r.Cookie(s.cookie); err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(s.session)) == 1 {
			w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; form-action 'none'")
			w.Header().Set("Referrer-Policy", "no-referrer")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.Header().Set("Cache-Control", "no-store")
			next.ServeHTTP(w, r)
			return
		}
		token := r.URL.Query().Get("token")
		if token == "" || r.Method != http.MethodGet || r.URL.Path != "/" {
			http.Error(w, "open the exam page with the link `lab exam open` printed", http.StatusForbidden)
			return
		}
		if !s.spend(token) {
			http.Error(w, "this link has been used or is wrong: run `lab exam open` again for a new one", http.StatusForbidden)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: s.session, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		// The address bar and history keep no token, though it is spent.
		http.Redirect(w, r, "/", http.StatusSeeOther)
	})
}

// spend takes the link's token once.
func (s *Server) spend(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spent || subtle.ConstantTimeCompare([]byte(token), []byte(s.token)) != 1 {
		return false
	}
	s.spent = true
	return true
}

func loopback(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// state is what the page polls: the exam, the server's clock (the page corrects its own by it), the learner's
// notes, and how grading goes.
type state struct {
	View
	ServerTime time.Time    `json:"serverTime"`
	Notes      map[int]Note `json:"notes"`
	Grading    bool         `json:"grading"`
	GradeError string       `json:"gradeError,omitempty"`
	// Terminal is false in a build without xterm.js, and Closed says why no terminal opens now.
	Terminal bool   `json:"terminal"`
	Closed   string `json:"closed,omitempty"`
}

func (s *Server) handleState(w http.ResponseWriter, r *http.Request) {
	v, err := s.o.Exam.View(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	if v.Report != nil {
		// The exam was graded elsewhere (`lab exam grade`, or the next lab command after the deadline):
		// its terminals end with it.
		s.closeTerminals(StatusEnded, "the exam has ended")
	}
	st := state{View: v, ServerTime: time.Now().UTC(), Notes: s.notes.all(), Terminal: Assets(), Closed: s.closed(v)}
	s.mu.Lock()
	st.Grading = s.grading
	if s.gradeErr != nil {
		st.GradeError = s.gradeErr.Error()
	}
	s.mu.Unlock()
	writeJSON(w, st)
}

// question runs fn on the question the path names (1-based there, 0-based to fn) and answers 204.
func (s *Server) question(fn func(r *http.Request, i int) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		i, ok := s.questionIndex(w, r)
		if !ok {
			return
		}
		if err := fn(r, i); err != nil {
			s.fail(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

// questionIndex reads the path's question number against the exam; it has answered when not ok.
func (s *Server) questionIndex(w http.ResponseWriter, r *http.Request) (int, bool) {
	v, err := s.o.Exam.View(r.Context())
	if err != nil {
		s.fail(w, err)
		return 0, false
	}
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 1 || n > len(v.Questions) {
		http.Error(w, "no such question", http.StatusNotFound)
		return 0, false
	}
	return n - 1, true
}

// maxNote bounds a note: notes are the learner's jottings, not files.
const maxNote = 64 << 10

func (s *Server) handleNote(w http.ResponseWriter, r *http.Request) {
	i, ok := s.questionIndex(w, r)
	if !ok {
		return
	}
	var n Note
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxNote))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&n); err != nil {
		http.Error(w, "a note is {\"text\": ..., \"done\": ...} of at most 64 KiB: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := s.notes.set(i+1, n); err != nil {
		s.fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleGrade ends the exam now, as the exam's End button does; the page follows the grading in its state.
func (s *Server) handleGrade(w http.ResponseWriter, r *http.Request) {
	v, err := s.o.Exam.View(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	if !v.Running {
		http.Error(w, "the exam has ended", http.StatusConflict)
		return
	}
	select {
	case s.end <- "you ended the exam":
	default:
		// Already asked.
	}
	w.WriteHeader(http.StatusAccepted)
}

// handleReview shows the graded exam's review, the page `lab exam review --html` writes.
func (s *Server) handleReview(w http.ResponseWriter, r *http.Request) {
	v, err := s.o.Exam.View(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	if v.Report == nil {
		http.Error(w, "the review opens once the exam is graded", http.StatusConflict)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := WriteReview(w, Review{Report: v.Report, Notes: s.notes.all()}); err != nil {
		s.log.Print(err)
	}
}

func (s *Server) fail(w http.ResponseWriter, err error) {
	s.log.Print(err)
	code := http.StatusInternalServerError
	if errors.Is(err, ErrEnded) {
		code = http.StatusConflict
	}
	http.Error(w, err.Error(), code)
}

// ErrEnded is an exam that has ended: nothing on it changes any more.
var ErrEnded = errors.New("the exam has ended")

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
