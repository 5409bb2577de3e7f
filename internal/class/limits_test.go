package class

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// refused posts body to path and expects the status and an error saying what, one line.
func refused(t *testing.T, s *Server, path, key string, body []byte, status int, says string) {
	t.Helper()
	got, raw := request(t, s, "POST", path, key, body)
	var e apiError
	if err := json.Unmarshal(raw, &e); err != nil || got != status || !strings.Contains(e.Error, says) || strings.Contains(e.Error, "\n") {
		t.Errorf("POST %s: %d %s, want %d saying %q", path, got, raw, status, says)
	}
}

func TestRatesAndSizesAreBounded(t *testing.T) {
	s, _ := startServer(t, t.TempDir(), ServerOptions{Plan: testPlan(), Token: "tok",
		Limits: Limits{Results: 0.001, ResultBurst: 3, Guesses: 0.001, GuessBurst: 4}})
	alice := mustJoin(t, s, "alice")
	key := alice.Membership().LearnerKey
	for range 3 {
		mustPost(t, alice, Result{Scenario: "crashloop", Event: EventStart})
	}
	before := storedResults(t, s)
	status, raw := request(t, s, "POST", "/api/results", key, signedBody(t, s, key, "", withLearner(Result{Scenario: "crashloop", Event: EventStart}, "alice")))
	if status != http.StatusTooManyRequests || !strings.Contains(string(raw), "too many requests from alice: try again in") {
		t.Errorf("a learner past the rate: %d %s, want 429", status, raw)
	}
	// Another learner's bucket is their own.
	bob := mustJoin(t, s, "bob")
	mustPost(t, bob, Result{Scenario: "crashloop", Event: EventStart})

	// Two joins and two wrong tokens used this address's four tries.
	refused(t, s, "/api/join", "", mustJSON(t, joinRequest{Name: "eve", Token: "guess1", Version: labVersion()}), http.StatusUnauthorized, "wrong class token")
	refused(t, s, "/api/join", "", mustJSON(t, joinRequest{Name: "eve", Token: "guess2", Version: labVersion()}), http.StatusUnauthorized, "wrong class token")
	refused(t, s, "/api/join", "", mustJSON(t, joinRequest{Name: "eve", Token: "tok", Version: labVersion()}), http.StatusTooManyRequests, "too many join attempts from 127.0.0.1")
	if after := storedResults(t, s); len(after) != len(before)+1 || !reflect.DeepEqual(after[:len(before)], before) {
		t.Errorf("refused requests changed the stored results: %d before, %d after", len(before), len(after))
	}
}

func TestOversizedBodiesAreRefused(t *testing.T) {
	s, _ := startServer(t, t.TempDir(), ServerOptions{Plan: testPlan(), Token: "tok"})
	alice := mustJoin(t, s, "alice")
	huge := []byte(`{"name":"x","token":"` + strings.Repeat("t", 5<<10) + `"}`)
	refused(t, s, "/api/join", "", huge, http.StatusRequestEntityTooLarge, "request body is larger than 4096 bytes")
	refused(t, s, "/api/results", alice.Membership().LearnerKey, []byte(`{"report":"`+strings.Repeat("x", 100<<10)+`"}`), http.StatusRequestEntityTooLarge, "request body is larger than")
	refused(t, s, "/api/extend", s.InstructorKey(), []byte(`{"minutes":`+strings.Repeat("1", 2<<10)+`}`), http.StatusRequestEntityTooLarge, "request body is larger than 1024 bytes")
	if learners, _ := s.store.learners(); len(learners) != 1 {
		t.Errorf("learners after oversized joins: %d, want 1", len(learners))
	}
}

func TestClassHasACap(t *testing.T) {
	s, _ := startServer(t, t.TempDir(), ServerOptions{Plan: testPlan(), Token: "tok", Limits: Limits{MaxLearners: 2}})
	alice := mustJoin(t, s, "alice")
	mustJoin(t, s, "bob")
	refused(t, s, "/api/join", "", mustJSON(t, joinRequest{Name: "carol", Token: "tok", Version: labVersion()}), http.StatusForbidden, "this class is full (2 learners): ask your instructor")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, _, err := Join(ctx, alice.Membership(), "tok"); err != nil {
		t.Errorf("a learner of a full class coming back: %v", err)
	}
}

// TestLeavingRevokesTheKey: after a learner leaves, their key is refused for results and to come back, their
// name stays theirs, their results stay on the board, and on a shared cluster their credentials are revoked.
func TestLeavingRevokesTheKey(t *testing.T) {
	ws := &fakeWorkspaces{}
	s, _ := startServer(t, t.TempDir(), ServerOptions{Plan: testPlan(), Token: "tok", Shared: ws})
	alice := mustJoin(t, s, "alice")
	mustPost(t, alice, Result{Scenario: "crashloop", Event: EventStart})
	before := storedResults(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := alice.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ws.revoked, []string{"lab-alice"}) {
		t.Errorf("revoked on the shared cluster: %v, want lab-alice", ws.revoked)
	}
	key := alice.Membership().LearnerKey
	refused(t, s, "/api/results", key, signedBody(t, s, key, "", withLearner(Result{Scenario: "crashloop", Event: EventStart}, "alice")),
		http.StatusUnauthorized, "the key of alice was revoked when alice left the class")
	refused(t, s, "/api/join", "", mustJSON(t, joinRequest{Name: "alice", Token: "tok", LearnerKey: key, Version: labVersion()}), http.StatusConflict, "alice left this class, which revoked that name's key: join with another name")
	refused(t, s, "/api/join", "", mustJSON(t, joinRequest{Name: "ALICE", Token: "tok", Version: labVersion()}), http.StatusConflict, "left this class")
	if err := alice.Leave(ctx); err != nil {
		t.Errorf("leaving again: %v, want nothing left to revoke", err)
	}
	if got := storedResults(t, s); !reflect.DeepEqual(got, before) {
		t.Errorf("leaving changed the stored results")
	}
	if row := s.boardState().Learners[0]; !row.Left || row.Cells["crashloop"].Status != statusInProgress {
		t.Errorf("alice's row after leaving: %+v", row)
	}
}

// TestEndingTheClassRevokesEveryKey: once the instructor ends the class, nobody posts, joins or changes the
// clock, every shared-cluster credential is revoked, and the board and its exports stay.
func TestEndingTheClassRevokesEveryKey(t *testing.T) {
	ws := &fakeWorkspaces{}
	s, stop := startServer(t, t.TempDir(), ServerOptions{Plan: testPlan(), Token: "tok", Shared: ws})
	alice, bob := mustJoin(t, s, "alice"), mustJoin(t, s, "bob")
	mustPost(t, alice, Result{Scenario: "crashloop", Event: EventStart})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := bob.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	refused(t, s, "/api/end", alice.Membership().LearnerKey, []byte("{}"), http.StatusUnauthorized, "instructor key required")
	ended := instructorPost(t, s, "/api/end", nil)
	if !ended.Plan.Ended || ended.TimeLeft != 0 {
		t.Errorf("plan after ending: %+v", ended)
	}
	slices.Sort(ws.revoked)
	if !slices.Equal(ws.revoked, []string{"lab-alice", "lab-bob"}) {
		t.Errorf("revoked: %v, want both learners once", ws.revoked)
	}
	before := storedResults(t, s)
	key := alice.Membership().LearnerKey
	refused(t, s, "/api/results", key, signedBody(t, s, key, "", withLearner(Result{Scenario: "crashloop", Event: EventStart}, "alice")), http.StatusGone, "has ended: it takes no more results, and every learner key was revoked")
	refused(t, s, "/api/join", "", mustJSON(t, joinRequest{Name: "carol", Token: "tok", Version: labVersion()}), http.StatusGone, "has ended")
	refused(t, s, "/api/end", s.InstructorKey(), []byte("{}"), http.StatusUnprocessableEntity, "already ended")
	if err := alice.Leave(ctx); err != nil {
		t.Errorf("leaving an ended class: %v", err)
	}
	if status, _ := request(t, s, "GET", "/api/export.csv", s.InstructorKey(), nil); status != http.StatusOK {
		t.Errorf("export after the end: %d", status)
	}
	dir := s.store.db.Path()
	stop()
	s, _ = startServer(t, strings.TrimSuffix(dir, "/class.db"), ServerOptions{Shared: ws, Resume: true})
	if !s.Plan().Ended || !reflect.DeepEqual(storedResults(t, s), before) {
		t.Errorf("a resumed ended class: %+v", s.Plan())
	}
	refused(t, s, "/api/results", key, signedBody(t, s, key, "", withLearner(Result{Scenario: "crashloop", Event: EventStart}, "alice")), http.StatusGone, "has ended")
}
