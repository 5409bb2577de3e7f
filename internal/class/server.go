package class

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/cka-lab/lab/internal/state"
)

// instructorKeyFile keeps the instructor key in the data directory.
const instructorKeyFile = "instructor-key"

// DefaultAddr listens on every interface, so learners on the LAN can reach the instructor's machine.
const DefaultAddr = ":8787"

// tokenPattern keeps the class token safe to paste into a shell as part of JoinCommand.
var tokenPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// ServerOptions configures NewServer.
type ServerOptions struct {
	// Addr is the listen address, DefaultAddr when empty; port 0 picks a free port.
	Addr string
	// DataDir holds the class database. When it already holds a class, Resume must be set: that class resumes
	// with its plan, clock, token, learners and results, and Plan.ClassID must be empty or match. A new class
	// needs a DataDir without one (Archive moves it away), so no old token or learner key opens it.
	DataDir string
	// Resume continues the class DataDir holds, and fails when it holds none.
	Resume bool
	// Plan is the new class; ClassID, Title and StartedAt are filled in when empty.
	Plan Plan
	// Token is the one-time class token learners join with; generated when empty.
	Token string
	// Shared, when set, gives every learner a namespace on a shared cluster at join, where the server grades
	// their checks itself.
	Shared SharedCluster
	// CertFile and KeyFile are the server's certificate (PEM, leaf first) and key. When both are empty the
	// server makes a self-signed certificate and keeps it in DataDir: learners pin its fingerprint.
	CertFile, KeyFile string
	// PlainHTTP serves without TLS: learners' keys and shared-cluster tokens then cross the network readable.
	PlainHTTP bool
	// Limits bound what one machine on the LAN can ask of the server; DefaultLimits where left at zero.
	Limits Limits
	// Log receives what the server has to tell the instructor (a refused TLS handshake, a failed grading);
	// nothing when nil.
	Log io.Writer
}

// Server is one running class. It serves once: Serve closes its listener and database when it returns.
type Server struct {
	store         *store
	ln            net.Listener
	url           string
	token         string
	instructorKey string
	events        *hub
	shared        SharedCluster
	grading       *grading
	limits        Limits
	// results limits each learner's posts, guesses each client address's tries at a secret.
	results, guesses *limiters
	// joining holds the names being joined right now.
	joining map[string]bool
	log     *log.Logger
	keyFile string
	classID string
	// tls is the served certificate, nil when serving plain HTTP; fingerprint is its leaf's SHA-256.
	tls         *tls.Config
	fingerprint string

	// resumed is set when the server continues a stored class.
	resumed bool

	mu    sync.Mutex
	plan  Plan
	board *board
}

// planState is the plan as the server sends it, with the server's clock so clients can correct for skew.
type planState struct {
	Plan       Plan          `json:"plan"`
	ServerTime time.Time     `json:"serverTime"`
	TimeLeft   time.Duration `json:"timeLeftNs"`
}

// NewServer opens (or resumes) the class in o.DataDir and starts listening, so URL and JoinCommand are
// known before Serve.
func NewServer(ctx context.Context, o ServerOptions) (*Server, error) {
	if o.DataDir == "" {
		return nil, errors.New("class server needs a data directory")
	}
	if o.Token != "" && !tokenPattern.MatchString(o.Token) {
		return nil, errors.New("class token must be 1-64 letters, digits, dots, underscores or dashes, so the join command can be pasted into any shell")
	}
	limits := o.Limits.withDefaults()
	if err := limits.validate(); err != nil {
		return nil, err
	}
	st, err := openStore(o.DataDir)
	if err != nil {
		return nil, err
	}
	logTo := o.Log
	if logTo == nil {
		logTo = io.Discard
	}
	s := &Server{store: st, events: newHub(), board: newBoard(), shared: o.Shared, grading: newGrading(), limits: limits, joining: map[string]bool{},
		results: newLimiters(limits.Results, limits.ResultBurst), guesses: newLimiters(limits.Guesses, limits.GuessBurst), log: log.New(logTo, "class server: ", log.LstdFlags)}
	if err := s.resume(o); err != nil {
		return nil, errors.Join(err, st.close())
	}
	scheme := "http"
	if !o.PlainHTTP {
		c, err := serverCertificate(ctx, o.DataDir, o.CertFile, o.KeyFile)
		if err != nil {
			return nil, errors.Join(err, st.close())
		}
		scheme, s.fingerprint = "https", Fingerprint(c.Certificate[0])
		s.tls = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{c}}
	} else if o.CertFile != "" || o.KeyFile != "" {
		return nil, errors.Join(errors.New("a certificate and plain HTTP exclude each other: drop one"), st.close())
	}
	addr := cmp.Or(o.Addr, DefaultAddr)
	s.ln, err = (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("class server cannot listen on %s: %w", addr, err), st.close())
	}
	s.url = lanURL(ctx, scheme, s.ln.Addr())
	return s, nil
}

// resume loads the stored class, or starts the one in o, and rebuilds the scoreboard from stored results.
func (s *Server) resume(o ServerOptions) error {
	meta, found, err := s.store.loadMeta()
	if err != nil {
		return err
	}
	switch {
	case found && !o.Resume:
		return fmt.Errorf("data directory %s holds class %q: resume it (--resume), or start a new class, which archives it", o.DataDir, meta.Plan.ClassID)
	case !found && o.Resume:
		return fmt.Errorf("data directory %s holds no class to resume: drop --resume to start a new one", o.DataDir)
	case found && o.Plan.ClassID != "" && o.Plan.ClassID != meta.Plan.ClassID:
		return fmt.Errorf("data directory %s holds class %q, not %q: use another data directory for a new class",
			o.DataDir, meta.Plan.ClassID, o.Plan.ClassID)
	case !found:
		if meta.Plan, err = o.Plan.start(time.Now()); err != nil {
			return err
		}
		meta.Token, meta.InstructorKey = rand.Text()[:12], rand.Text()
	}
	meta.Token = cmp.Or(o.Token, meta.Token)
	if err := s.store.saveMeta(meta); err != nil {
		return err
	}
	s.plan, s.token, s.instructorKey, s.classID, s.resumed = meta.Plan, meta.Token, meta.InstructorKey, meta.Plan.ClassID, found
	s.keyFile = filepath.Join(o.DataDir, instructorKeyFile)
	if err := state.WriteFile(s.keyFile, []byte(s.instructorKey+"\n")); err != nil {
		return fmt.Errorf("save the instructor key: %w", err)
	}
	learners, err := s.store.learners()
	if err != nil {
		return err
	}
	for _, l := range learners {
		s.board.addLearner(l)
	}
	results, err := s.store.results()
	if err != nil {
		return err
	}
	for _, r := range results {
		s.board.apply(r)
	}
	return nil
}

// Serve answers learners and the scoreboard until ctx ends, then shuts down within five seconds.
func (s *Server) Serve(ctx context.Context) error {
	srv := &http.Server{
		Handler:           s.routes(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          s.log,
		// Request contexts end with ctx, which ends the long-lived event streams so shutdown is not held up.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	served := make(chan error, 1)
	go func() {
		if s.tls == nil {
			served <- srv.Serve(s.ln)
			return
		}
		// ServeTLS also offers HTTP/2, so a projector's scoreboard and the instructor's tabs share one connection.
		srv.TLSConfig = s.tls
		served <- srv.ServeTLS(s.ln, "", "")
	}()
	var err error
	select {
	case err = <-served:
		err = fmt.Errorf("class server at %s stopped: %w", s.url, err)
	case <-ctx.Done():
		// ctx is done: the shutdown gets a deadline of its own, not ctx's cancellation.
		stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if shutErr := srv.Shutdown(stop); shutErr != nil {
			err = fmt.Errorf("stop class server at %s: %w", s.url, shutErr)
		}
		// After Shutdown, Serve returns http.ErrServerClosed; anything else is worth saying.
		if serveErr := <-served; !errors.Is(serveErr, http.ErrServerClosed) {
			err = errors.Join(err, fmt.Errorf("class server at %s: %w", s.url, serveErr))
		}
	}
	s.grading.stopAll()
	if closeErr := s.store.close(); closeErr != nil {
		err = errors.Join(err, fmt.Errorf("close class data: %w", closeErr))
	}
	return err
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/join", s.handleJoin)
	mux.HandleFunc("GET /api/plan", s.handlePlan)
	mux.HandleFunc("POST /api/results", s.handleResult)
	mux.HandleFunc("POST /api/leave", s.handleLeave)
	mux.HandleFunc("POST /api/end", s.instructor(s.handleEnd))
	mux.HandleFunc("GET /api/events", s.handleEvents)
	mux.HandleFunc("POST /api/pause", s.instructor(s.handlePause))
	mux.HandleFunc("POST /api/resume", s.instructor(s.handleResume))
	mux.HandleFunc("POST /api/extend", s.instructor(s.handleExtend))
	mux.HandleFunc("POST /api/reveal-hint", s.instructor(s.handleRevealHint))
	mux.HandleFunc("GET /api/export.csv", s.instructor(s.handleExportCSV))
	mux.HandleFunc("GET /api/export.junit", s.instructor(s.handleExportJUnit))
	mux.HandleFunc("GET /api/session", s.handleSession)
	mux.HandleFunc("POST /login", s.handleLogin)
	mux.HandleFunc("POST /logout", s.handleLogout)
	mux.Handle("GET /", pageHandler())
	// Every handler bounds its own body; this bounds the ones that read none.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxResultBytes)
		mux.ServeHTTP(w, r)
	})
}

// Resumed says whether the server continues a class its data directory held, rather than a new one.
func (s *Server) Resumed() bool { return s.resumed }

// URL is the address learners join, e.g. https://192.168.1.20:8787.
func (s *Server) URL() string { return s.url }

// Token is the class token learners join with.
func (s *Server) Token() string { return s.token }

// InstructorKey unlocks the instructor endpoints: the login page takes it, API clients send it as a bearer token.
func (s *Server) InstructorKey() string { return s.instructorKey }

// InstructorKeyFile holds the instructor key (0600), so no URL and no screen has to show it.
func (s *Server) InstructorKeyFile() string { return s.keyFile }

// LoginURL is where the instructor signs in; it carries no secret.
func (s *Server) LoginURL() string { return s.url + "/login" }

// Fingerprint is the SHA-256 fingerprint of the server's certificate, "" when serving plain HTTP.
func (s *Server) Fingerprint() string { return s.fingerprint }

// JoinCommand is what the instructor shows the class: it carries the certificate's fingerprint, so learners
// reach this server and no other without any CA set up.
func (s *Server) JoinCommand() string {
	pin := ""
	if s.fingerprint != "" {
		pin = " --fingerprint " + s.fingerprint
	}
	return fmt.Sprintf("lab class join %s%s --token %s --name <your-name>", s.url, pin, s.token)
}

// Plan is the class plan as it stands now.
func (s *Server) Plan() Plan {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.plan.clone()
}

func (s *Server) planStateLocked(now time.Time) planState {
	return planState{Plan: s.plan.clone(), ServerTime: now, TimeLeft: s.plan.TimeLeft(now)}
}
