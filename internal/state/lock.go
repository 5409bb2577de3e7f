package state

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// Lock is held by every command that changes a cluster, so two lab commands never inject at once.
type Lock struct {
	fl    *flock.Flock
	owner string
}

// LockCluster takes the cluster's lock, waiting up to wait for a running command to finish.
func (s *Store) LockCluster(ctx context.Context, cluster string, wait time.Duration) (*Lock, error) {
	path := s.Path(cluster, "lock")
	if err := os.MkdirAll(s.ClusterDir(cluster), 0o700); err != nil {
		return nil, err
	}
	fl := flock.New(path)
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	ok, err := fl.TryLockContext(waitCtx, 200*time.Millisecond)
	if err != nil && waitCtx.Err() == nil {
		return nil, fmt.Errorf("lock cluster %s: %w", cluster, err)
	}
	// Ended by the caller (Ctrl-C), not by the wait running out: the cluster may well be free.
	if !ok && ctx.Err() != nil {
		return nil, fmt.Errorf("interrupted while waiting for the lock on cluster %s: %w", cluster, ctx.Err())
	}
	if !ok {
		holder, _ := os.ReadFile(path + ".owner")
		who := strings.TrimSpace(string(holder))
		if who == "" {
			who = "another lab command"
		}
		return nil, fmt.Errorf("cluster %s is busy: %s is still running; wait for it to finish, or stop it, and run your command again", cluster, who)
	}
	// The owner file is what the busy error says: the command as typed (lab, not the binary's path) and since
	// when, so the learner can find it in their terminals and judge whether it is stuck.
	args := append([]string{filepath.Base(os.Args[0])}, os.Args[1:]...)
	owner := fmt.Sprintf("pid %d (%s, since %s)", os.Getpid(), strings.Join(args, " "), time.Now().Format(time.TimeOnly))
	_ = WriteFile(path+".owner", []byte(owner+"\n"))
	return &Lock{fl: fl, owner: path + ".owner"}, nil
}

// Unlock releases the lock.
func (l *Lock) Unlock() error {
	_ = os.Remove(l.owner)
	return l.fl.Unlock()
}
