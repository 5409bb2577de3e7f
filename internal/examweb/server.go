// Package examweb serves an exam in progress as one page on this machine's loopback, the way the CKA's
// remote desktop feels: the question list with weights, flags and done marks, the current task and its host,
// a clock to the deadline, notes per question, and a terminal (xterm.js over a WebSocket to a PTY running the
// exam's shell). Only the holder of a one-time link gets in, and only from this machine; at the deadline the
// server closes the terminals, grades the exam and the page shows the result.
package examweb

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/cka-lab/lab/internal/exam"
)

// Exam is what the page needs of the exam in progress: lab's exam commands provide it over the state
// directory and the cluster, the tests a fake.
type Exam interface {
	// View is the exam as it stands: its questions, the current one, the deadline, and the report once graded.
	View(ctx context.Context) (View, error)
	// Go makes question i (0-based) the current one, as `ssh <host>` to its host does.
	Go(ctx context.Context, i int) error
	// Flag flags question i (0-based) to come back to, or unflags it.
	Flag(ctx context.Context, i int) error
	// Grade ends the exam and grades it.
	Grade(ctx context.Context) (*exam.Report, error)
	// Shell is the command line (and environment beside the server's) of the exam's terminal.
	Shell() (argv, env []string, err error)
}

// View is the exam as the page shows it.
type View struct {
	ID        string       `json:"id"`
	Running   bool         `json:"running"`
	Deadline  time.Time    `json:"deadline"`
	Current   int          `json:"current"`
	Questions []Question   `json:"questions"`
	Report    *exam.Report `json:"report,omitempty"`
}

// Question is one question of the View.
type Question struct {
	Number  int     `json:"number"`
	Title   string  `json:"title"`
	Task    string  `json:"task"`
	Host    string  `json:"host"`
	Weight  int     `json:"weight"`
	Flagged bool    `json:"flagged"`
	Seconds float64 `json:"seconds"`
}

// Options configure New.
type Options struct {
	Exam Exam
	// NotesFile keeps the learner's notes and done marks, in the exam's state directory.
	NotesFile string
	// Graded is told the grade once the server has graded the exam (at the deadline or on the page's
	// request), so the command can print it.
	Graded func(*exam.Report, error)
	// Log receives what the server has to tell the learner's terminal (a failed request); nothing when nil.
	Log io.Writer
}

// Server is one exam page. It listens on 127.0.0.1 at a port of its own and serves once.
type Server struct {
	o     Options
	ln    net.Listener
	host  string
	token string
	// cookie is the cookie's name and session its value: the browser's proof that it came with the token.
	cookie, session string
	notes           *notes
	log             *log.Logger
	// end asks Serve to end the exam now (the page's End button), with the reason the terminals are told.
	end chan string

	mu        sync.Mutex
	spent     bool
	terminals map[*terminal]bool
	grading   bool
	graded    bool
	gradeErr  error
}

// New reads the notes and listens on a random loopback port, so URL is known before Serve.
func New(ctx context.Context, o Options) (*Server, error) {
	if o.Exam == nil || o.NotesFile == "" {
		return nil, errors.New("exam page: an exam and a notes file are required")
	}
	n, err := openNotes(o.NotesFile)
	if err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("exam page: listen on loopback: %w", err)
	}
	logTo := o.Log
	if logTo == nil {
		logTo = io.Discard
	}
	port := ln.Addr().(*net.TCPAddr).Port
	return &Server{o: o, ln: ln, host: ln.Addr().String(), token: rand.Text(), session: rand.Text(),
		// Cookies ignore the port: the name keeps two pages on this machine from overwriting each other's.
		cookie: "lab_exam_" + strconv.Itoa(port),
		notes:  n, log: log.New(logTo, "exam page: ", 0), terminals: map[*terminal]bool{}, end: make(chan string, 1)}, nil
}

// URL is the page's one-time link: the first visit trades its token for a cookie, and the link then works no
// more.
func (s *Server) URL() string { return "http://" + s.host + "/?token=" + s.token }

// Serve serves the page until ctx ends, and grades the exam at its deadline; it closes every terminal and the
// listener when it returns.
func (s *Server) Serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	v, err := s.o.Exam.View(ctx)
	if err != nil {
		return fmt.Errorf("exam page: %w", err)
	}
	if v.Running {
		go s.gradeAt(ctx, v.Deadline)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(s.ln) }()
	select {
	case err := <-errc:
		s.closeTerminals(websocket.StatusGoingAway, "the page has stopped")
		return fmt.Errorf("exam page: %w", err)
	case <-ctx.Done():
	}
	s.closeTerminals(websocket.StatusGoingAway, "the page has stopped")
	shutdown, done := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer done()
	if err := srv.Shutdown(shutdown); err != nil {
		return fmt.Errorf("exam page: stop serving: %w", err)
	}
	return nil
}

// gradeAt grades the exam at deadline, or when the page ends it sooner: time up is the end, whether or not
// the page is open.
func (s *Server) gradeAt(ctx context.Context, deadline time.Time) {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
		s.grade(ctx, "time is up")
	case why := <-s.end:
		s.grade(ctx, why)
	}
}

// grade closes the terminals first (why says why to the page), so nothing changes the cluster while it is
// graded, then grades once.
func (s *Server) grade(ctx context.Context, why string) {
	s.mu.Lock()
	if s.grading || s.graded {
		s.mu.Unlock()
		return
	}
	s.grading = true
	s.mu.Unlock()
	s.closeTerminals(StatusEnded, why)
	rep, err := s.o.Exam.Grade(ctx)
	s.mu.Lock()
	s.grading, s.graded, s.gradeErr = false, err == nil, err
	s.mu.Unlock()
	if err != nil {
		s.log.Printf("grading failed: %v", err)
	}
	if s.o.Graded != nil {
		s.o.Graded(rep, err)
	}
}

// closed says why no terminal may open now: the exam is being graded or has ended; "" while it runs.
func (s *Server) closed(v View) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.grading:
		return "the exam is being graded"
	case s.graded || !v.Running:
		return "the exam has ended"
	case !time.Now().Before(v.Deadline):
		return "time is up"
	}
	return ""
}
