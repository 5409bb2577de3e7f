package session

import (
	"context"
	"fmt"
	"time"

	"github.com/cka-lab/lab/internal/coach"
	"github.com/cka-lab/lab/internal/exam"
	"github.com/cka-lab/lab/internal/examhost"
	"github.com/cka-lab/lab/scenarios"
)

// coachTimeout bounds reading the audit log: a few MiB through docker exec.
const coachTimeout = 20 * time.Second

// auditEvents reads the control-plane node's audit log; found is false on a cluster created before lab kept one.
func (s *Session) auditEvents(ctx context.Context, since time.Time) (events []coach.Event, found bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, coachTimeout)
	defer cancel()
	cp, err := s.Cluster.ControlPlane()
	if err != nil {
		return nil, false, fmt.Errorf("find the audit log: %w", err)
	}
	return coach.Read(ctx, cp, since)
}

// scope is what an instance's task is about, for its coaching.
func scope(inst *scenarios.Instance) coach.Scope {
	namespaces, objects := inst.Involved()
	return coach.NewScope(inst.Task, namespaces, objects)
}

// Coaching is what a coach would say of the learner's writes since the task was shown, from the API server's
// audit log; found is false on a cluster created before lab kept one.
func (s *Session) Coaching(ctx context.Context, a *Attempt, inst *scenarios.Instance) (notes []coach.Note, found bool, err error) {
	events, found, err := s.auditEvents(ctx, a.Started)
	if err != nil || !found {
		return nil, found, err
	}
	return coach.Notes(coach.Learner(events, a.Started), scope(inst)), true, nil
}

// coachExam adds each question's timeline and the notes on writes no question involves to an exam's report,
// each cluster's questions (on: a session on each) read from that cluster's own audit log: a write made on
// another cluster never reaches a question's. Coaching is advice beside the grade: a log that is missing or
// unreadable leaves its questions without it, and one quiet line says why.
func coachExam(ctx context.Context, e *Exam, on map[string]*Session, insts []*scenarios.Instance, rep *exam.Report) {
	for _, g := range e.ByCluster() {
		on[g.Name].coachQuestions(ctx, e, g.Index, insts, rep)
	}
	rep.Total()
}

// coachQuestions coaches the exam's questions idx, which are on this session's cluster.
func (s *Session) coachQuestions(ctx context.Context, e *Exam, idx []int, insts []*scenarios.Instance, rep *exam.Report) {
	events, found, err := s.auditEvents(ctx, e.Started)
	switch {
	case err != nil:
		s.Status.Info("No coaching on cluster %s: %v", s.Cluster.Name, err)
		return
	case !found:
		s.Status.Info("No coaching on cluster %s: it keeps no audit log (it was created before lab kept one)", s.Cluster.Name)
		return
	}
	scopes := make([]coach.Scope, len(idx))
	for j, i := range idx {
		scopes[j] = scope(insts[i])
	}
	per, others := coach.Split(coach.Learner(events, e.Started), scopes)
	timelines, rest := coach.Timelines(per, others, e.Started, scopes)
	rep.Coaching = append(rep.Coaching, rest...)
	for j, i := range idx {
		if i >= len(rep.Questions) {
			continue
		}
		rep.Questions[i].Timeline = timelines[j]
		q := e.Questions[i]
		if q.Host == "" {
			continue
		}
		wrong, fromHost := coach.WrongHost(per[j], q.Host, examhost.HostOf)
		if len(wrong) == 0 {
			continue
		}
		rep.Questions[i].Timeline.WrongTurns = append(rep.Questions[i].Timeline.WrongTurns, wrong...)
		if !fromHost && rep.Questions[i].Credit > 0 {
			rep.Questions[i].FixedOnWrongHost(fmt.Sprintf("fixed on the wrong host: %s (the exam scores it 0)", wrong[0].Message))
		}
	}
}
