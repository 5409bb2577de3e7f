// Package ui prints one status line per step of long work, the way kind does: a spinner while the step
// runs on a terminal, then "✓ step (time)" or "✗ step". Piped output gets plain lines and no escape codes.
package ui

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/briandowns/spinner"
	"github.com/fatih/color"
	"github.com/mattn/go-isatty"
)

// Status reports the steps of one command.
type Status struct {
	w       io.Writer
	tty     bool
	spin    *spinner.Spinner
	current string
	started time.Time
}

// New writes to w; spinner and colour only when w is a terminal and NO_COLOR is unset.
func New(w io.Writer) *Status {
	s := &Status{w: w}
	if f, ok := w.(*os.File); ok && isatty.IsTerminal(f.Fd()) && !color.NoColor {
		s.tty = true
		s.spin = spinner.New(spinner.CharSets[14], 100*time.Millisecond, spinner.WithWriter(w))
	}
	return s
}

// Discard is a Status that prints nothing (library callers that report progress themselves).
func Discard() *Status { return &Status{w: io.Discard} }

// Start begins a step.
func (s *Status) Start(msg string) {
	s.current, s.started = msg, time.Now()
	if s.spin != nil {
		s.spin.Suffix = " " + msg
		s.spin.Start()
		return
	}
	if s.w != io.Discard && !s.tty {
		fmt.Fprintf(s.w, " • %s ...\n", msg)
	}
}

// Update shows detail beside the current step while it runs, on a terminal only: piped output keeps one
// line per step.
func (s *Status) Update(detail string) {
	if s.spin == nil || s.current == "" {
		return
	}
	suffix := " " + s.current
	if detail != "" {
		suffix += ": " + detail
	}
	s.spin.Lock()
	s.spin.Suffix = suffix
	s.spin.Unlock()
}

// End finishes the current step.
func (s *Status) End(ok bool) {
	if s.current == "" {
		return
	}
	if s.spin != nil {
		s.spin.Stop()
	}
	d := time.Since(s.started).Round(100 * time.Millisecond)
	mark := color.GreenString("✓")
	if !ok {
		mark = color.RedString("✗")
	}
	fmt.Fprintf(s.w, " %s %s (%s)\n", mark, s.current, d)
	s.current = ""
}

// Step runs f as one step.
func (s *Status) Step(msg string, f func() error) error {
	s.Start(msg)
	err := f()
	s.End(err == nil)
	return err
}

// Info prints a line between steps.
func (s *Status) Info(format string, args ...any) {
	fmt.Fprintf(s.w, format+"\n", args...)
}
