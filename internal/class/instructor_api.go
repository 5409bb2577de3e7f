package class

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

func (s *Server) handlePause(w http.ResponseWriter, _ *http.Request) {
	s.changePlan(w, func(p *Plan, now time.Time) error { p.pause(now); return nil })
}

func (s *Server) handleResume(w http.ResponseWriter, _ *http.Request) {
	s.changePlan(w, func(p *Plan, now time.Time) error { p.resume(now); return nil })
}

func (s *Server) handleExtend(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Minutes int `json:"minutes"`
	}
	if !decodeJSON(w, r, 1<<10, &req) {
		return
	}
	s.changePlan(w, func(p *Plan, _ time.Time) error {
		if req.Minutes < 1 || req.Minutes > 600 {
			return fmt.Errorf("extend by 1 to 600 minutes, not %d", req.Minutes)
		}
		p.Extra += time.Duration(req.Minutes) * time.Minute
		return nil
	})
}

func (s *Server) handleRevealHint(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Scenario string `json:"scenario"`
	}
	if !decodeJSON(w, r, 1<<10, &req) {
		return
	}
	s.changePlan(w, func(p *Plan, _ time.Time) error {
		switch {
		case p.Exam:
			return errors.New("hints are not revealed during an exam")
		case !p.HasScenario(req.Scenario):
			return fmt.Errorf("scenario %q is not part of this class", req.Scenario)
		}
		p.revealHint(req.Scenario)
		return nil
	})
}

// changePlan applies an instructor's change, saves it before adopting it so the disk never lags behind what
// learners were told, and answers with the new plan (422 when change refuses).
func (s *Server) changePlan(w http.ResponseWriter, change func(p *Plan, now time.Time) error) {
	s.mu.Lock()
	now := time.Now()
	next := s.plan.clone()
	if err := change(&next, now); err != nil {
		s.mu.Unlock()
		writeError(w, http.StatusUnprocessableEntity, "%v", err)
		return
	}
	err := s.store.saveMeta(classMeta{Plan: next, Token: s.token, InstructorKey: s.instructorKey})
	if err == nil {
		s.plan = next
	}
	state := s.planStateLocked(now)
	s.mu.Unlock()
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	s.events.notify()
	writeJSON(w, http.StatusOK, state)
}
