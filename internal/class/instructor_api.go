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

// changePlan applies an instructor's change and answers with the new plan.
func (s *Server) changePlan(w http.ResponseWriter, change func(p *Plan, now time.Time) error) {
	state, status, err := s.updatePlan(change)
	if err != nil {
		writeError(w, status, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, state)
}

// updatePlan applies an instructor's change, saving it before adopting it so the disk never lags behind what
// learners were told, and tells the board. A change that refuses is 422.
func (s *Server) updatePlan(change func(p *Plan, now time.Time) error) (planState, int, error) {
	s.mu.Lock()
	now := time.Now()
	next := s.plan.clone()
	if err := change(&next, now); err != nil {
		s.mu.Unlock()
		return planState{}, http.StatusUnprocessableEntity, err
	}
	err := s.store.saveMeta(classMeta{Plan: next, Token: s.token, InstructorKey: s.instructorKey})
	if err == nil {
		s.plan = next
	}
	state := s.planStateLocked(now)
	s.mu.Unlock()
	if err != nil {
		return planState{}, http.StatusInternalServerError, err
	}
	s.events.notify()
	return state, 0, nil
}

// handleEnd ends the class: from the moment it is saved no learner key is taken and nobody joins, and on a
// shared cluster every learner's credentials are revoked. The board stays, final, with its exports.
func (s *Server) handleEnd(w http.ResponseWriter, r *http.Request) {
	state, status, err := s.updatePlan(func(p *Plan, now time.Time) error {
		if p.Ended {
			return errors.New("the class has already ended")
		}
		p.resume(now)
		p.Ended, p.EndedAt = true, now
		return nil
	})
	if err != nil {
		writeError(w, status, "%v", err)
		return
	}
	learners, err := s.store.learners()
	if err != nil {
		writeError(w, http.StatusInternalServerError, "the class ended, but its learners cannot be read to revoke their credentials: %v", err)
		return
	}
	var failed []error
	for _, l := range learners {
		if !l.Left {
			if err := s.revoke(r.Context(), l); err != nil {
				failed = append(failed, err)
			}
		}
	}
	if len(failed) > 0 {
		writeError(w, http.StatusBadGateway, "the class ended, but: %v", errors.Join(failed...))
		return
	}
	writeJSON(w, http.StatusOK, state)
}
