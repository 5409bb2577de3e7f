package commands

import (
	"bytes"
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The first interrupt cancels the command and leaves it to stop; a second, of either kind, exits at once with
// 130 and one line.
func TestSecondInterruptExitsAtOnce(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	exited := make(chan int, 1)
	var errOut bytes.Buffer
	returned := make(chan struct{})
	go func() {
		onInterrupt(sigs, done, cancel, &errOut, func(code int) { exited <- code })
		close(returned)
	}()

	sigs <- os.Interrupt
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the first interrupt did not cancel the command")
	}
	select {
	case code := <-exited:
		t.Fatalf("the first interrupt exited (%d); it must leave the command to stop", code)
	case <-time.After(50 * time.Millisecond):
	}

	sigs <- syscall.SIGTERM
	select {
	case code := <-exited:
		if code != 130 {
			t.Errorf("exit code %d, want 130", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second interrupt did not exit")
	}
	<-returned
	if msg := errOut.String(); strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "error: interrupted again") || !strings.Contains(msg, "`lab status`") {
		t.Errorf("said %q, want one line saying what happened and where to look", msg)
	}
}

// A command that ends, interrupted or not, stops the watch: a later signal is no longer lab's to handle.
func TestInterruptWatchEndsWithTheCommand(t *testing.T) {
	for _, interrupted := range []bool{false, true} {
		sigs := make(chan os.Signal, 2)
		done := make(chan struct{})
		returned := make(chan struct{})
		go func() {
			onInterrupt(sigs, done, func() {}, &bytes.Buffer{}, func(code int) { t.Errorf("exited %d after the command ended", code) })
			close(returned)
		}()
		if interrupted {
			sigs <- os.Interrupt
		}
		close(done)
		select {
		case <-returned:
		case <-time.After(5 * time.Second):
			t.Fatalf("interrupted %t: the watch outlived the command", interrupted)
		}
	}
}
