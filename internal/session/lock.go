package session

import (
	"context"
	"os"
	"time"

	"github.com/cka-lab/lab/internal/state"
)

// lockWait is how long a command waits for another lab command on the same cluster: $LAB_LOCK_WAIT (a
// duration), else 10s.
func lockWait() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("LAB_LOCK_WAIT")); err == nil && d >= 0 {
		return d
	}
	return 10 * time.Second
}

// Lock takes cluster's lock for a whole command: every command that changes the cluster or its attempt takes
// it here and holds it to its end, so two never interleave (a check saving the attempt it read before a hint
// was taken would lose the hint). It waits lockWait for the holder to finish, then fails with one line naming
// the holder. unlock releases it.
func Lock(ctx context.Context, st *state.Store, cluster string) (unlock func(), err error) {
	l, err := st.LockCluster(ctx, cluster, lockWait())
	if err != nil {
		return nil, err
	}
	return func() { _ = l.Unlock() }, nil
}
