package class

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/cka-lab/lab/internal/state"
)

// Joined is the class this machine joined: the membership, the plan as last seen, and the learner's place in it.
type Joined struct {
	Membership Membership `json:"membership"`
	Plan       Plan       `json:"plan"`
	// Current is the index in Plan.Scenarios of the scenario the learner is on.
	Current int `json:"current"`
	// Cluster is the lab cluster the class's scenarios run on: attempts on another cluster of this machine are
	// not the class's, and are not reported to it.
	Cluster string `json:"cluster,omitempty"`
}

// ErrNotJoined is what the class commands say on a machine that joined no class.
var ErrNotJoined = errors.New("this machine is not in a class: join one with the join command your instructor shows (`lab class join URL --fingerprint SHA256 --token TOKEN --name NAME`)")

// Scenario is the plan's scenario the learner is on, "" when the place is out of the plan.
func (j *Joined) Scenario() string {
	if j.Current < 0 || j.Current >= len(j.Plan.Scenarios) {
		return ""
	}
	return j.Plan.Scenarios[j.Current]
}

// SharedClusterName is the name lab keeps a shared cluster's namespace under in its state directory, apart
// from any kind cluster of the same name; "" when the class runs on the learner's own cluster.
func (j *Joined) SharedClusterName() string {
	if j.Membership.Workspace == nil {
		return ""
	}
	return "shared-" + j.Membership.Workspace.Namespace
}

// joinedFile holds the class this machine joined, in lab's state directory: it carries the learner's key.
const joinedFile = "class.json"

// lockWait bounds the wait for another class command; a join on a shared cluster holds the lock while the
// server prepares the learner's namespace, so the bound is the join's.
const lockWait = JoinTimeout + 10*time.Second

// Local is the class membership of one machine, in class.json of lab's state directory. Reads need no lock
// (every write replaces the file at once); every change holds the file's lock from read to write, so two
// class commands at once (`lab class next` and `lab class status`) never lose each other's change.
type Local struct{ st *state.Store }

// LocalIn is the membership kept in st.
func LocalIn(st *state.Store) Local { return Local{st: st} }

// Path is the membership file.
func (l Local) Path() string { return filepath.Join(l.st.Root(), joinedFile) }

// Read returns the class this machine joined, nil when none.
func (l Local) Read() (*Joined, error) {
	b, err := os.ReadFile(l.Path())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read class membership: %w", err)
	}
	var j Joined
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("read class membership %s (`lab class leave` forgets it): %w", l.Path(), err)
	}
	return &j, nil
}

// Current is the class this machine joined, ErrNotJoined when none.
func (l Local) Current() (*Joined, error) {
	j, err := l.Read()
	if err == nil && j == nil {
		err = ErrNotJoined
	}
	return j, err
}

// Update changes the joined class under the lock: change sees the membership as it is on disk now and
// returns the one to keep, or nil to forget the class. An error from change leaves the file as it was.
func (l Local) Update(ctx context.Context, change func(j *Joined) (*Joined, error)) (*Joined, error) {
	unlock, err := l.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	cur, err := l.Read()
	if err != nil {
		return nil, err
	}
	next, err := change(cur)
	if err != nil {
		return nil, err
	}
	if next == nil {
		if err := os.Remove(l.Path()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("forget the class: %w", err)
		}
		return nil, nil
	}
	return next, l.write(next)
}

func (l Local) write(j *Joined) error {
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return fmt.Errorf("encode class membership: %w", err)
	}
	if err := state.WriteFile(l.Path(), append(b, '\n')); err != nil {
		return fmt.Errorf("save class membership: %w", err)
	}
	return nil
}

// lock takes class.json's lock, waiting for another class command to finish.
func (l Local) lock(ctx context.Context) (func(), error) {
	if err := os.MkdirAll(l.st.Root(), 0o700); err != nil {
		return nil, fmt.Errorf("create lab's state directory: %w", err)
	}
	fl := flock.New(l.Path() + ".lock")
	waitCtx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	ok, err := fl.TryLockContext(waitCtx, 20*time.Millisecond)
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("wait for the class membership: %w", ctx.Err())
	case err != nil && waitCtx.Err() == nil:
		return nil, fmt.Errorf("lock the class membership: %w", err)
	case !ok:
		return nil, fmt.Errorf("another `lab class` command is still changing this machine's class membership after %s: wait for it and try again", lockWait)
	}
	return func() { _ = fl.Unlock() }, nil
}

// Join joins the class at m.URL as m.Name (pinning m.Fingerprint), or takes the learner back into the class
// this machine is in when the name is theirs, and keeps the membership for cluster. A machine in one class
// under one name joins no other.
func (l Local) Join(ctx context.Context, m Membership, token, cluster string) (*Joined, error) {
	return l.Update(ctx, func(prev *Joined) (*Joined, error) {
		current := 0
		switch {
		case prev == nil:
			m.LearnerKey = ""
		case strings.EqualFold(prev.Membership.Name, m.Name):
			m.LearnerKey, current = prev.Membership.LearnerKey, prev.Current
			m.Fingerprint = cmp.Or(m.Fingerprint, prev.Membership.Fingerprint)
		default:
			return nil, fmt.Errorf("this machine is in class %q as %s: `lab class leave` first", prev.Plan.Title, prev.Membership.Name)
		}
		c, plan, err := Join(ctx, m, token)
		if err != nil {
			return nil, err
		}
		return &Joined{Membership: c.Membership(), Plan: plan, Current: current, Cluster: cluster}, nil
	})
}

// SaveWorkspace writes the learner's kubeconfig for the shared cluster (0600: it holds their token) where
// lab attaches the shared cluster from, and returns its path.
func (l Local) SaveWorkspace(j *Joined) (string, error) {
	path := l.WorkspaceKubeconfig(j)
	if err := state.WriteFile(path, []byte(j.Membership.Workspace.Kubeconfig)); err != nil {
		return "", fmt.Errorf("save the shared cluster's kubeconfig: %w", err)
	}
	return path, nil
}

// WorkspaceKubeconfig is where SaveWorkspace keeps the learner's kubeconfig.
func (l Local) WorkspaceKubeconfig(j *Joined) string {
	return l.st.Path(j.SharedClusterName(), "kubeconfig")
}

// Report posts results of the class's scenarios made on the class's cluster; results of other scenarios, or
// from another lab cluster of this machine, are not the class's and are dropped. It stops at the first
// refusal, which it returns.
func (j *Joined) Report(ctx context.Context, cluster string, rs ...Result) error {
	if j.Cluster != "" && j.Cluster != cluster {
		return nil
	}
	c := NewClient(j.Membership)
	for _, r := range rs {
		if !j.Plan.HasScenario(r.Scenario) {
			continue
		}
		if err := c.Post(ctx, r); err != nil {
			return err
		}
	}
	return nil
}
