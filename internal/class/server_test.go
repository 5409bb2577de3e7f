package class

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestJoin(t *testing.T) {
	s, _ := startServer(t, t.TempDir(), ServerOptions{Plan: testPlan(), Token: "class-token"})
	for _, name := range []string{"alice", "bob", "carol"} {
		mustJoin(t, s, name)
	}
	if want := "lab class join " + s.URL() + " --fingerprint " + s.Fingerprint() + " --token class-token --name <your-name>"; s.JoinCommand() != want {
		t.Errorf("JoinCommand() = %q, want %q", s.JoinCommand(), want)
	}
	dave := mustJoin(t, s, "dave").Membership()
	if dave.URL != s.URL() || dave.Name != "dave" || dave.LearnerKey == "" {
		t.Fatalf("membership = %+v", dave)
	}

	cases := []struct {
		what   string
		body   joinRequest
		status int
	}{
		{"duplicate name", joinRequest{Name: "alice", Token: "class-token", Version: labVersion()}, http.StatusConflict},
		{"duplicate name in other case", joinRequest{Name: "ALICE", Token: "class-token", Version: labVersion()}, http.StatusConflict},
		{"duplicate with someone else's key", joinRequest{Name: "alice", Token: "class-token", LearnerKey: dave.LearnerKey, Version: labVersion()}, http.StatusConflict},
		{"wrong token", joinRequest{Name: "erin", Token: "guess", Version: labVersion()}, http.StatusUnauthorized},
		{"name with a space", joinRequest{Name: "erin smith", Token: "class-token", Version: labVersion()}, http.StatusUnprocessableEntity},
		{"empty name", joinRequest{Name: "", Token: "class-token", Version: labVersion()}, http.StatusUnprocessableEntity},
		{"name of 41 characters", joinRequest{Name: strings.Repeat("x", 41), Token: "class-token", Version: labVersion()}, http.StatusUnprocessableEntity},
	}
	for _, c := range cases {
		if status, body := request(t, s, "POST", "/api/join", "", mustJSON(t, c.body)); status != c.status {
			t.Errorf("%s: status %d (%s), want %d", c.what, status, body, c.status)
		}
	}
	if status, _ := request(t, s, "POST", "/api/join", "", []byte(`{"name":"erin","token":"class-token","role":"admin"}`)); status != http.StatusBadRequest {
		t.Errorf("unknown field: status %d, want 400", status)
	}
	if learners, _ := s.store.learners(); len(learners) != 4 {
		t.Errorf("refused joins changed the learners: %d stored, want 4", len(learners))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, _, err := Join(ctx, Membership{URL: s.URL(), Fingerprint: s.Fingerprint(), Name: "frank"}, "guess"); err == nil || !strings.Contains(err.Error(), "refused the token: ask your instructor for the join command") {
		t.Errorf("wrong token error = %v", err)
	}
	if _, _, err := Join(ctx, Membership{URL: s.URL(), Fingerprint: s.Fingerprint(), Name: "Alice"}, "class-token"); err == nil || !strings.Contains(err.Error(), `already has a learner named "Alice"`) {
		t.Errorf("taken name error = %v", err)
	}
	c, plan, err := Join(ctx, Membership{URL: s.URL() + "/", Fingerprint: s.Fingerprint(), Name: "DAVE", LearnerKey: dave.LearnerKey}, "class-token")
	if err != nil {
		t.Fatalf("rejoin with the learner's key: %v", err)
	}
	if c.Membership() != dave {
		t.Errorf("rejoin membership = %+v, want %+v", c.Membership(), dave)
	}
	if plan.Title != "Tuesday CKA" || len(plan.Scenarios) != 3 {
		t.Errorf("plan at join = %+v", plan)
	}
}

func TestResultsRefusedLeaveNothingStored(t *testing.T) {
	s, _ := startServer(t, t.TempDir(), ServerOptions{Plan: testPlan()})
	alice, bob := mustJoin(t, s, "alice"), mustJoin(t, s, "bob")
	mustPost(t, alice, check("crashloop", true, 10))
	key := alice.Membership().LearnerKey
	failing := check("crashloop", false, 4)
	failing.Learner = "alice"
	valid := signedBody(t, s, key, "", failing)
	replayNonce := newNonce()
	replayed := signedBody(t, s, key, replayNonce, Result{Learner: "alice", Scenario: "crashloop", Event: EventStart})
	if status, body := request(t, s, "POST", "/api/results", key, replayed); status != http.StatusNoContent {
		t.Fatalf("the first post of a result: %d %s", status, body)
	}
	before := storedResults(t, s)

	// forged is a failing check turned into a pass after it was signed.
	var forged signedReport
	if err := json.Unmarshal(valid, &forged); err != nil {
		t.Fatal(err)
	}
	forged.Report = json.RawMessage(strings.Replace(string(forged.Report), `"passed":false,"score":4`, `"passed":true,"score":10`, 1))
	if string(forged.Report) == string(mustJSON(t, signedReport{}.Report)) || !strings.Contains(string(forged.Report), `"passed":true,"score":10`) {
		t.Fatalf("the forgery did not change the report: %s", forged.Report)
	}
	claimsPass := check("crashloop", false, 4)
	claimsPass.Learner, claimsPass.Passed = "alice", true
	scoreAbove := check("crashloop", false, 4)
	scoreAbove.Learner, scoreAbove.Score = "alice", 9
	noEvidence := check("crashloop", true, 10)
	noEvidence.Learner, noEvidence.Checks = "alice", nil
	asBob := failing
	asBob.Learner = "bob"
	otherClass, err := sign(report{ClassID: "class-other", Nonce: newNonce(), Result: failing}, key)
	if err != nil {
		t.Fatal(err)
	}
	at := func(r Result, edit func(*Result)) Result {
		edit(&r)
		return r
	}

	cases := []struct {
		what   string
		key    string
		body   []byte
		status int
		says   string
	}{
		{"no key", "", valid, http.StatusUnauthorized, "unknown learner key: join the class first"},
		{"unknown key", "not-a-key", valid, http.StatusUnauthorized, "unknown learner key"},
		{"a forged result", key, mustJSON(t, forged), http.StatusForbidden, "the result's signature does not match alice's key"},
		{"alice's result under bob's key", bob.Membership().LearnerKey, valid, http.StatusForbidden, "the result's signature does not match bob's key"},
		{"signed with bob's key, for alice", bob.Membership().LearnerKey, signedBody(t, s, bob.Membership().LearnerKey, "", failing), http.StatusForbidden, `this learner key belongs to bob, not "alice"`},
		{"posting as another learner", key, signedBody(t, s, key, "", asBob), http.StatusForbidden, `belongs to alice, not "bob"`},
		{"a replayed result", key, replayed, http.StatusConflict, "this result was already received"},
		{"another class's result", key, mustJSON(t, otherClass), http.StatusForbidden, `this result is for class "class-other"`},
		{"a made-up nonce", key, signedBody(t, s, key, "1", failing), http.StatusBadRequest, "is not one lab makes"},
		{"a pass its checks do not add up to", key, signedBody(t, s, key, "", claimsPass), http.StatusUnprocessableEntity, "passed=true does not match 2 of 5 checks passing"},
		{"a score above what its checks earn", key, signedBody(t, s, key, "", scoreAbove), http.StatusUnprocessableEntity, "score 9/10 is more than the checks carried earn (4 of 10 points)"},
		{"a check without evidence", key, signedBody(t, s, key, "", noEvidence), http.StatusUnprocessableEntity, "a check result carries its checks and their evidence"},
		{"oversized", key, signedBody(t, s, key, "", at(failing, func(r *Result) { r.Event, r.Diagnosis = EventDiagnose, strings.Repeat("x", 70<<10) })), http.StatusRequestEntityTooLarge, "request body is larger than"},
		{"malformed", key, []byte(`{"report":`), http.StatusBadRequest, "malformed JSON"},
		{"not an object", key, []byte(`[1,2]`), http.StatusBadRequest, "malformed JSON"},
		{"unknown field", key, []byte(`{"report":{},"signature":"","grade":"A"}`), http.StatusBadRequest, "malformed JSON"},
		{"two objects", key, append(slices.Clone(valid), valid...), http.StatusBadRequest, "unexpected data after the object"},
		{"unknown scenario", key, signedBody(t, s, key, "", at(failing, func(r *Result) { r.Scenario = "etcd-backup" })), http.StatusUnprocessableEntity, `scenario "etcd-backup" is not part of this class`},
		{"unknown event", key, signedBody(t, s, key, "", at(failing, func(r *Result) { r.Event = "cheat" })), http.StatusUnprocessableEntity, `event "cheat"`},
		{"score above maximum", key, signedBody(t, s, key, "", at(failing, func(r *Result) { r.Score = 11 })), http.StatusUnprocessableEntity, "score 11/10 is out of range"},
	}
	for _, c := range cases {
		status, body := request(t, s, "POST", "/api/results", c.key, c.body)
		var e apiError
		if err := json.Unmarshal(body, &e); err != nil || e.Error == "" || strings.Contains(e.Error, "\n") {
			t.Errorf("%s: error body %q is not {\"error\": one line}", c.what, body)
		}
		if status != c.status || !strings.Contains(e.Error, c.says) {
			t.Errorf("%s: %d %q, want %d saying %q", c.what, status, e.Error, c.status, c.says)
		}
	}
	if after := storedResults(t, s); !reflect.DeepEqual(after, before) {
		t.Errorf("refused posts changed the stored results:\nbefore %+v\nafter  %+v", before, after)
	}
	if row := s.boardState().Learners[0]; row.Name != "alice" || row.Cells["crashloop"].Status != statusPassed || row.Cells["crashloop"].Source != SourceSelf {
		t.Errorf("alice's board after the refused posts: %+v", row)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = bob.Post(ctx, Result{Learner: "alice", Scenario: "crashloop", Event: EventStart})
	if err == nil || !strings.Contains(err.Error(), `refused the result for crashloop: this learner key belongs to bob, not "alice"`) {
		t.Errorf("posting as another learner: %v", err)
	}
	err = bob.Post(ctx, Result{Scenario: "etcd-backup", Event: EventStart})
	if err == nil || !strings.Contains(err.Error(), `scenario "etcd-backup" is not part of this class`) {
		t.Errorf("unknown scenario: %v", err)
	}
}

func TestRestartKeepsClass(t *testing.T) {
	dir := t.TempDir()
	s, stop := startServer(t, dir, ServerOptions{Plan: testPlan()})
	if _, err := NewServer(t.Context(), ServerOptions{Addr: "127.0.0.1:0", DataDir: dir, Plan: testPlan()}); err == nil || !strings.Contains(err.Error(), "in use by another class server") {
		t.Errorf("second server on the same data: %v", err)
	}
	alice, bob := mustJoin(t, s, "alice"), mustJoin(t, s, "bob")
	mustPost(t, alice, check("crashloop", true, 10))
	mustPost(t, bob, check("broken-dns", false, 4))
	mustPost(t, bob, Result{Scenario: "broken-dns", Event: EventHint, HintsTaken: 1})
	instructorPost(t, s, "/api/pause", nil)
	first, plan, token, ikey := storedResults(t, s), s.Plan(), s.Token(), s.InstructorKey()
	stop()

	if _, err := NewServer(t.Context(), ServerOptions{Addr: "127.0.0.1:0", DataDir: dir, Plan: Plan{ClassID: "other-class"}, Resume: true}); err == nil || !strings.Contains(err.Error(), "holds class") {
		t.Errorf("resuming another class's data: %v", err)
	}
	s, _ = startServer(t, dir, ServerOptions{Resume: true})
	if got := storedResults(t, s); !reflect.DeepEqual(got, first) || len(got) != 3 {
		t.Errorf("results after restart = %+v, want %+v", got, first)
	}
	if string(mustJSON(t, s.Plan())) != string(mustJSON(t, plan)) || !s.Plan().Paused {
		t.Errorf("plan after restart = %+v, want %+v", s.Plan(), plan)
	}
	if s.Token() != token || s.InstructorKey() != ikey {
		t.Errorf("token or instructor key changed across restart")
	}
	// The learners' saved memberships still work against the restarted server.
	alice = NewClient(movedTo(alice.Membership(), s))
	mustPost(t, alice, check("broken-dns", true, 8))
	row := s.boardState().Learners[0]
	if row.Name != "alice" || row.TotalScore != 18 || row.Passed != 2 {
		t.Errorf("alice after restart = %+v", row)
	}
	if status, _ := request(t, s, "POST", "/api/join", "", mustJSON(t, joinRequest{Name: "bob", Token: token, Version: labVersion()})); status != http.StatusConflict {
		t.Errorf("bob's name is free again after restart: status %d", status)
	}
}

func TestPauseExtendAndHints(t *testing.T) {
	s, _ := startServer(t, t.TempDir(), ServerOptions{Plan: testPlan()})
	learner := mustJoin(t, s, "alice")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	for _, path := range []string{"/api/pause", "/api/resume", "/api/extend", "/api/reveal-hint", "/api/export.csv", "/api/export.junit"} {
		method := "POST"
		if strings.HasPrefix(path, "/api/export") {
			method = "GET"
		}
		if status, _ := request(t, s, method, path, learner.Membership().LearnerKey, []byte(`{"minutes":5,"scenario":"crashloop"}`)); status != http.StatusUnauthorized {
			t.Errorf("%s with a learner's key: status %d, want 401", path, status)
		}
	}

	at := time.Now().Add(time.Minute)
	running := s.Plan()
	paused := instructorPost(t, s, "/api/pause", nil).Plan
	if !paused.Paused || paused.TimeLeft(at) != paused.TimeLeft(at.Add(time.Hour)) {
		t.Errorf("paused clock moves: %+v", paused)
	}
	if paused.TimeLeft(at) < running.TimeLeft(at) {
		t.Errorf("pausing took time away: %v < %v", paused.TimeLeft(at), running.TimeLeft(at))
	}
	extended := instructorPost(t, s, "/api/extend", map[string]int{"minutes": 15}).Plan
	if d := extended.TimeLeft(at) - paused.TimeLeft(at); d != 15*time.Minute {
		t.Errorf("extending by 15 minutes added %v", d)
	}
	resumed := instructorPost(t, s, "/api/resume", nil).Plan
	if resumed.Paused || resumed.Extra < 15*time.Minute {
		t.Errorf("resumed plan = %+v", resumed)
	}
	if left := resumed.TimeLeft(time.Now()); left <= time.Hour || left > time.Hour+15*time.Minute {
		t.Errorf("time left after a 15 minute extension = %v", left)
	}
	instructorPost(t, s, "/api/reveal-hint", map[string]string{"scenario": "crashloop"})
	instructorPost(t, s, "/api/reveal-hint", map[string]string{"scenario": "crashloop"})
	plan, err := learner.Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if plan.RevealedHints["crashloop"] != 2 || plan.Extra < 15*time.Minute {
		t.Errorf("learner's plan = %+v", plan)
	}
	for _, bad := range []struct{ path, body string }{
		{"/api/extend", `{"minutes":0}`},
		{"/api/extend", `{"minutes":601}`},
		{"/api/reveal-hint", `{"scenario":"etcd-backup"}`},
	} {
		if status, _ := request(t, s, "POST", bad.path, s.InstructorKey(), []byte(bad.body)); status != http.StatusUnprocessableEntity {
			t.Errorf("%s %s: status %d, want 422", bad.path, bad.body, status)
		}
	}
	if status, _ := request(t, s, "POST", "/api/extend", s.InstructorKey(), []byte(`{"minutes":"ten"}`)); status != http.StatusBadRequest {
		t.Errorf("extend by a string: status %d, want 400", status)
	}
}

func TestNoHintsInExam(t *testing.T) {
	plan := testPlan()
	plan.Exam = true
	s, _ := startServer(t, t.TempDir(), ServerOptions{Plan: plan})
	status, body := request(t, s, "POST", "/api/reveal-hint", s.InstructorKey(), []byte(`{"scenario":"crashloop"}`))
	if status != http.StatusUnprocessableEntity || !strings.Contains(string(body), "exam") {
		t.Errorf("reveal hint in an exam: %d %s", status, body)
	}
}

// instructorPost calls an instructor endpoint that must succeed and returns the new plan.
func instructorPost(t *testing.T, s *Server, path string, body any) planState {
	t.Helper()
	raw := []byte("{}")
	if body != nil {
		raw = mustJSON(t, body)
	}
	status, resp := request(t, s, "POST", path, s.InstructorKey(), raw)
	if status != http.StatusOK {
		t.Fatalf("%s: status %d: %s", path, status, resp)
	}
	var st planState
	if err := json.Unmarshal(resp, &st); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return st
}

func TestUnsafeTokenRefused(t *testing.T) {
	_, err := NewServer(t.Context(), ServerOptions{Addr: "127.0.0.1:0", DataDir: t.TempDir(), Plan: testPlan(), Token: "a b;rm"})
	if err == nil || !strings.Contains(err.Error(), "class token must be") {
		t.Errorf("token with a space and a semicolon: %v", err)
	}
}

// TestNewClassArchivesTheOld: a data directory's class resumes only when asked; a new class there starts after
// Archive moved the old one away, with a new token and instructor key, and the old learners' keys open nothing.
func TestNewClassArchivesTheOld(t *testing.T) {
	dir := t.TempDir()
	if _, err := NewServer(t.Context(), ServerOptions{Addr: "127.0.0.1:0", DataDir: dir, Resume: true}); err == nil || !strings.Contains(err.Error(), "holds no class to resume") {
		t.Errorf("resuming an empty directory: %v", err)
	}
	if a, err := Archive(dir); a != nil || err != nil {
		t.Errorf("archiving an empty directory: %+v, %v", a, err)
	}
	s, stop := startServer(t, dir, ServerOptions{Plan: testPlan()})
	if s.Resumed() {
		t.Error("a first class says it resumed")
	}
	alice := mustJoin(t, s, "alice")
	old, oldToken, oldKey := s.Plan(), s.Token(), s.InstructorKey()
	stop()

	if _, err := NewServer(t.Context(), ServerOptions{Addr: "127.0.0.1:0", DataDir: dir, Plan: testPlan()}); err == nil || !strings.Contains(err.Error(), "resume it (--resume), or start a new class, which archives it") {
		t.Errorf("a new class over a stored one: %v", err)
	}
	a, err := Archive(dir)
	if err != nil || a == nil {
		t.Fatalf("Archive: %+v, %v", a, err)
	}
	if a.Plan.ClassID != old.ClassID || a.Dir != filepath.Join(dir, "archive", old.ClassID) {
		t.Errorf("archived %+v", a)
	}
	if _, err := os.Stat(filepath.Join(a.Dir, "class.db")); err != nil {
		t.Errorf("the old class's data is not in the archive: %v", err)
	}
	s, _ = startServer(t, dir, ServerOptions{Plan: testPlan()})
	if s.Resumed() || s.Plan().ClassID == old.ClassID || s.Token() == oldToken || s.InstructorKey() == oldKey {
		t.Errorf("the new class kept the old one's identity: %s, resumed %t", s.Plan().ClassID, s.Resumed())
	}
	err = NewClient(movedTo(alice.Membership(), s)).Post(context.Background(), Result{Scenario: "crashloop", Event: EventStart})
	wantOneLine(t, err, "does not know alice: join the class again")
}
