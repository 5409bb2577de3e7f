package state

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func TestWriteReadMode(t *testing.T) {
	s := At(t.TempDir())
	if err := s.Write("lab", "cluster.json", map[string]string{"id": "x"}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(s.Path("lab", "cluster.json"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	var got map[string]string
	if err := s.Read("lab", "cluster.json", &got); err != nil || got["id"] != "x" {
		t.Fatalf("read back %v, %v", got, err)
	}
	if err := s.Read("lab", "missing.json", &got); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing record: %v", err)
	}
}

func TestLockExcludes(t *testing.T) {
	s := At(t.TempDir())
	l, err := s.LockCluster(context.Background(), "lab", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// flock locks belong to the open file description, so a second Flock in this process contends too.
	_, err = s.LockCluster(context.Background(), "lab", 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "cluster lab is busy: pid") {
		t.Fatalf("second lock: %v", err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	l2, err := s.LockCluster(context.Background(), "lab", time.Second)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	_ = l2.Unlock()
}

func TestClearClusterKeepsTheLock(t *testing.T) {
	s := At(t.TempDir())
	l, err := s.LockCluster(context.Background(), "lab", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Unlock() }()
	for _, f := range []string{"baseline.json", "attempt.json", "checks/r/report.json"} {
		if err := WriteFile(s.Path("lab", f), []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.ClearCluster("lab"); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(s.ClusterDir("lab"))
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if strings.Join(left, ",") != "lock,lock.owner" {
		t.Errorf("left %v, want only the lock", left)
	}
	if err := s.ClearCluster("never-made"); err != nil {
		t.Errorf("clearing a cluster with no state: %v", err)
	}
}

func TestLockWaitInterruptedIsNotBusy(t *testing.T) {
	s := At(t.TempDir())
	l, err := s.LockCluster(context.Background(), "lab", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Unlock() }()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond) // Ctrl-C during a long wait
	defer cancel()
	_, err = s.LockCluster(ctx, "lab", time.Minute)
	if !errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "busy") {
		t.Fatalf("an interrupted wait says so, not busy: %v", err)
	}
}

// A state file cut short (a full disk) or edited by hand is one line that names it and says what to run; the
// way out for each file is a command that works without it.
func TestCorruptFileSaysTheWayOut(t *testing.T) {
	s := At(t.TempDir())
	for file, way := range map[string]string{
		"attempt.json":     "run `lab reset --name lab`",
		"baseline.json":    "`lab cluster delete --name lab && lab cluster create --name lab`",
		"cluster.json":     "`kind delete cluster --name lab`, then run `lab cluster create --name lab`",
		"exam.json":        "delete it, which ends the exam, then run `lab reset --name lab`",
		"exam-report.json": "delete it: lab does without it",
	} {
		if err := WriteFile(s.Path("lab", file), []byte(`{"scenario": "bad-im`)); err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		err := s.Read("lab", file, &v)
		var corrupt *CorruptError
		if !errors.As(err, &corrupt) || corrupt.Path != s.Path("lab", file) {
			t.Fatalf("%s: %v, want a CorruptError naming the file", file, err)
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "lab's state file "+s.Path("lab", file)+" is corrupt (unexpected end of JSON input): ") ||
			!strings.Contains(msg, way) || strings.Contains(msg, "\n") {
			t.Errorf("%s: %q, want one line naming the file and saying %q", file, msg, way)
		}
	}
}
