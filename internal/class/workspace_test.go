package class

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeWorkspaces hands out one namespace per learner, counts the credentials it issued, and grades a
// namespace as fixed once the test says so.
type fakeWorkspaces struct {
	mu      sync.Mutex
	fail    error
	issued  map[string]int
	fixed   map[string]bool
	graded  chan string
	revoked []string
}

func (f *fakeWorkspaces) Revoke(_ context.Context, namespace string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.revoked = append(f.revoked, namespace)
	return nil
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
	return Workspace{Namespace: ns, Kubeconfig: sentKubeconfig(ns)}, nil
}

func (f *fakeWorkspaces) Grade(_ context.Context, namespace, scenario string, seed int64) ([]CheckEvidence, error) {
	f.mu.Lock()
	fixed := f.fixed[namespace]
	f.mu.Unlock()
	defer func() {
		if f.graded != nil {
			f.graded <- namespace + "/" + scenario
		}
	}()
	if seed != testPlan().Seed {
		return nil, fmt.Errorf("graded with seed %d, not the class's", seed)
	}
	evidence := "2/2 Pods of web in " + namespace + " are Ready"
	if !fixed {
		evidence = "pod web-1 in " + namespace + ": ImagePullBackOff"
	}
	return []CheckEvidence{{Name: "Pods of web are Ready", Points: 3, Passed: fixed, Evidence: evidence},
		{Name: "the Service answers", Points: 1, Passed: true, Collateral: true, Evidence: "200"}}, nil
}

func (f *fakeWorkspaces) fix(namespace string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fixed == nil {
		f.fixed = map[string]bool{}
	}
	f.fixed[namespace] = true
}

// TestSharedClusterIsGradedByTheServer posts a forged pass from a learner whose namespace is still broken:
// the server grades the namespace itself, and the board shows the cluster's verdict, marked as the server's.
func TestSharedClusterIsGradedByTheServer(t *testing.T) {
	ws := &fakeWorkspaces{graded: make(chan string, 10)}
	s, _ := startServer(t, t.TempDir(), ServerOptions{Plan: testPlan(), Shared: ws})
	alice := mustJoin(t, s, "alice")
	waitGraded := func(want string) {
		t.Helper()
		select {
		case got := <-ws.graded:
			if got != want {
				t.Fatalf("graded %s, want %s", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the server did not grade %s", want)
		}
	}
	cellOf := func() cell {
		t.Helper()
		// The grade is recorded right after Grade returns; the board may lag it by a moment.
		deadline := time.Now().Add(5 * time.Second)
		for {
			c := s.boardState().Learners[0].Cells["crashloop"]
			if c.Source == SourceServer || time.Now().After(deadline) {
				return c
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	forged := check("crashloop", true, 10)
	forged.HintsTaken = 1
	status, body := request(t, s, "POST", "/api/results", alice.Membership().LearnerKey, signedBody(t, s, alice.Membership().LearnerKey, "", withLearner(forged, "alice")))
	if status != http.StatusAccepted || !strings.Contains(string(body), "grades namespace lab-alice itself") {
		t.Fatalf("a check on a shared cluster: %d %s, want 202", status, body)
	}
	waitGraded("lab-alice/crashloop")
	if c := cellOf(); c.Status != statusFailed || c.Source != SourceServer || c.Score != 1 || c.MaxScore != 4 || c.ChecksPassed != 1 || c.HintsTaken != 1 {
		t.Errorf("alice's forged pass on a broken namespace: %+v, want the server's failed grade", c)
	}
	results := storedResults(t, s)
	if last := results[len(results)-1]; last.Source != SourceServer || len(last.Checks) != 2 || !strings.Contains(last.Checks[0].Evidence, "ImagePullBackOff") {
		t.Errorf("stored grade = %+v, want the server's with its evidence", last)
	}

	ws.fix("lab-alice")
	mustPost(t, alice, check("crashloop", true, 10))
	waitGraded("lab-alice/crashloop")
	deadline := time.Now().Add(5 * time.Second)
	for s.boardState().Learners[0].Cells["crashloop"].Status != statusPassed && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if c := s.boardState().Learners[0].Cells["crashloop"]; c.Status != statusPassed || c.Source != SourceServer || c.Score != 4 {
		t.Errorf("alice's pass on a fixed namespace: %+v", c)
	}
	for _, r := range storedResults(t, s) {
		if r.Event == EventCheck && r.Source != SourceServer {
			t.Errorf("a learner's own verdict was stored in a shared-cluster class: %+v", r)
		}
	}
}

func withLearner(r Result, name string) Result {
	r.Learner = name
	return r
}

func TestJoinGivesEachLearnerAWorkspace(t *testing.T) {
	ws := &fakeWorkspaces{}
	s, _ := startServer(t, t.TempDir(), ServerOptions{Plan: testPlan(), Shared: ws})
	alice := mustJoin(t, s, "alice").Membership()
	if alice.Workspace == nil || alice.Workspace.Namespace != "lab-alice" {
		t.Fatalf("alice's workspace = %+v", alice.Workspace)
	}
	// What the learner keeps is rebuilt from the server, CA, token and namespace; nothing else the server sent.
	if want, _ := Kubeconfig("https://shared.example:6443", []byte("ca"), "lab-alice", "alice", "token-lab-alice"); alice.Workspace.Kubeconfig != string(want) {
		t.Errorf("alice's kubeconfig =\n%s\nwant\n%s", alice.Workspace.Kubeconfig, want)
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
	if ws.issued["lab-alice"] != 2 {
		t.Errorf("credentials issued for lab-alice = %d, want 2 (join, rejoin; none for the refused join)", ws.issued["lab-alice"])
	}
}

func TestFailedWorkspaceLeavesTheNameFree(t *testing.T) {
	ws := &fakeWorkspaces{fail: errors.New("the API server is down")}
	s, _ := startServer(t, t.TempDir(), ServerOptions{Plan: testPlan(), Shared: ws})
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

// sentKubeconfig is a server's kubeconfig for ns with more in it than a learner needs: an insecure flag, a
// proxy, a second cluster and a client certificate file, which the learner's lab must all drop.
func sentKubeconfig(ns string) string {
	return `apiVersion: v1
kind: Config
clusters:
- name: shared
  cluster: {server: "https://shared.example:6443", certificate-authority-data: Y2E=, proxy-url: "http://proxy.example:3128"}
- name: other
  cluster: {server: "https://other.example", insecure-skip-tls-verify: true}
users:
- name: learner
  user: {token: token-` + ns + `, client-certificate: /etc/passwd}
contexts:
- name: ` + ns + `
  context: {cluster: shared, user: learner, namespace: ` + ns + `}
current-context: ` + ns + `
`
}
