package class

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/cka-lab/lab/internal/state"
)

func TestJoinedIsPrivate(t *testing.T) {
	local := LocalIn(state.At(t.TempDir()))
	ctx := context.Background()
	if _, err := local.Current(); !errors.Is(err, ErrNotJoined) {
		t.Fatalf("before joining: %v, want ErrNotJoined", err)
	}
	keep := &Joined{Membership: Membership{Name: "alice", LearnerKey: "secret"}, Plan: testPlan()}
	if _, err := local.Update(ctx, func(*Joined) (*Joined, error) { return keep, nil }); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(local.Path())
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("%s is %v, want 0600: it holds the learner's key", local.Path(), info.Mode().Perm())
	}
	j, err := local.Current()
	if err != nil || j.Membership.Name != "alice" || j.Scenario() != "broken-dns" {
		t.Fatalf("read back %+v, %v", j, err)
	}
	if _, err := local.Update(ctx, func(*Joined) (*Joined, error) { return nil, errors.New("refused") }); err == nil {
		t.Fatal("a refused change reported success")
	}
	if j, _ := local.Current(); j == nil || j.Membership.Name != "alice" {
		t.Fatalf("a refused change touched the file: %+v", j)
	}
	if _, err := local.Update(ctx, func(*Joined) (*Joined, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := local.Current(); !errors.Is(err, ErrNotJoined) {
		t.Errorf("after leaving: %v, want ErrNotJoined", err)
	}
}

// TestJoinedChangesAreNotLost runs many read-modify-write changes at once, as `lab class next` and
// `lab class status` in two terminals would: with the lock, every one of them lands.
func TestJoinedChangesAreNotLost(t *testing.T) {
	local := LocalIn(state.At(t.TempDir()))
	ctx := context.Background()
	if _, err := local.Update(ctx, func(*Joined) (*Joined, error) { return &Joined{Plan: testPlan()}, nil }); err != nil {
		t.Fatal(err)
	}
	const writers = 20
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			_, err := local.Update(ctx, func(j *Joined) (*Joined, error) {
				j.Current++
				return j, nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if j, err := local.Current(); err != nil || j.Current != writers {
		t.Errorf("after %d changes at once: %+v, %v", writers, j, err)
	}
}

func TestJoinedLockWaitEndsWithTheContext(t *testing.T) {
	local := LocalIn(state.At(t.TempDir()))
	held := make(chan struct{})
	release := make(chan struct{})
	go func() {
		_, _ = local.Update(context.Background(), func(j *Joined) (*Joined, error) {
			close(held)
			<-release
			return nil, nil
		})
	}()
	<-held
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := local.Update(ctx, func(j *Joined) (*Joined, error) { return j, nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("a wait ended by the caller: %v, want context.Canceled, not \"busy\"", err)
	}
}
