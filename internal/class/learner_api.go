package class

import (
	"crypto/subtle"
	"errors"
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
}

type joinResponse struct {
	Name       string     `json:"name"`
	LearnerKey string     `json:"learnerKey"`
	Workspace  *Workspace `json:"workspace,omitempty"`
	planState
}

// handleJoin admits a learner holding the class token. Status codes: 400 unreadable, 401 wrong token,
// 422 invalid name, 409 name taken, 502 no workspace on the shared cluster.
func (s *Server) handleJoin(w http.ResponseWriter, r *http.Request) {
	var req joinRequest
	if !decodeJSON(w, r, 4<<10, &req) {
		return
	}
	if subtle.ConstantTimeCompare([]byte(req.Token), []byte(s.token)) != 1 {
		writeError(w, http.StatusUnauthorized, "wrong class token")
		return
	}
	if !namePattern.MatchString(req.Name) {
		writeError(w, http.StatusUnprocessableEntity, "name %q must be 1-40 letters, digits, dots, underscores or dashes", req.Name)
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
	l, key, err := s.store.join(req.Name, req.LearnerKey, namespace, time.Now())
	if errors.Is(err, errNameTaken) {
		writeError(w, http.StatusConflict, "name %q is already taken in this class", req.Name)
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	s.mu.Lock()
	s.board.addLearner(l)
	state := s.planStateLocked(time.Now())
	s.mu.Unlock()
	s.events.notify()
	writeJSON(w, http.StatusOK, joinResponse{Name: l.Name, LearnerKey: key, Workspace: ws, planState: state})
}

func (s *Server) handlePlan(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	state := s.planStateLocked(time.Now())
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, state)
}

// handleResult stores a learner's signed result. Status codes: 401 unknown key, 413 too large, 400 unreadable,
// 403 a signature that does not match or a result of another learner or class, 422 invalid for this class,
// 409 a result already received. Nothing is stored unless it answers 204.
func (s *Server) handleResult(w http.ResponseWriter, r *http.Request) {
	l, err := s.store.learnerByKey(bearer(r))
	if errors.Is(err, errUnknownKey) {
		writeError(w, http.StatusUnauthorized, "unknown learner key: join the class first")
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
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
