package class

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeWorkspaces hands out one namespace per learner and counts the credentials it issued.
type fakeWorkspaces struct {
	mu     sync.Mutex
	fail   error
	issued map[string]int
}

func (f *fakeWorkspaces) Provision(_ context.Context, learner string) (Workspace, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return Workspace{}, f.fail
	}
	if f.issued == nil {
		f.issued = map[string]int{}
	}
	ns := "lab-" + strings.ToLower(learner)
	f.issued[ns]++
	return Workspace{Namespace: ns, Kubeconfig: "token-" + ns}, nil
}

func TestJoinGivesEachLearnerAWorkspace(t *testing.T) {
	ws := &fakeWorkspaces{}
	s, _ := startServer(t, t.TempDir(), ServerOptions{Plan: testPlan(), Workspaces: ws})
	alice := mustJoin(t, s, "alice").Membership()
	if alice.Workspace == nil || alice.Workspace.Namespace != "lab-alice" || alice.Workspace.Kubeconfig != "token-lab-alice" {
		t.Fatalf("alice's workspace = %+v", alice.Workspace)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	again, _, err := Join(ctx, alice, s.Token())
	if err != nil {
		t.Fatalf("rejoin: %v", err)
	}
	if got := again.Membership().Workspace; got == nil || got.Namespace != "lab-alice" {
		t.Errorf("rejoin workspace = %+v, want lab-alice again", got)
	}
	if _, _, err := Join(ctx, Membership{URL: s.URL(), Fingerprint: s.Fingerprint(), Name: "ALICE"}, s.Token()); err == nil {
		t.Fatal("someone else joined as ALICE")
	}
	if ws.issued["lab-alice"] != 3 {
		t.Errorf("credentials issued for lab-alice = %d, want 3 (join, rejoin, refused join)", ws.issued["lab-alice"])
	}
}

func TestFailedWorkspaceLeavesTheNameFree(t *testing.T) {
	ws := &fakeWorkspaces{fail: errors.New("the API server is down")}
	s, _ := startServer(t, t.TempDir(), ServerOptions{Plan: testPlan(), Workspaces: ws})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, err := Join(ctx, Membership{URL: s.URL(), Fingerprint: s.Fingerprint(), Name: "bob"}, s.Token())
	wantOneLine(t, err, "cannot prepare a namespace for bob on the shared cluster: the API server is down")
	if learners, _ := s.store.learners(); len(learners) != 0 {
		t.Fatalf("a failed join stored %d learner(s)", len(learners))
	}

	ws.mu.Lock()
	ws.fail = nil
	ws.mu.Unlock()
	if bob := mustJoin(t, s, "bob").Membership(); bob.Workspace == nil || bob.Workspace.Namespace != "lab-bob" {
		t.Errorf("bob's workspace after the cluster came back = %+v", bob.Workspace)
	}
}

func TestOwnClusterClassHasNoWorkspace(t *testing.T) {
	s, _ := startServer(t, t.TempDir(), ServerOptions{Plan: testPlan()})
	if m := mustJoin(t, s, "carol").Membership(); m.Workspace != nil {
		t.Errorf("workspace without a shared cluster: %+v", m.Workspace)
	}
}
