package grader

import (
	"strings"
	"testing"
)

func TestUndoFailsTheCheckAndScoresAgain(t *testing.T) {
	out := &Outcome{Passed: true, Score: 6, Max: 6, Questions: []QuestionOutcome{
		{ID: "a", Passed: true, Score: 4, Max: 4, Checks: []CheckOutcome{
			{Name: "ready", Group: GroupChecks, Points: 3, Earned: 3, Passed: true},
			{Name: "labels kept", Group: GroupCollateral, Points: 1, Earned: 1, Passed: true},
		}},
		{ID: "b", Passed: true, Score: 2, Max: 2, Checks: []CheckOutcome{
			{Name: "ready", Group: GroupChecks, Points: 2, Earned: 2, Passed: true},
		}},
	}}
	out.Undo("a", "delete the workloads' Pods in namespace shop", CheckOutcome{Name: "ready", Evidence: "0 of 2 Pods Ready", Stage: "readiness"})
	q := out.Questions[0]
	if q.Passed || q.Score != 1 || q.Max != 4 || q.StoppedAt != "readiness" || q.OverBroad {
		t.Errorf("question a = %+v", q)
	}
	c := q.Checks[0]
	if c.Passed || c.Earned != 0 || !strings.Contains(c.Evidence, `undone by "delete the workloads' Pods in namespace shop": 0 of 2 Pods Ready`) {
		t.Errorf("check = %+v", c)
	}
	if out.Passed || out.Score != 3 || out.Max != 6 {
		t.Errorf("outcome passed %v score %d/%d", out.Passed, out.Score, out.Max)
	}
	if !out.Questions[1].Passed || out.Questions[1].Score != 2 {
		t.Errorf("question b changed: %+v", out.Questions[1])
	}
}
