package session

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/cka-lab/lab/grader"
	"github.com/cka-lab/lab/internal/baseline"
	"github.com/cka-lab/lab/internal/state/history"
	"github.com/cka-lab/lab/internal/survive"
	"github.com/cka-lab/lab/scenarios"
)

// What the learner does during an attempt: ask for hints, see the solution, check, stop.

// Active returns the attempt in progress and its scenario instance; an error that says what to do when no
// scenario runs or its start did not finish.
func (s *Session) Active(ctx context.Context, cat *scenarios.Catalog) (*Attempt, *scenarios.Instance, error) {
	a, err := s.Current(ctx)
	if err != nil {
		return nil, nil, err
	}
	if a == nil {
		return nil, nil, fmt.Errorf("no scenario is running on cluster %s: start one with `lab start <scenario>` (see `lab list`)", s.Cluster.Name)
	}
	if a.Phase != PhaseActive {
		return nil, nil, fmt.Errorf("scenario %s did not finish starting (%s): run `lab reset`, then `lab start %s` again", a.Scenario, a.Phase, a.Scenario)
	}
	inst, err := s.Instance(cat, a)
	return a, inst, err
}

// RevealHint takes the attempt's next hint, which costs HintCost at the next check, and returns it; false
// when every hint has been taken.
func (s *Session) RevealHint(a *Attempt, inst *scenarios.Instance) (string, bool, error) {
	if a.Hints >= len(inst.Hints) {
		return "", false, nil
	}
	a.Hints++
	if err := s.Save(a); err != nil {
		return "", false, err
	}
	return inst.Hints[a.Hints-1], true, nil
}

// RevealSolution marks the attempt as solved with the reference solution, which the history keeps.
func (s *Session) RevealSolution(a *Attempt) error {
	a.SawSolution = true
	return s.Save(a)
}

// Checked is one grade of the attempt: the grader's outcome and the score with hints and diagnosis counted.
type Checked struct {
	Outcome *grader.Outcome
	Score   Score
}

// Check grades the attempt in a child process, waiting up to wait for the cluster to converge (negative: the
// scenario's own settle time), with onProgress called as the grader waits; with disturb, a passing fix is
// then disturbed as the cluster would disturb it and graded again (survive.Run). The grade is kept on the
// attempt and added to the learner's history.
func (s *Session) Check(ctx context.Context, a *Attempt, inst *scenarios.Instance, wait time.Duration, disturb bool, onProgress func(grader.Progress)) (*Checked, error) {
	q := grader.QuestionFor(inst, wait)
	q.Shown = a.Started
	if g := s.guard(inst); g != nil {
		q.Checks = append(q.Checks, grader.Planned{Group: grader.GroupCollateral, Check: *g})
	}
	plan := grader.Plan{Cluster: s.Cluster.Name, Questions: []grader.Question{q}}
	dir := s.CheckDir()
	var out *grader.Outcome
	err := s.Status.Step(fmt.Sprintf("Grading %s (until the cluster converges, at most %s)", inst.ID, plan.Questions[0].Settle), func() error {
		var err error
		out, err = s.grade(ctx, plan, dir, onProgress)
		return err
	})
	if err != nil {
		return nil, err
	}
	if disturb {
		if err := s.survive(ctx, plan, out, []*scenarios.Instance{inst}, dir, nil); err != nil {
			return nil, err
		}
	}
	now := time.Now().UTC()
	score := a.Score(out.Score, out.Max)
	a.LastCheck = &CheckNote{At: now, Passed: out.Passed, Score: score.Final, Max: score.FinalMax}
	if err := s.Save(a); err != nil {
		return nil, err
	}
	s.addHistory(a.Record(history.EventCheck, inst.Stage, now))
	return &Checked{Outcome: out, Score: score}, nil
}

// Stopped is what Stop did.
type Stopped struct {
	Attempt *Attempt
	// Recorded: the attempt went into the history (one that never finished starting was never the learner's
	// to solve).
	Recorded bool
	Spent    time.Duration
	// Residue is what still differs from the baseline after the reset.
	Residue []baseline.Residue
}

// Stop ends the attempt in progress: it records it in the learner's history, then resets the cluster.
func (s *Session) Stop(ctx context.Context, cat *scenarios.Catalog) (*Stopped, error) {
	a, err := s.Current(ctx)
	if err != nil {
		return nil, err
	}
	if a == nil {
		return nil, fmt.Errorf("no scenario is running on cluster %s: nothing to stop (`lab reset` restores the baseline anyway)", s.Cluster.Name)
	}
	now := time.Now().UTC()
	st := &Stopped{Attempt: a, Recorded: a.Phase == PhaseActive, Spent: now.Sub(a.Started).Round(time.Second)}
	if st.Recorded {
		sc, err := cat.Get(a.Scenario)
		if err != nil {
			return nil, err
		}
		s.addHistory(a.Record(history.EventStop, sc.Stage, now))
	}
	if st.Residue, err = s.Reset(ctx); err != nil {
		return nil, err
	}
	return st, nil
}

// addHistory appends to the learner's history. Failing to write it is a warning: the grade stands without it.
func (s *Session) addHistory(recs ...history.Record) {
	if err := history.Add(recs...); err != nil {
		s.Status.Info("warning: could not record your progress: %v", err)
	}
}

// survive disturbs a graded cluster and grades it again after each disturbance, each grade in its own
// directory under dir; step shows each disturbance (nil: the session's status line).
func (s *Session) survive(ctx context.Context, plan grader.Plan, out *grader.Outcome, insts []*scenarios.Instance, dir string, step survive.Step) error {
	if step == nil {
		step = s.Status.Step
	}
	n := 0
	grade := func(ctx context.Context, p grader.Plan) (*grader.Outcome, error) {
		n++
		return s.grade(ctx, p, filepath.Join(dir, fmt.Sprintf("survive-%d", n)), nil)
	}
	env := survive.Env{Clients: s.Cluster.Clients, Nodes: s.Cluster.Nodes}
	return survive.Run(ctx, env, plan, out, insts, grade, step)
}
