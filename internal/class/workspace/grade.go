package workspace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/cka-lab/lab/grader"
	"github.com/cka-lab/lab/internal/class"
	"github.com/cka-lab/lab/internal/exam"
)

// Grading rounds: a learner's own `lab check` has waited for the namespace to settle before the server is
// asked, so the server only reads it again until two rounds in a row agree, as any flapping check would not.
const (
	gradeRounds = 5
	gradeEvery  = time.Second
)

var errNoNodes = errors.New("the class server reaches no node of the shared cluster")

// Grade evaluates the checks of a class scenario in a learner's namespace with the instructor's credentials:
// the scenario is instantiated for seed and confined to namespace exactly as the learner's lab did, so the
// checks name the learner's objects, and the verdict is the cluster's, not the learner's lab's.
func (p *Provisioner) Grade(ctx context.Context, namespace, scenario string, seed int64) ([]class.CheckEvidence, error) {
	sc, err := p.Catalog.Get(scenario)
	if err != nil {
		return nil, err
	}
	inst, err := exam.Confine(sc, seed, exam.Nodeless{}, namespace)
	if err != nil {
		return nil, err
	}
	q := grader.QuestionFor(inst, 0)
	env := grader.Env{Clients: p.Clients, Nodes: func() ([]nodes.Node, error) { return nil, errNoNodes }, Stage: q.Stage}
	var last []grader.Result
	for round := 0; round < gradeRounds; round++ {
		if round > 0 {
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("grade %s in %s: %w", scenario, namespace, ctx.Err())
			case <-time.After(gradeEvery):
			}
		}
		results := make([]grader.Result, len(q.Checks))
		for i, c := range q.Checks {
			results[i] = grader.Evaluate(ctx, env, c.Check)
		}
		if last != nil && slices.EqualFunc(last, results, func(a, b grader.Result) bool { return a.OK == b.OK }) {
			break
		}
		last = results
	}
	return evidence(q, last), nil
}

// evidence pairs each planned check with its last result.
func evidence(q grader.Question, results []grader.Result) []class.CheckEvidence {
	out := make([]class.CheckEvidence, len(q.Checks))
	for i, c := range q.Checks {
		out[i] = class.CheckEvidence{Name: c.Check.Name, Points: c.Check.Points, Passed: results[i].OK,
			Collateral: c.Group == grader.GroupCollateral, Evidence: results[i].Evidence}
		if !out[i].Passed && out[i].Evidence == "" {
			out[i].Evidence = "failed without evidence"
		}
	}
	return out
}
