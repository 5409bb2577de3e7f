package class

import (
	"cmp"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// maxResultBytes bounds a posted result: a diagnosis is a few sentences, not a log file.
const maxResultBytes = 64 << 10

// namePattern keeps names safe to show, sort and export anywhere.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,40}$`)

type joinRequest struct {
	Name  string `json:"name"`
	Token string `json:"token"`
	// LearnerKey lets a learner whose name is taken by themselves back in.
	LearnerKey string `json:"learnerKey,omitempty"`
	// Version is the learner's lab version, which must be the server's.
	Version string `json:"version"`
}

type joinResponse struct {
	Name       string     `json:"name"`
	LearnerKey string     `json:"learnerKey"`
	Workspace  *Workspace `json:"workspace,omitempty"`
	// Version is the server's lab version.
	Version string `json:"version"`
	planState
}

// handleJoin admits a learner holding the class token. Status codes: 429 too many tries from one address,
// 400 unreadable, 410 class ended, 401 wrong token, 426 another lab version, 422 invalid name, 409 name taken (by another key, or by a
// learner who left, or being joined right now), 403 class full, 502 no workspace on the shared cluster.
// Nothing is prepared on the shared cluster for a join that is refused.
func (s *Server) handleJoin(w http.ResponseWriter, r *http.Request) {
	if s.guesses.limited(w, clientAddr(r), "join attempts") {
		return
	}
	var req joinRequest
	if !decodeJSON(w, r, 4<<10, &req) {
		return
	}
	if s.Plan().Ended {
		writeError(w, http.StatusGone, "class %q has ended", s.classID)
		return
	}
	if subtle.ConstantTimeCompare([]byte(req.Token), []byte(s.token)) != 1 {
		writeError(w, http.StatusUnauthorized, "wrong class token")
		return
	}
	if req.Version != labVersion() {
		writeError(w, http.StatusUpgradeRequired, "this class runs lab %s and yours is %s: install lab %s and join again", labVersion(), cmp.Or(req.Version, "older"), labVersion())
		return
	}
	if !namePattern.MatchString(req.Name) {
		writeError(w, http.StatusUnprocessableEntity, "name %q must be 1-40 letters, digits, dots, underscores or dashes", req.Name)
		return
	}
	done, ok := s.startJoin(req.Name)
	if !ok {
		writeError(w, http.StatusConflict, "%s is joining right now: wait for that join, or join with another name", req.Name)
		return
	}
	defer done()
	if status, err := joinRefusal(s.store.checkJoin(req.Name, req.LearnerKey, s.limits.MaxLearners), req.Name, s.limits.MaxLearners); err != nil {
		writeError(w, status, "%v", err)
		return
	}
	ws, err := s.provision(r.Context(), req.Name)
	if err != nil {
		writeError(w, http.StatusBadGateway, "%v", err)
		return
	}
	namespace := ""
	if ws != nil {
		namespace = ws.Namespace
	}
	l, key, err := s.store.join(req.Name, req.LearnerKey, namespace, s.limits.MaxLearners, time.Now())
	if status, err := joinRefusal(err, req.Name, s.limits.MaxLearners); err != nil {
		writeError(w, status, "%v", err)
		return
	}
	s.mu.Lock()
	s.board.addLearner(l)
	state := s.planStateLocked(time.Now())
	s.mu.Unlock()
	s.events.notify()
	writeJSON(w, http.StatusOK, joinResponse{Name: l.Name, LearnerKey: key, Workspace: ws, Version: labVersion(), planState: state})
}

// joinRefusal is the answer to a join the store refuses, nil when it does not.
func joinRefusal(err error, name string, maxLearners int) (int, error) {
	switch {
	case err == nil:
		return 0, nil
	case errors.Is(err, errNameTaken):
		return http.StatusConflict, fmt.Errorf("this class already has a learner named %q: join with another name", name)
	case errors.Is(err, errLeft):
		return http.StatusConflict, fmt.Errorf("%s left this class, which revoked that name's key: join with another name", name)
	case errors.Is(err, errClassFull):
		return http.StatusForbidden, fmt.Errorf("this class is full (%d learners): ask your instructor", maxLearners)
	}
	return http.StatusInternalServerError, err
}

// startJoin marks a join under name as under way, so two joins under one name never both prepare a
// workspace; ok is false when one already is.
func (s *Server) startJoin(name string) (done func(), ok bool) {
	id := strings.ToLower(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.joining[id] {
		return nil, false
	}
	s.joining[id] = true
	return func() {
		s.mu.Lock()
		delete(s.joining, id)
		s.mu.Unlock()
	}, true
}

// member finds the learner a request's key belongs to and takes one of their tokens, or answers: 401 unknown
// or revoked key, 410 class ended, 429 too many requests.
func (s *Server) member(w http.ResponseWriter, r *http.Request) (learner, bool) {
	l, err := s.store.learnerByKey(bearer(r))
	switch {
	case errors.Is(err, errUnknownKey):
		writeError(w, http.StatusUnauthorized, "unknown learner key: join the class first")
		return learner{}, false
	case err != nil:
		writeError(w, http.StatusInternalServerError, "%v", err)
		return learner{}, false
	case s.Plan().Ended:
		writeError(w, http.StatusGone, "class %q has ended: it takes no more results, and every learner key was revoked", s.classID)
		return learner{}, false
	case l.Left:
		writeError(w, http.StatusUnauthorized, "the key of %s was revoked when %s left the class", l.Name, l.Name)
		return learner{}, false
	}
	return l, !s.results.limited(w, l.Name, "requests")
}

// handleLeave revokes the learner's key and, on a shared cluster, their credentials there. Their results
// stay on the board.
func (s *Server) handleLeave(w http.ResponseWriter, r *http.Request) {
	l, ok := s.member(w, r)
	if !ok {
		return
	}
	if err := s.store.leave(l.Name); err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	s.mu.Lock()
	s.board.markLeft(l.Name)
	s.mu.Unlock()
	s.events.notify()
	if err := s.revoke(r.Context(), l); err != nil {
		writeError(w, http.StatusBadGateway, "%v", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handlePlan(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	state := s.planStateLocked(time.Now())
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, state)
}

// handleResult stores a learner's signed result. Status codes: those of member, 413 too large, 400 unreadable,
// 403 a signature that does not match or a result of another learner or class, 422 invalid for this class,
// 409 a result already received. Nothing is stored unless it answers 204.
func (s *Server) handleResult(w http.ResponseWriter, r *http.Request) {
	l, ok := s.member(w, r)
	if !ok {
		return
	}
	var signed signedReport
	if !decodeJSON(w, r, maxResultBytes, &signed) {
		return
	}
	if !signed.verify(l.SignKey) {
		writeError(w, http.StatusForbidden, "the result's signature does not match %s's key: it was changed after %s's lab signed it, or signed with another key", l.Name, l.Name)
		return
	}
	var rep report
	if err := strictJSON(signed.Report, &rep); err != nil {
		writeError(w, http.StatusBadRequest, "malformed report: %v", err)
		return
	}
	res := rep.Result
	switch {
	case rep.ClassID != s.classID:
		writeError(w, http.StatusForbidden, "this result is for class %q, not %q", rep.ClassID, s.classID)
		return
	case !noncePattern.MatchString(rep.Nonce):
		writeError(w, http.StatusBadRequest, "the result's nonce %q is not one lab makes", rep.Nonce)
		return
	case !strings.EqualFold(res.Learner, l.Name):
		writeError(w, http.StatusForbidden, "this learner key belongs to %s, not %q", l.Name, res.Learner)
		return
	}
	res.Learner, res.At, res.Source = l.Name, time.Now(), ""
	if res.Event == EventCheck && s.shared != nil {
		s.askToGrade(w, r, l, res, rep.Nonce)
		return
	}
	if res.Event == EventCheck {
		res.Source = SourceSelf
	}
	if status, err := s.record(res, rep.Nonce); err != nil {
		writeError(w, status, "%v", err)
		return
	}
	s.events.notify()
	w.WriteHeader(http.StatusNoContent)
}

// askToGrade answers a check on a shared cluster: the server grades the learner's namespace itself, in the
// background, and the board shows its grade; the learner's own verdict is not stored. 202 when queued.
func (s *Server) askToGrade(w http.ResponseWriter, r *http.Request, l learner, asked Result, nonce string) {
	s.mu.Lock()
	err := asked.validate(s.plan)
	s.mu.Unlock()
	switch {
	case err != nil:
		writeError(w, http.StatusUnprocessableEntity, "%v", err)
		return
	case l.Namespace == "":
		writeError(w, http.StatusConflict, "%s has no namespace on the shared cluster: join the class again", l.Name)
		return
	}
	err = s.store.remember(l.Name, nonce)
	if errors.Is(err, errReplayed) {
		writeError(w, http.StatusConflict, "this result was already received: a result is counted once")
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	s.gradeLater(r.Context(), l.Namespace, asked)
	writeJSON(w, http.StatusAccepted, map[string]string{"grading": "the class server grades namespace " + l.Namespace + " itself"})
}

// record validates a result against the plan and stores it, returning the status to answer on failure.
func (s *Server) record(res Result, nonce string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := res.validate(s.plan); err != nil {
		return http.StatusUnprocessableEntity, err
	}
	err := s.store.addResult(res, nonce)
	if errors.Is(err, errReplayed) {
		return http.StatusConflict, errors.New("this result was already received: a result is counted once")
	}
	if err != nil {
		return http.StatusInternalServerError, err
	}
	s.board.apply(res)
	return 0, nil
}
