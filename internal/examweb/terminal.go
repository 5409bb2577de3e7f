package examweb

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/creack/pty"
)

// StatusEnded closes a terminal's WebSocket when the exam ends under it (time is up, or it was graded): the
// page then waits for the result instead of offering to reconnect.
const StatusEnded websocket.StatusCode = 4000

// hangupGrace is how long a shell has to exit on SIGHUP before it is killed.
const hangupGrace = 3 * time.Second

// terminal is one of the page's terminals: a PTY running the exam's shell, its bytes carried over a WebSocket
// both ways. The page sends keystrokes (and pastes) as binary messages and its size as a text message
// {"cols":N,"rows":M}; the PTY's output comes back as binary messages.
type terminal struct {
	conn   *websocket.Conn
	pty    *os.File
	cmd    *exec.Cmd
	exited chan struct{}
	once   sync.Once
}

func (s *Server) handleTerminal(w http.ResponseWriter, r *http.Request) {
	v, err := s.o.Exam.View(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	if why := s.closed(v); why != "" {
		http.Error(w, why, http.StatusConflict)
		return
	}
	argv, env, err := s.o.Exam.Shell()
	if err != nil {
		s.fail(w, err)
		return
	}
	// Accept refuses a handshake whose Origin is not this page's, so no other site's script opens a shell.
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		s.log.Printf("terminal: %v", err)
		return
	}
	// A paste arrives as one message.
	conn.SetReadLimit(1 << 20)
	t, err := startTerminal(r.Context(), conn, argv, env)
	if err != nil {
		s.log.Print(err)
		_ = conn.Close(websocket.StatusInternalError, "the exam's terminal did not start; see lab's output")
		return
	}
	if !s.add(t) {
		t.close(StatusEnded, "the exam has ended")
	}
	defer s.remove(t)
	// The request's context lasts as long as this handler: the WebSocket's hijacked connection ends it no sooner.
	t.run(r.Context())
}

func startTerminal(ctx context.Context, conn *websocket.Conn, argv, env []string) (*terminal, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(append(os.Environ(), env...), "TERM=xterm-256color")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 80})
	if err != nil {
		return nil, fmt.Errorf("start the exam's terminal (%s): %w", argv[0], err)
	}
	t := &terminal{conn: conn, pty: f, cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(t.exited)
	}()
	return t, nil
}

// run carries bytes both ways until the shell exits or the page goes, then makes sure the shell is gone.
func (t *terminal) run(ctx context.Context) {
	pumped := make(chan struct{})
	go func() {
		defer close(pumped)
		t.pump(ctx)
		t.close(websocket.StatusNormalClosure, "the shell has exited")
	}()
	t.read(ctx)
	t.close(websocket.StatusNormalClosure, "the page closed the terminal")
	t.wait()
	_ = t.pty.Close()
	<-pumped
}

// pump sends the PTY's output to the page until the shell (and everything holding its terminal) is gone.
func (t *terminal) pump(ctx context.Context) {
	buf := make([]byte, 32<<10)
	for {
		n, err := t.pty.Read(buf)
		if n > 0 {
			if werr := t.conn.Write(ctx, websocket.MessageBinary, buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// size is the page's terminal size, which the PTY takes (TIOCSWINSZ) so full-screen programs fit.
type size struct {
	Cols uint16 `json:"cols"`
	Rows uint16 `json:"rows"`
}

// read writes the page's keystrokes to the PTY and applies its resizes, until the WebSocket closes.
func (t *terminal) read(ctx context.Context) {
	for {
		typ, data, err := t.conn.Read(ctx)
		if err != nil {
			return
		}
		if typ == websocket.MessageBinary {
			if _, err := t.pty.Write(data); err != nil {
				return
			}
			continue
		}
		var sz size
		if json.Unmarshal(data, &sz) == nil && sz.Cols > 0 && sz.Rows > 0 {
			_ = pty.Setsize(t.pty, &pty.Winsize{Cols: sz.Cols, Rows: sz.Rows})
		}
	}
}

// close hangs the shell up, as closing a terminal window does, and closes the WebSocket saying why; only the
// first call counts.
func (t *terminal) close(code websocket.StatusCode, why string) {
	t.once.Do(func() {
		hangup(t.cmd.Process)
		go func() { _ = t.conn.Close(code, why) }()
	})
}

// wait waits for the shell to exit, killing its process group when it ignores the hangup.
func (t *terminal) wait() {
	select {
	case <-t.exited:
	case <-time.After(hangupGrace):
		kill(t.cmd.Process)
		<-t.exited
	}
}

// add registers a terminal to be closed when the exam ends; false once it is ending.
func (s *Server) add(t *terminal) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.grading || s.graded {
		return false
	}
	s.terminals[t] = true
	return true
}

func (s *Server) remove(t *terminal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.terminals, t)
}

// closeTerminals closes every terminal and waits for their shells to exit, so no keystroke reaches the
// cluster after it returns.
func (s *Server) closeTerminals(code websocket.StatusCode, why string) {
	s.mu.Lock()
	var ts []*terminal
	for t := range s.terminals {
		ts = append(ts, t)
	}
	s.mu.Unlock()
	for _, t := range ts {
		t.close(code, why)
	}
	for _, t := range ts {
		t.wait()
	}
}
