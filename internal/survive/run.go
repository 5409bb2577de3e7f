package survive

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/cka-lab/lab/grader"
	"github.com/cka-lab/lab/scenarios"
)

// Grade grades a plan again, waiting for the cluster to converge as the first grade did.
type Grade func(ctx context.Context, plan grader.Plan) (*grader.Outcome, error)

// Step runs one disturbance and its grade under a line the learner sees.
type Step func(what string, fn func() error) error

// Run disturbs the cluster after the first grade out of plan: the questions whose task checks all pass
// (insts are their scenario instances) are disturbed one disturbance at a time and graded again after each. A
// check that passed before a disturbance and fails after it is failed in out, with evidence naming the
// disturbance; out.Survive says what each disturbance undid.
func Run(ctx context.Context, env Env, plan grader.Plan, out *grader.Outcome, insts []*scenarios.Instance, grade Grade, step Step) error {
	sub := grader.Plan{Cluster: plan.Cluster}
	var chosen []*scenarios.Instance
	holding := map[string]map[string]bool{}
	for i, q := range out.Questions {
		if !tasksPass(q) {
			continue
		}
		sub.Questions = append(sub.Questions, plan.Questions[i])
		for _, inst := range insts {
			if inst.ID == q.ID {
				chosen = append(chosen, inst)
			}
		}
		holding[q.ID] = map[string]bool{}
		for _, c := range q.Checks {
			holding[q.ID][c.Name] = c.Passed
		}
	}
	if len(chosen) == 0 {
		return nil
	}
	for _, d := range Choose(chosen...) {
		what := d.String()
		var after *grader.Outcome
		err := step("Survive: "+what, func() error {
			did, err := d.Apply(ctx, env)
			if err != nil || !did {
				return err
			}
			after, err = grade(ctx, sub)
			return err
		})
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if after == nil {
			continue
		}
		s := grader.Survived{Disturbance: what, Undid: []string{}}
		for _, q := range after.Questions {
			for _, c := range q.Checks {
				if c.Passed || !holding[q.ID][c.Name] {
					continue
				}
				holding[q.ID][c.Name] = false
				out.Undo(q.ID, what, c)
				// An exam's checks are named with their question, whichever questions were disturbed.
				name := c.Name
				if len(plan.Questions) > 1 {
					name = q.ID + ": " + name
				}
				s.Undid = append(s.Undid, name)
			}
		}
		out.Survive = append(out.Survive, s)
	}
	return nil
}

// tasksPass says whether every check of the task passes: only a fix is put to the test.
func tasksPass(q grader.QuestionOutcome) bool {
	for _, c := range q.Checks {
		if c.Group == grader.GroupChecks && !c.Passed {
			return false
		}
	}
	return true
}

// Describe is the line a learner reads about one disturbance.
func Describe(s grader.Survived) string {
	if len(s.Undid) == 0 {
		return s.Disturbance + ": the fix held"
	}
	quoted := make([]string, len(s.Undid))
	for i, c := range s.Undid {
		quoted[i] = strconv.Quote(c)
	}
	return s.Disturbance + ": undid " + strings.Join(quoted, ", ")
}
