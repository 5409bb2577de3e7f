package docker

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeDocker puts a docker on PATH that runs script with the call's arguments.
func fakeDocker(t *testing.T, script string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, Binary), []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func TestOutputAndErrors(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		timeout      time.Duration
		args         []string
		wantOut      string
		wantErr      string
		timedOut     bool
		exitCode     int
	}{
		{name: "stdout only", script: `echo "out $*"; echo "noise" >&2`, args: []string{"ps", "-a"}, wantOut: "out ps -a\n"},
		{name: "stderr in the error", script: `echo "Error response from daemon: cannot stop container: x" >&2; exit 1`,
			args: []string{"stop", "x"}, wantErr: "docker stop x: Error response from daemon: cannot stop container: x: exit status 1", exitCode: 1},
		{name: "several stderr lines on one line", script: `printf 'a\nb\n' >&2; exit 3`, args: []string{"load"},
			wantErr: "docker load: a; b: exit status 3", exitCode: 3},
		{name: "a script argument is elided", script: `exit 2`, args: []string{"exec", "n", "sh", "-c", "line1\nline2", "sh"},
			wantErr: "docker exec n sh -c … sh: exit status 2", exitCode: 2},
		{name: "own timeout", script: `exec sleep 5`, timeout: 100 * time.Millisecond, args: []string{"info"},
			wantErr: "docker info: no answer within 100ms", timedOut: true, exitCode: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fakeDocker(t, tc.script)
			out, err := Output(context.Background(), tc.timeout, tc.args...)
			if string(out) != tc.wantOut {
				t.Errorf("stdout %q, want %q", out, tc.wantOut)
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil || err.Error() != tc.wantErr {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			var de *Error
			if !errors.As(err, &de) || TimedOut(err) != tc.timedOut {
				t.Errorf("TimedOut of %#v, want %v", err, tc.timedOut)
			}
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.ExitCode() != tc.exitCode {
				t.Errorf("exit code %d, want %d", ee.ExitCode(), tc.exitCode)
			}
		})
	}
}

// A caller's own deadline is not the call's timeout: the error says what ended it.
func TestCallerDeadline(t *testing.T) {
	fakeDocker(t, `exec sleep 5`)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := Run(ctx, time.Minute, "pull", "x")
	var de *Error
	if !errors.As(err, &de) || de.TimedOut || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the caller's deadline", err)
	}
}

func TestStdinStderrAndCap(t *testing.T) {
	fakeDocker(t, `cat; head -c 40000 /dev/zero | tr '\0' e >&2; exit 1`)
	var out, live strings.Builder
	err := Call{Timeout: time.Minute, Stdin: strings.NewReader("in"), Stdout: &out, Stderr: &live}.Run(context.Background(), "exec", "-i", "n")
	if out.String() != "in" {
		t.Errorf("stdout %q, want the input", out.String())
	}
	if live.Len() != 40000 {
		t.Errorf("live stderr got %d bytes, want all 40000", live.Len())
	}
	if got := len(Stderr(err)); got != stderrCap {
		t.Errorf("the error keeps %d bytes of stderr, want %d", got, stderrCap)
	}
}

func TestStream(t *testing.T) {
	fakeDocker(t, `echo archive; [ "$2" = ok ] || { echo "No such image: $2" >&2; exit 1; }`)
	r, err := Call{Timeout: time.Minute}.Stream(context.Background(), "save", "ok")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	if string(b) != "archive\n" || r.Close() != nil {
		t.Errorf("stream %q", b)
	}
	r, err = Call{Timeout: time.Minute}.Stream(context.Background(), "save", "gone")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(r)
	if err := r.Close(); err == nil || err.Error() != "docker save gone: No such image: gone: exit status 1" {
		t.Errorf("close: %v", err)
	}
}

func TestPath(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("PATH", empty)
	if _, err := Path(); err == nil {
		t.Error("Path found a docker on an empty PATH")
	}
	fakeDocker(t, "exit 0")
	if p, err := Path(); err != nil || filepath.Base(p) != Binary {
		t.Errorf("Path = %q, %v", p, err)
	}
}

// TestOnlyThisPackageRunsDocker fails when lab code outside this package starts the docker CLI itself: every
// call goes through here, with its timeout and docker's stderr in its error.
func TestOnlyThisPackageRunsDocker(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || path == filepath.Join(root, "internal", "docker")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "Command" && sel.Sel.Name != "CommandContext" && sel.Sel.Name != "LookPath") {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "exec" {
				return true
			}
			for _, a := range call.Args {
				if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.STRING && lit.Value == `"docker"` {
					t.Errorf("%s: runs docker itself; use internal/docker", fset.Position(call.Pos()))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
