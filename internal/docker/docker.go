// Package docker runs the docker CLI for all of lab: every call is bounded by its context and a timeout, and a
// failed call's error carries what docker printed on stderr, so no caller loses the daemon's reason.
package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Binary is the CLI lab and kind's docker provider both call.
const Binary = "docker"

// Timeouts for the kinds of call lab makes. A call that outlives its timeout is killed and says so.
const (
	// Quick bounds questions the daemon answers from memory: inspect, ps, a short exec in a node.
	Quick = 30 * time.Second
	// Lifecycle bounds starting or stopping containers: a stop waits out the container's grace period first.
	Lifecycle = 2 * time.Minute
	// Transfer bounds moving images: a pull, or a save or load of the node image (about 1 GB).
	Transfer = 30 * time.Minute
	// Interactive leaves a call bounded by its context alone: only for a command the learner runs through
	// `lab ssh`, which takes as long as the learner wants.
	Interactive time.Duration = 0
)

// waitDelay bounds how long a killed docker's output pipes may stay open (held by a child it left behind).
const waitDelay = 5 * time.Second

// Path finds the docker CLI on PATH.
func Path() (string, error) {
	return exec.LookPath(Binary)
}

// Error is a docker call that failed: its arguments, what docker printed on stderr, and the cause (an
// *exec.ExitError, or the context's error when the call was cut short).
type Error struct {
	Args    []string
	Stderr  string
	Timeout time.Duration
	// TimedOut is set when the call's own timeout, not its caller's context, ended it.
	TimedOut bool
	Err      error
}

func (e *Error) Error() string {
	cmd := Binary + " " + shortArgs(e.Args)
	if e.TimedOut {
		return fmt.Sprintf("%s: no answer within %s", cmd, e.Timeout)
	}
	if e.Stderr != "" {
		return fmt.Sprintf("%s: %s: %v", cmd, strings.ReplaceAll(e.Stderr, "\n", "; "), e.Err)
	}
	return fmt.Sprintf("%s: %v", cmd, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Stderr is what docker printed on stderr for a failed call, or "" when err is not a docker call's.
func Stderr(err error) string {
	var de *Error
	if errors.As(err, &de) {
		return de.Stderr
	}
	return ""
}

// TimedOut says whether err is a docker call ended by its own timeout.
func TimedOut(err error) bool {
	var de *Error
	return errors.As(err, &de) && de.TimedOut
}

// shortArgs names a call in one line: a script or other long argument given to `docker exec` is elided.
func shortArgs(args []string) string {
	const maxArg, maxArgs = 64, 8
	out := make([]string, 0, min(len(args), maxArgs+1))
	for i, a := range args {
		if i == maxArgs {
			out = append(out, "…")
			break
		}
		if len(a) > maxArg || strings.Contains(a, "\n") {
			a = "…"
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}

// Call is one docker invocation's plumbing; the zero value runs with no input, keeps stdout for Output, and
// has no timeout beyond the context (give one: see the constants above).
type Call struct {
	Timeout time.Duration
	Stdin   io.Reader
	// Stdout receives docker's standard output (Run); Output collects it instead.
	Stdout io.Writer
	// Stderr also receives what docker prints on stderr, as it prints it (the error keeps it either way).
	Stderr io.Writer
}

// Run runs docker with args and waits for it.
func (c Call) Run(ctx context.Context, args ...string) error {
	ctx, cancel := c.context(ctx)
	defer cancel()
	cmd, stderr := c.command(ctx, args)
	return c.result(ctx, args, cmd.Run(), stderr)
}

// Output runs docker with args and returns its standard output.
func (c Call) Output(ctx context.Context, args ...string) ([]byte, error) {
	var out bytes.Buffer
	c.Stdout = &out
	err := c.Run(ctx, args...)
	return out.Bytes(), err
}

// Stream starts docker with args and returns its standard output as it comes; Close waits for docker and
// reports how the call ended. Closing before the end stops a docker whose reader gave up early.
func (c Call) Stream(ctx context.Context, args ...string) (io.ReadCloser, error) {
	ctx, cancel := c.context(ctx)
	cmd, stderr := c.command(ctx, args)
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, c.result(ctx, args, err, stderr)
	}
	wait := func() error {
		defer cancel()
		return c.result(ctx, args, cmd.Wait(), stderr)
	}
	return &stream{ReadCloser: out, wait: wait}, nil
}

type stream struct {
	io.ReadCloser
	wait func() error
}

func (s *stream) Close() error {
	closeErr := s.ReadCloser.Close()
	if err := s.wait(); err != nil {
		return err
	}
	if closeErr != nil && !errors.Is(closeErr, io.ErrClosedPipe) && !errors.Is(closeErr, os.ErrClosed) {
		return closeErr
	}
	return nil
}

// errTimeout is the cause a call's own timeout gives its context, told apart from its caller's deadline.
var errTimeout = errors.New("docker call timed out")

func (c Call) context(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.Timeout > 0 {
		return context.WithTimeoutCause(ctx, c.Timeout, errTimeout)
	}
	return context.WithCancel(ctx)
}

func (c Call) command(ctx context.Context, args []string) (*exec.Cmd, *cappedBuffer) {
	cmd := exec.CommandContext(ctx, Binary, args...)
	cmd.WaitDelay = waitDelay
	cmd.Stdin, cmd.Stdout = c.Stdin, c.Stdout
	stderr := &cappedBuffer{}
	cmd.Stderr = stderr
	if c.Stderr != nil {
		cmd.Stderr = io.MultiWriter(stderr, c.Stderr)
	}
	return cmd, stderr
}

// stderrCap bounds the stderr an error keeps: docker's reasons are a line or two, a learner's session is not.
const stderrCap = 16 << 10

// cappedBuffer keeps the first stderrCap bytes written to it and drops the rest.
type cappedBuffer struct{ bytes.Buffer }

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := stderrCap - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// result turns how a call ended into its error: nil, or an *Error with docker's stderr.
func (c Call) result(ctx context.Context, args []string, err error, stderr *cappedBuffer) error {
	if err == nil {
		return nil
	}
	e := &Error{Args: args, Stderr: strings.TrimSpace(stderr.String()), Timeout: c.Timeout, Err: err}
	if cerr := ctx.Err(); cerr != nil {
		e.TimedOut = errors.Is(context.Cause(ctx), errTimeout)
		e.Err = fmt.Errorf("%w (%v)", cerr, err)
	}
	return e
}

// Output runs docker with args, bounded by timeout, and returns its standard output.
func Output(ctx context.Context, timeout time.Duration, args ...string) ([]byte, error) {
	return Call{Timeout: timeout}.Output(ctx, args...)
}

// Run runs docker with args, bounded by timeout.
func Run(ctx context.Context, timeout time.Duration, args ...string) error {
	return Call{Timeout: timeout}.Run(ctx, args...)
}
